// Site rules: what a user pins for a site (per field a CSS selector or a JSON path, a page type); list, create, edit, delete.
import { useState } from 'preact/hooks';
import { api } from '../lib/api.js';
import { Empty, ErrorBox, Field, html, Loading, time, useApi, useTitle } from '../lib/ui.js';

export const RULE_FIELDS = [
  ['title', 'Title'],
  ['price', 'Price'],
  ['list_price', 'List price'],
  ['sku', 'SKU'],
  ['availability', 'Availability'],
  ['image', 'Image'],
];
const PAGE_TYPES = ['product', 'listing', 'article', 'article-list', 'none'];

/** The rule for exactly this host pattern, if one exists. */
export async function ruleFor(hostPattern) {
  const { data } = await api('/site-rules?limit=500');
  return data.find((r) => r.host_pattern === hostPattern) ?? null;
}

/** Pins one field for a host: added to its rule, or a new rule. Answers the saved rule. */
export async function pinField(host, field, where) {
  const existing = await ruleFor(host);
  if (existing === null) return (await api('/site-rules', { method: 'POST', body: { host_pattern: host, fields: { [field]: where } } })).data;
  const body = { host_pattern: existing.host_pattern, fields: { ...existing.fields, [field]: where }, page_type: existing.page_type, note: existing.note };
  return (await api(`/site-rules/${existing.id}`, { method: 'PUT', body })).data;
}

const describe = (where) => (where.selector !== undefined ? html`CSS <code>${where.selector}</code>` : html`JSON <code>${where.json_path}</code>`);

function RuleForm({ rule, onSaved, onCancel }) {
  const [error, setError] = useState(null);
  const prefix = rule ? `edit-${rule.id}` : 'new';
  const submit = async (event) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    const get = (name) => String(form.get(name) ?? '').trim();
    const fields = {};
    for (const [name] of RULE_FIELDS) {
      const value = get(`${name}_value`);
      if (value) fields[name] = get(`${name}_kind`) === 'json_path' ? { json_path: value } : { selector: value };
    }
    const body = { host_pattern: get('host_pattern'), fields, page_type: get('page_type') || null, note: get('note') || null };
    setError(null);
    try {
      await api(rule ? `/site-rules/${rule.id}` : '/site-rules', { method: rule ? 'PUT' : 'POST', body });
      onSaved();
    } catch (failure) {
      setError(failure);
    }
  };
  return html`<form class="card" onSubmit=${submit} aria-labelledby=${`${prefix}-h`}>
    <h2 id=${`${prefix}-h`}>${rule ? `Edit the rule for ${rule.host_pattern}` : 'New site rule'}</h2>
    <p class="muted">Pinned fields win over everything the extractor finds on this site's pages; a field that stops matching shows as a warning on the run and its log.</p>
    <${Field} label="Host or *.host" id=${`${prefix}-host`}>
      <input id=${`${prefix}-host`} name="host_pattern" required placeholder="shop.example" defaultValue=${rule?.host_pattern ?? ''} />
    <//>
    <div class="table-wrap"><table class="rule-fields">
      <caption class="visually-hidden">Pinned fields</caption>
      <thead><tr><th scope="col">Field</th><th scope="col">Kind</th><th scope="col">CSS selector or JSON path</th></tr></thead>
      <tbody>
        ${RULE_FIELDS.map(([name, label]) => {
          const where = rule?.fields?.[name];
          return html`<tr>
            <th scope="row">${label}</th>
            <td><select name=${`${name}_kind`} aria-label=${`${label}: kind`}>
              <option value="selector" selected=${where?.json_path === undefined}>CSS selector</option>
              <option value="json_path" selected=${where?.json_path !== undefined}>JSON path</option>
            </select></td>
            <td><input name=${`${name}_value`} aria-label=${`${label}: selector or path`} defaultValue=${where?.selector ?? where?.json_path ?? ''} /></td>
          </tr>`;
        })}
      </tbody>
    </table></div>
    <div class="row">
      <${Field} label="Page type" id=${`${prefix}-type`}>
        <select id=${`${prefix}-type`} name="page_type">
          <option value="" selected=${!rule?.page_type}>decided by the extractor</option>
          ${PAGE_TYPES.map((t) => html`<option value=${t} selected=${rule?.page_type === t}>${t}</option>`)}
        </select>
      <//>
      <${Field} label="Note" id=${`${prefix}-note`}><input id=${`${prefix}-note`} name="note" defaultValue=${rule?.note ?? ''} /><//>
    </div>
    <${ErrorBox} error=${error} />
    <div class="actions">
      ${onCancel && html`<button type="button" onClick=${onCancel}>Cancel</button>`}
      <button type="submit" class="primary">${rule ? 'Save' : 'Create'}</button>
    </div>
  </form>`;
}

export function SiteRulesScreen() {
  useTitle('Site rules');
  const { data, error, loading, reload } = useApi('/site-rules?limit=500');
  const [editing, setEditing] = useState(null);
  const [actionError, setActionError] = useState(null);
  const remove = async (rule) => {
    if (!confirm(`Delete the site rule for ${rule.host_pattern}?`)) return;
    setActionError(null);
    try {
      await api(`/site-rules/${rule.id}`, { method: 'DELETE' });
      if (editing?.id === rule.id) setEditing(null);
      reload();
    } catch (failure) {
      setActionError(failure);
    }
  };
  return html`
    <h1>Site rules</h1>
    <p class="lead">Where a site's price, title, SKU … are, pinned by you for every scrape, crawl and schedule of it. <a href="/ui/scrape">Explain a page</a> to pin the right candidate in one step.</p>
    <${ErrorBox} error=${error} />
    <${ErrorBox} error=${actionError} />
    ${loading && !data ? html`<${Loading} what="Loading site rules" />` : ''}
    ${data && data.length === 0 ? html`<${Empty}><p>No site rules yet.</p><//>` : ''}
    ${
      data &&
      data.length > 0 &&
      html`<div class="table-wrap"><table class="site-rules">
        <caption class="visually-hidden">Site rules</caption>
        <thead><tr><th scope="col">Host</th><th scope="col">Pinned fields</th><th scope="col">Page type</th><th scope="col">Changed</th><th scope="col">Actions</th></tr></thead>
        <tbody>
          ${data.map(
            (rule) => html`<tr>
              <td>${rule.host_pattern}${rule.note ? html`<div class="muted">${rule.note}</div>` : ''}</td>
              <td><ul class="plain">${RULE_FIELDS.filter(([name]) => rule.fields[name]).map(([name, label]) => html`<li>${label}: ${describe(rule.fields[name])}</li>`)}</ul></td>
              <td>${rule.page_type ?? html`<span class="muted">—</span>`}</td>
              <td>${time(rule.updated_at)}</td>
              <td class="buttons">
                <button type="button" onClick=${() => setEditing(rule)}>Edit<span class="visually-hidden"> ${rule.host_pattern}</span></button>
                <button type="button" class="danger" onClick=${() => remove(rule)}>Delete<span class="visually-hidden"> ${rule.host_pattern}</span></button>
              </td>
            </tr>`,
          )}
        </tbody>
      </table></div>`
    }
    ${
      editing
        ? html`<${RuleForm} key=${editing.id} rule=${editing} onSaved=${() => {
            setEditing(null);
            reload();
          }} onCancel=${() => setEditing(null)} />`
        : html`<${RuleForm} key="new" onSaved=${reload} />`
    }
  `;
}
