// One product: its fields with where each came from, its price history as a chart and a table, its events.
import { query } from '../lib/api.js';
import { PriceChart } from '../lib/chart.js';
import { Badge, Empty, ErrorBox, html, isolated, Loading, money, time, useApi, useTitle } from '../lib/ui.js';
import { AlertMe } from './product-alerts.js';
import { WatchTags } from './watch-tags.js';

const FIELDS = ['title', 'price', 'list_price', 'currency', 'availability', 'sku', 'gtin', 'brand', 'description', 'image_url', 'source_url'];

function describeEvent(event, currency) {
  const d = event.data;
  switch (event.type) {
    case 'price.changed':
      return `${money(d.old, d.currency ?? currency)} → ${money(d.new, d.currency ?? currency)}${d.change_percent === null || d.change_percent === undefined ? '' : ` (${d.change_percent > 0 ? '+' : ''}${d.change_percent} %)`}`;
    case 'availability.changed':
      return `${String(d.old ?? 'unknown').replace(/_/g, ' ')} → ${String(d.new ?? 'unknown').replace(/_/g, ' ')}${d.back_in_stock ? ' (back in stock)' : ''}`;
    case 'product.gone':
      return `not seen by ${d.missed_runs} runs of its source in a row`;
    case 'product.created':
      return `first seen at ${money(d.price, d.currency ?? currency)}`;
    case 'article.created':
      return `“${isolated(d.title)}” first stored${d.has_body ? '' : ' (a listing entry)'}`;
    case 'article.updated':
      return `“${isolated(d.title)}”: ${d.body_filled ? 'its text was read' : `${(d.changed ?? []).join(' and ')} changed`}`;
    default:
      return '';
  }
}

export function EventList({ events, currency, showProduct = false }) {
  return html`<ol class="events" aria-label="Events, newest first">
    ${events.map(
      (e) => html`<li key=${e.id} data-event-id=${e.id}>
        <${Badge} value=${e.type} />
        ${showProduct && e.product_id !== null ? html` <a href=${`/ui/products/${e.product_id}`}>product ${e.product_id}</a>` : ''}
        ${showProduct && e.article_id ? html` <a href=${`/ui/articles/${e.article_id}`}>article ${e.article_id}</a>` : ''}
        <span> ${describeEvent(e, currency)}</span>
        <span class="muted"> · ${time(e.created_at)}${e.data?.via === 'api' ? ' · set through the API' : ''}</span>
      </li>`,
    )}
  </ol>`;
}

/** Gone, and since when; or its availability. A gone product's availability is what its source said before it went, not what it is now. */
function StockBadge({ product }) {
  return product.gone_at ? html`<${Badge} value="gone" /> since ${time(product.gone_at)}` : html`<${Badge} value=${product.availability} />`;
}

export function ProductScreen({ params }) {
  const { id } = params;
  const product = useApi(`/products/${encodeURIComponent(id)}`);
  const history = useApi(`/products/${encodeURIComponent(id)}/history${query({ limit: 1000 })}`);
  const events = useApi(`/events${query({ product_id: id, limit: 1000 })}`);
  const p = product.data;
  useTitle(p ? p.title : 'Product');

  if (product.error) return html`<h1>Product ${id}</h1><${ErrorBox} error=${product.error} />`;
  if (!p) return html`<${Loading} what="Loading the product" />`;
  const fields = p.provenance?.fields ?? {};
  const points = history.data?.points ?? [];
  const summary = history.data?.summary;

  return html`
    <p><a href="/ui/products">← Products</a></p>
    <h1>${p.title}</h1>
    <p class="lead">
      <strong class="price">${money(p.price, p.currency)}</strong>
      ${p.list_price !== null ? html` <s>${money(p.list_price, p.currency)}</s>` : ''}
      <${StockBadge} product=${p} />
      ${p.source_url ? html` · <a href=${p.source_url} rel="noopener noreferrer" target="_blank">Open the source page ↗</a>` : ''}
    </p>

    <${WatchTags} kind="products" id=${p.id} initial=${p.tags} />
    <${AlertMe} product=${p} />

    <section aria-labelledby="history-h">
      <h2 id="history-h">Price history</h2>
      <${ErrorBox} error=${history.error} />
      ${history.loading && !history.data ? html`<${Loading} what="Loading the history" />` : ''}
      ${history.data && points.length === 0 ? html`<${Empty}><p>No history yet.</p><//>` : ''}
      ${
        points.length > 0 &&
        html`<${PriceChart} points=${points} currency=${p.currency} />
        <p class="muted">
          ${summary.points} state${summary.points === 1 ? '' : 's'} · lowest ${money(summary.lowest, p.currency)} · highest ${money(summary.highest, p.currency)}
          · first seen ${time(summary.first_seen_at)}${summary.last_change_at ? html` · last change ${time(summary.last_change_at)}` : ''}
        </p>
        <details>
          <summary>The points as a table</summary>
          <div class="table-wrap">
            <table class="history">
              <thead><tr><th scope="col">From</th><th scope="col">Until</th><th scope="col" class="num">Price</th><th scope="col" class="num">List price</th><th scope="col">Availability</th><th scope="col">Seen by</th></tr></thead>
              <tbody>
                ${points.map(
                  (pt) => html`<tr>
                    <td>${time(pt.first_seen_at)}</td><td>${time(pt.last_seen_at)}</td>
                    <td class="num">${money(pt.price, pt.currency)}</td><td class="num">${pt.list_price === null ? '' : money(pt.list_price, pt.currency)}</td>
                    <td><${Badge} value=${pt.availability} /></td>
                    <td>${pt.source === 'api' ? 'the API' : pt.last_run ? html`<a href=${`/ui/logs/${pt.last_run}`}>run</a>` : 'a scrape'}</td>
                  </tr>`,
                )}
              </tbody>
            </table>
          </div>
        </details>`
      }
    </section>

    <section aria-labelledby="fields-h">
      <h2 id="fields-h">Fields and where they came from</h2>
      ${p.provenance ? html`<p class="muted">Read from <a href=${p.provenance.page_url} rel="noopener noreferrer" target="_blank">${p.provenance.page_url}</a>, a page classified as <em>${p.provenance.page_type}</em>.</p>` : html`<p class="muted">Made through the API: no page provenance.</p>`}
      <div class="table-wrap">
        <table class="fields">
          <thead><tr><th scope="col">Field</th><th scope="col">Value</th><th scope="col">Source</th><th scope="col">Where on the page</th></tr></thead>
          <tbody>
            ${FIELDS.map(
              (name) => html`<tr>
                <th scope="row">${name.replace(/_/g, ' ')}</th>
                <td class="value">${p[name] === null || p[name] === undefined ? html`<span class="muted">—</span>` : String(p[name])}</td>
                <td>${fields[name]?.source ?? ''}</td>
                <td><code>${fields[name]?.locator ?? ''}</code></td>
              </tr>`,
            )}
            <tr><th scope="row">last seen</th><td>${time(p.last_seen_at)}</td><td></td><td></td></tr>
          </tbody>
        </table>
      </div>
    </section>

    <section aria-labelledby="events-h">
      <h2 id="events-h">Events</h2>
      <${ErrorBox} error=${events.error} />
      ${events.data && events.data.length === 0 ? html`<${Empty}><p>No events for this product.</p><//>` : ''}
      ${events.data && events.data.length > 0 && html`<${EventList} events=${[...events.data].reverse()} currency=${p.currency} />`}
    </section>
  `;
}
