// On a product's screen: its tags (add, remove) and "Alert me" with the common conditions prefilled from its price and stock.
import { useState } from 'preact/hooks';
import { api } from '../lib/api.js';
import { ErrorBox, html, money, useApi } from '../lib/ui.js';
import { RuleForm } from './rule-form.js';

export function ProductTags({ product }) {
  const { data, reload } = useApi(`/products/${product.id}/tags`);
  const [error, setError] = useState(null);
  const tags = data?.tags ?? product.tags ?? [];
  const change = async (method, path, body) => {
    setError(null);
    try {
      await api(path, { method, body });
      reload();
      return true;
    } catch (failure) {
      setError(failure);
      return false;
    }
  };
  const add = async (event) => {
    event.preventDefault();
    const form = event.currentTarget;
    const names = String(new FormData(form).get('tag') ?? '')
      .split(',')
      .map((t) => t.trim())
      .filter(Boolean);
    if (names.length > 0 && (await change('POST', `/products/${product.id}/tags`, { tags: names }))) form.reset();
  };
  return html`<section aria-labelledby="tags-h">
    <h2 id="tags-h">Tags</h2>
    <ul class="tag-list">
      ${tags.length === 0 ? html`<li class="muted">No tags.</li>` : ''}
      ${tags.map(
        (t) => html`<li class="tag">
          <a href=${`/ui/products?tag=${encodeURIComponent(t)}`}>${t}</a>
          <button type="button" class="small" onClick=${() => change('DELETE', `/products/${product.id}/tags/${encodeURIComponent(t)}`)}>Remove<span class="visually-hidden"> tag ${t}</span></button>
        </li>`,
      )}
    </ul>
    <form class="inline" onSubmit=${add}>
      <label for="add-tag">Add tags (comma-separated)</label>
      <input id="add-tag" name="tag" placeholder="watch-list" />
      <button type="submit">Add</button>
    </form>
    <${ErrorBox} error=${error} />
  </section>`;
}

/** The conditions people ask for most, prefilled from what the product shows now. */
function presets(p) {
  const below = p.price === null ? undefined : Math.floor(p.price * 0.9 * 100) / 100;
  const list = [
    ['price_at_or_below', `Price at or below ${below === undefined ? 'a target' : money(below, p.currency)}`, { type: 'price_at_or_below', target: below }],
    ['price_drop', 'Price drops by 10 %', { type: 'price_drop', baseline: 'previous', min_percent: 10 }],
    ['lowest_in_days', 'Lowest price in 90 days', { type: 'lowest_in_days', days: 90 }],
  ];
  if (p.availability === 'out_of_stock' || p.availability === 'discontinued') list.unshift(['back_in_stock', 'Back in stock', { type: 'back_in_stock' }]);
  else list.push(['out_of_stock', 'Out of stock', { type: 'out_of_stock' }]);
  list.push(['suspicious_discount', 'A "was" price that is not honest', { type: 'suspicious_discount', days: 30 }]);
  return list;
}

export function AlertMe({ product }) {
  const options = presets(product);
  const [chosen, setChosen] = useState(null);
  const [created, setCreated] = useState(null);
  const preset = options.find(([id]) => id === chosen);
  return html`<section aria-labelledby="alert-me-h">
    <h2 id="alert-me-h">Alert me</h2>
    <div class="presets" role="group" aria-label="Common alerts for this product">
      ${options.map(([id, label]) => html`<button type="button" aria-pressed=${chosen === id} onClick=${() => setChosen(id)}>${label}</button>`)}
    </div>
    ${created && html`<p role="status">Rule "${created.name}" created. <a href="/ui/rules">See the rules</a>.</p>`}
    ${
      preset &&
      html`<${RuleForm}
        key=${chosen}
        idPrefix="am"
        title=${`Alert me: ${preset[1]}`}
        initial=${{ name: `${product.title.slice(0, 120)}: ${preset[1]}`, scope: { type: 'product', value: product.id }, condition: preset[2], cooldown_minutes: 60 }}
        onCreated=${(rule) => {
          setCreated(rule);
          setChosen(null);
        }}
      />`
    }
  </section>`;
}
