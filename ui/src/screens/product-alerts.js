// On a product's screen: "Alert me" with the common conditions prefilled from its price and stock.
import { useState } from 'preact/hooks';
import { html, money } from '../lib/ui.js';
import { RuleForm } from './rule-form.js';

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
