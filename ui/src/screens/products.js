// Products: search, filters, sort and paging, all in the URL; a row opens the product.
import { query } from '../lib/api.js';
import { navigate } from '../lib/router.js';
import { Badge, Empty, ErrorBox, Field, html, Loading, money, Pager, usePaged, time, useTitle } from '../lib/ui.js';

const LIMIT = 20;
const FILTERS = ['q', 'min_price', 'max_price', 'currency', 'source', 'tag', 'availability', 'changed_since'];
const AVAILABILITY = ['in_stock', 'out_of_stock', 'preorder', 'backorder', 'limited', 'discontinued'];
const SORTS = [
  ['id', 'Oldest first'],
  ['-id', 'Newest first'],
  ['price', 'Price, low to high'],
  ['-price', 'Price, high to low'],
  ['title', 'Title, A to Z'],
  ['-title', 'Title, Z to A'],
];

/** `datetime-local` shows local time without a zone; the API takes ISO 8601. */
const toIso = (local) => (local ? new Date(local).toISOString() : '');
const toLocal = (iso) => {
  if (!iso) return '';
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? '' : new Date(date.getTime() - date.getTimezoneOffset() * 60_000).toISOString().slice(0, 16);
};

export function ProductsScreen({ query: params }) {
  useTitle('Products');
  const sort = params.get('sort') ?? '';
  const filters = Object.fromEntries(FILTERS.map((name) => [name, params.get(name) ?? '']));
  const { data, error, loading, offset, total } = usePaged('/products', params, { ...filters, sort }, LIMIT);
  const filtered = FILTERS.some((name) => filters[name]);

  const go = (changes) => {
    const next = { ...filters, sort, offset: 0, ...changes };
    if (!next.offset) delete next.offset;
    navigate(`/products${query(next)}`);
  };
  const apply = (event) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    const values = Object.fromEntries(FILTERS.map((name) => [name, String(form.get(name) ?? '').trim()]));
    values.changed_since = toIso(values.changed_since);
    go({ ...values, sort: String(form.get('sort') ?? '') });
  };

  // The filter form is uncontrolled, started from the URL (keyed by it): the list arriving re-renders the screen and must not undo what is being chosen.
  return html`
    <h1>Products</h1>
    <form class="filters" onSubmit=${apply} aria-label="Search and filters" key=${params.toString()}>
      <${Field} label="Search" id="q"><input id="q" name="q" type="search" defaultValue=${filters.q} placeholder="Title or description" /><//>
      <${Field} label="Lowest price" id="min_price"><input id="min_price" name="min_price" type="number" min="0" step="any" defaultValue=${filters.min_price} /><//>
      <${Field} label="Highest price" id="max_price"><input id="max_price" name="max_price" type="number" min="0" step="any" defaultValue=${filters.max_price} /><//>
      <${Field} label="Currency" id="currency">
        <input id="currency" name="currency" defaultValue=${filters.currency} maxlength="3" pattern="[A-Z]{3}" placeholder="GBP" autocapitalize="characters" />
      <//>
      <${Field} label="Availability" id="availability">
        <select id="availability" name="availability">
          <option value="">Any</option>
          ${AVAILABILITY.map((a) => html`<option value=${a} selected=${a === filters.availability}>${a.replace(/_/g, ' ')}</option>`)}
        </select>
      <//>
      <${Field} label="Source URL" id="source" hint="Where a scrape started"><input id="source" name="source" type="url" defaultValue=${filters.source} placeholder="https://shop.example/" aria-describedby="source-hint" /><//>
      <${Field} label="Tag" id="tag"><input id="tag" name="tag" defaultValue=${filters.tag} placeholder="watch-list" /><//>
      <${Field} label="Changed since" id="changed_since"><input id="changed_since" name="changed_since" type="datetime-local" defaultValue=${toLocal(filters.changed_since)} /><//>
      <${Field} label="Sort" id="sort">
        <select id="sort" name="sort">
          <option value="">Best match / oldest first</option>
          ${SORTS.map(([value, label]) => html`<option value=${value} selected=${value === sort}>${label}</option>`)}
        </select>
      <//>
      <div class="actions">
        <button type="submit" class="primary">Apply</button>
        ${filtered && html`<button type="button" onClick=${() => navigate('/products', { replace: true })}>Clear filters</button>`}
      </div>
    </form>
    <${ErrorBox} error=${error} />
    ${loading && !data ? html`<${Loading} what="Loading products" />` : ''}
    ${
      data && data.length === 0
        ? html`<${Empty}>
          ${
            filtered
              ? html`<p>No product matches these filters.</p>`
              : html`<p>No products yet. <a href="/ui/scrape">Scrape a page</a> to collect some, or create one through the <a href="/docs">API</a>.</p>`
          }
        <//>`
        : ''
    }
    ${
      data &&
      data.length > 0 &&
      html`<p class="muted" aria-live="polite">${total?.toLocaleString()} product${total === 1 ? '' : 's'}</p>
      <div class="table-wrap">
        <table class="products">
          <caption class="visually-hidden">Products</caption>
          <thead>
            <tr><th scope="col">Product</th><th scope="col" class="num">Price</th><th scope="col" class="num">List price</th><th scope="col">Availability</th><th scope="col">Updated</th></tr>
          </thead>
          <tbody>
            ${data.map(
              (p) => html`<tr>
                <td><a href=${`/ui/products/${p.id}`}>${p.title}</a>${p.brand ? html` <span class="muted">${p.brand}</span>` : ''}</td>
                <td class="num">${money(p.price, p.currency)}</td>
                <td class="num">${p.list_price === null ? '' : html`<s>${money(p.list_price, p.currency)}</s>`}</td>
                <td><${Badge} value=${p.availability} /></td>
                <td>${time(p.updated_at)}</td>
              </tr>`,
            )}
          </tbody>
        </table>
      </div>
      <${Pager} offset=${offset} limit=${LIMIT} total=${total} onPage=${(at) => go({ offset: at })} />`
    }
  `;
}
