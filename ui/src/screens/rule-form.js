// The alert rule form, shared by the Rules screen and a product's "Alert me": scope, condition with its settings, cool-down, digest, channels; Preview and Create.
import { useState } from 'preact/hooks';
import { api } from '../lib/api.js';
import { Empty, ErrorBox, Field, html, money, time, useApi } from '../lib/ui.js';

export const CONDITIONS = [
  ['price_at_or_below', 'Price at or below a target'],
  ['price_drop', 'Price dropped by at least…'],
  ['lowest_in_days', 'Lowest price in N days'],
  ['back_in_stock', 'Back in stock'],
  ['out_of_stock', 'Out of stock'],
  ['availability_changed', 'Any availability change'],
  ['price_changed', 'Any price change'],
  ['product_gone', 'Product gone from its source'],
  ['suspicious_discount', 'Suspicious discount (a "was" price the history does not support)'],
];
const SCOPES = [
  ['all', 'Every product'],
  ['product', 'One product'],
  ['tag', 'Products with a tag'],
  ['source', 'Products from a source URL'],
  ['site', 'Products from a site'],
];
const SCOPE_LABELS = { product: 'Product id', tag: 'Tag', source: 'Source URL', site: 'Site (host name)' };

/** What a rule watches and when it fires, in words. */
export function describeRule(rule) {
  const c = rule.condition;
  const label = (CONDITIONS.find(([type]) => type === c.type) ?? [c.type, c.type])[1];
  const detail =
    c.type === 'price_at_or_below'
      ? `: ${money(c.target, c.currency)}`
      : c.type === 'price_drop'
        ? ` ${[c.min_percent ? `${c.min_percent} %` : '', c.min_amount ? money(c.min_amount) : ''].filter(Boolean).join(' or ')} from the ${c.baseline === 'highest' ? `highest of ${c.days ?? 30} days` : 'previous price'}`
        : c.type === 'lowest_in_days'
          ? ` (${c.days} days)`
          : '';
  const s = rule.scope;
  const scope = s.type === 'all' ? 'every product' : s.type === 'product' ? `product ${s.product_id}` : `${s.type} ${s[s.type]}`;
  return { condition: `${label.replace(/…$/, '')}${detail}`, scope };
}

function conditionOf(type, get) {
  const number = (name) => (get(name) === '' ? undefined : Number(get(name)));
  switch (type) {
    case 'price_at_or_below':
      return { type, target: number('target'), ...(get('currency') ? { currency: get('currency').toUpperCase() } : {}) };
    case 'price_drop': {
      const baseline = get('baseline') || 'previous';
      return {
        type,
        baseline,
        ...(number('min_percent') === undefined ? {} : { min_percent: number('min_percent') }),
        ...(number('min_amount') === undefined ? {} : { min_amount: number('min_amount') }),
        ...(baseline === 'highest' && number('days') !== undefined ? { days: number('days') } : {}),
      };
    }
    case 'lowest_in_days':
      return { type, days: number('days') ?? 30 };
    case 'suspicious_discount':
      return { type, ...(number('days') === undefined ? {} : { days: number('days') }) };
    default:
      return { type };
  }
}

function scopeOf(type, value) {
  if (type === 'all') return { type };
  if (type === 'product') return { type, product_id: Number(value) };
  return { type, [type]: value };
}

function Preview({ preview }) {
  if (!preview) return null;
  return html`<section class="preview" aria-labelledby="preview-h">
    <h3 id="preview-h">Preview</h3>
    <p role="status"><strong>${preview.summary}</strong></p>
    ${
      preview.firings.length > 0 &&
      html`<ul class="preview-list">
        ${preview.firings.slice(0, 10).map((f) => html`<li><a href=${`/ui/products/${f.product_id}`}>${f.title}</a> · ${time(f.event_at)} · ${f.why}</li>`)}
      </ul>`
    }
  </section>`;
}

/**
 * `initial` prefills the form (a product's "Alert me"): name, scope {type, value}, condition.
 * `onCreated(rule)` is told the stored rule.
 */
export function RuleForm({ initial = {}, onCreated, idPrefix = 'r', title = 'New rule' }) {
  const channels = useApi('/channels?limit=500');
  const [scopeType, setScopeType] = useState(initial.scope?.type ?? 'all');
  const [conditionType, setConditionType] = useState(initial.condition?.type ?? 'price_at_or_below');
  const [baseline, setBaseline] = useState(initial.condition?.baseline ?? 'previous');
  const [error, setError] = useState(null);
  const [preview, setPreview] = useState(null);
  const [busy, setBusy] = useState(false);
  const id = (name) => `${idPrefix}-${name}`;
  const c = initial.condition ?? {};

  const body = (form) => {
    const data = new FormData(form);
    const get = (name) => String(data.get(name) ?? '').trim();
    return {
      name: get('name'),
      scope: scopeOf(scopeType, get('scope_value')),
      condition: conditionOf(conditionType, get),
      cooldown_minutes: get('cooldown') === '' ? 60 : Number(get('cooldown')),
      digest: get('digest') || 'immediate',
      channel_ids: data.getAll('channel').map(String),
    };
  };
  const send = async (event, what) => {
    const form = event.currentTarget.form ?? event.currentTarget;
    event.preventDefault();
    setBusy(true);
    setError(null);
    try {
      if (what === 'preview') {
        setPreview((await api('/alert-rules/preview?days=30', { method: 'POST', body: body(form) })).data);
      } else {
        const { data } = await api('/alert-rules', { method: 'POST', body: body(form) });
        setPreview(null);
        onCreated?.(data);
      }
    } catch (failure) {
      setError(failure);
    } finally {
      setBusy(false);
    }
  };

  const number = (name, label, value, extra = {}) =>
    html`<${Field} label=${label} id=${id(name)}><input id=${id(name)} name=${name} type="number" min="0" step="any" defaultValue=${value ?? ''} ...${extra} /><//>`;
  return html`<form class="card rule-form" onSubmit=${(e) => send(e, 'create')} aria-labelledby=${id('h')}>
    <h2 id=${id('h')}>${title}</h2>
    <div class="row">
      <${Field} label="Name" id=${id('name')}><input id=${id('name')} name="name" required maxlength="200" defaultValue=${initial.name ?? ''} placeholder="Espresso machine under 200 €" /><//>
      <${Field} label="Watch" id=${id('scope')}>
        <select id=${id('scope')} value=${scopeType} onChange=${(e) => setScopeType(e.currentTarget.value)}>
          ${SCOPES.map(([value, label]) => html`<option value=${value}>${label}</option>`)}
        </select>
      <//>
      ${
        scopeType !== 'all' &&
        html`<${Field} label=${SCOPE_LABELS[scopeType]} id=${id('scope-value')}>
          <input id=${id('scope-value')} name="scope_value" required defaultValue=${initial.scope?.value ?? ''} type=${scopeType === 'product' ? 'number' : scopeType === 'source' ? 'url' : 'text'} />
        <//>`
      }
    </div>
    <div class="row">
      <${Field} label="When" id=${id('condition')}>
        <select id=${id('condition')} value=${conditionType} onChange=${(e) => setConditionType(e.currentTarget.value)}>
          ${CONDITIONS.map(([value, label]) => html`<option value=${value}>${label}</option>`)}
        </select>
      <//>
      ${
        conditionType === 'price_at_or_below' &&
        html`${number('target', 'Target price', c.target, { required: true })}
        <${Field} label="Currency (optional)" id=${id('currency')}><input id=${id('currency')} name="currency" maxlength="3" defaultValue=${c.currency ?? ''} placeholder="EUR" /><//>`
      }
      ${
        conditionType === 'price_drop' &&
        html`${number('min_percent', 'At least %', c.min_percent)} ${number('min_amount', 'Or at least (amount)', c.min_amount)}
        <${Field} label="Compared with" id=${id('baseline')}>
          <select id=${id('baseline')} name="baseline" value=${baseline} onChange=${(e) => setBaseline(e.currentTarget.value)}>
            <option value="previous">the previous price</option><option value="highest">the highest price of N days</option>
          </select>
        <//>
        ${baseline === 'highest' && number('days', 'Days', c.days ?? 30)}`
      }
      ${conditionType === 'lowest_in_days' && number('days', 'Days', c.days ?? 90, { min: 1, required: true })}
      ${conditionType === 'suspicious_discount' && number('days', 'Look-back days (30 or more)', c.days ?? 30, { min: 30 })}
    </div>
    <div class="row">
      ${number('cooldown', 'Cool-down (minutes)', initial.cooldown_minutes ?? 60, { step: '1' })}
      <${Field} label="Send" id=${id('digest')}>
        <select id=${id('digest')} name="digest"><option value="immediate">at once</option><option value="daily">in a daily digest</option><option value="weekly">in a weekly digest</option></select>
      <//>
    </div>
    <fieldset>
      <legend>Channels</legend>
      ${channels.data && channels.data.length === 0 ? html`<${Empty}><p>No channels yet: <a href="/ui/channels">add one</a> to be told; without one, firings are only recorded.</p><//>` : ''}
      <ul class="checks">
        ${(channels.data ?? []).map(
          (ch) =>
            html`<li><label><input type="checkbox" name="channel" value=${ch.id} /> ${ch.name} <span class="muted">(${ch.kind}${ch.enabled ? '' : ', disabled'})</span></label></li>`,
        )}
      </ul>
    </fieldset>
    <${ErrorBox} error=${error} />
    <${Preview} preview=${preview} />
    <div class="actions">
      <button type="button" disabled=${busy} onClick=${(e) => send(e, 'preview')}>Preview</button>
      <button type="submit" class="primary" disabled=${busy}>Create rule</button>
    </div>
  </form>`;
}
