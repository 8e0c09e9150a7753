// Alerts: the history of firings (newest first, paged by cursor) with each delivery's outcome; the tabs to rules and channels.
import { query } from '../lib/api.js';
import { navigate } from '../lib/router.js';
import { Badge, Empty, ErrorBox, html, Loading, money, time, useApi, useTitle } from '../lib/ui.js';

const LIMIT = 25;

export function AlertsNav({ current }) {
  const tabs = [
    ['history', '/ui/alerts', 'History'],
    ['rules', '/ui/rules', 'Rules'],
    ['channels', '/ui/channels', 'Channels'],
  ];
  return html`<nav class="tabs" aria-label="Alerts">
    <ul class="tabs-list">
      ${tabs.map(
        ([id, href, label]) =>
          html`<li><a href=${href} class=${current === id ? 'tabs-link tabs-current' : 'tabs-link'} aria-current=${current === id ? 'page' : undefined}>${label}</a></li>`,
      )}
    </ul>
  </nav>`;
}

function values(state) {
  if (!state) return '—';
  const price = state.price === null ? '' : money(state.price, state.currency);
  const stock = state.availability ? state.availability.replace(/_/g, ' ') : '';
  return [price, stock].filter(Boolean).join(', ') || '—';
}

export function Deliveries({ deliveries }) {
  if (deliveries.length === 0) return html`<span class="muted">not sent (no channel, or waiting for its digest)</span>`;
  return html`<ul class="deliveries">
    ${deliveries.map(
      (d) => html`<li>
        <${Badge} value=${d.status} /> ${d.channel_name}${d.digest ? html` <span class="muted">(digest)</span>` : ''}
        <span class="muted"> · ${d.attempts} attempt${d.attempts === 1 ? '' : 's'}${d.response_status ? ` · ${d.response_status}` : ''}</span>
        ${d.error ? html`<div class="delivery-error">${d.error}</div>` : ''}
        ${d.next_attempt_at ? html`<div class="muted">next attempt ${time(d.next_attempt_at)}</div>` : ''}
      </li>`,
    )}
  </ul>`;
}

export function AlertsScreen({ query: params }) {
  useTitle('Alerts');
  const before = params.get('before') ?? '';
  const { data, headers, error, loading } = useApi(`/alerts${query({ limit: LIMIT, before })}`);
  const total = headers ? Number(headers.get('x-total-count')) : undefined;
  return html`
    <h1>Alerts</h1>
    <${AlertsNav} current="history" />
    <${ErrorBox} error=${error} />
    ${loading && !data ? html`<${Loading} what="Loading alerts" />` : ''}
    ${data && data.length === 0 ? html`<${Empty}><p>${before ? 'No older alerts.' : html`No alert has fired yet. <a href="/ui/rules">Create a rule</a>, or use "Alert me" on a product.`}</p><//>` : ''}
    ${
      data &&
      data.length > 0 &&
      html`<p class="muted">${total?.toLocaleString()} alert${total === 1 ? '' : 's'} in all</p>
      <div class="table-wrap">
        <table class="alerts">
          <caption class="visually-hidden">Alerts, newest first</caption>
          <thead><tr><th scope="col">When</th><th scope="col">Product</th><th scope="col">Rule</th><th scope="col">Before → after</th><th scope="col">Deliveries</th></tr></thead>
          <tbody>
            ${data.map(
              (a) => html`<tr data-alert-id=${a.id}>
                <td>${time(a.fired_at)}</td>
                <td>${a.product.id === null ? a.product.title : html`<a href=${`/ui/products/${a.product.id}`}>${a.product.title}</a>`}<div class="muted why">${a.why}</div></td>
                <td>${a.rule.name} <${Badge} value=${a.rule.condition} /></td>
                <td>${values(a.before)} → ${values(a.after)}</td>
                <td><${Deliveries} deliveries=${a.deliveries} /></td>
              </tr>`,
            )}
          </tbody>
        </table>
      </div>
      <nav class="pager" aria-label="Pages">
        <button type="button" disabled=${!before} onClick=${() => navigate('/alerts')}>← Newest</button>
        <button type="button" disabled=${data.length < LIMIT} onClick=${() => navigate(`/alerts${query({ before: data[data.length - 1].id })}`)}>Older →</button>
      </nav>`
    }
  `;
}
