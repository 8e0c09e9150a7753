// Tags (watch lists): every tag with its products and sources, tags on a source URL, and the CSV import of URLs to watch.
import { useState } from 'preact/hooks';
import { api, ApiError, apiKey, query } from '../lib/api.js';
import { Empty, ErrorBox, Field, html, Loading, useApi, useTitle } from '../lib/ui.js';

/** POST a CSV body (the API client sends JSON only). */
async function postCsv(path, csv) {
  const headers = { 'content-type': 'text/csv', accept: 'application/json' };
  if (apiKey()) headers['x-api-key'] = apiKey();
  let response;
  try {
    response = await fetch(path, { method: 'POST', headers, body: csv });
  } catch (error) {
    throw new ApiError(0, { title: 'No answer', detail: `The request to ${path} failed: ${error.message}.` });
  }
  const data = await response.json().catch(() => null);
  if (!response.ok) throw new ApiError(response.status, data ?? {});
  return data;
}

function SourceTagsForm({ onSaved }) {
  const [error, setError] = useState(null);
  const [saved, setSaved] = useState(null);
  const submit = async (event) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    setError(null);
    try {
      const tags = String(form.get('tags') ?? '')
        .split(',')
        .map((t) => t.trim())
        .filter(Boolean);
      const { data } = await api('/source-tags', { method: 'PUT', body: { source: String(form.get('source') ?? '').trim(), tags } });
      setSaved(data);
      onSaved();
    } catch (failure) {
      setError(failure);
    }
  };
  return html`<form class="card" onSubmit=${submit} aria-labelledby="source-tags-h">
    <h2 id="source-tags-h">Tag a source</h2>
    <p class="muted">Every scrape, job, crawl or schedule starting from this URL gives these tags to what it collects; what it collected before gets them now.</p>
    <div class="row">
      <${Field} label="Source URL" id="st-source"><input id="st-source" name="source" type="url" required placeholder="https://shop.example/espresso/" /><//>
      <${Field} label="Tags (comma-separated; empty removes)" id="st-tags"><input id="st-tags" name="tags" placeholder="espresso, kitchen" /><//>
    </div>
    <${ErrorBox} error=${error} />
    ${saved && html`<p role="status">Saved: ${saved.tags.join(', ') || 'no tags'} on ${saved.source}; ${saved.applied} product${saved.applied === 1 ? '' : 's'} and ${saved.applied_articles} article${saved.applied_articles === 1 ? '' : 's'} tagged now.</p>`}
    <div class="actions"><button type="submit" class="primary">Save</button></div>
  </form>`;
}

function ImportForm({ onImported }) {
  const [error, setError] = useState(null);
  const [result, setResult] = useState(null);
  const [busy, setBusy] = useState(false);
  const submit = async (event, dryRun) => {
    const form = event.currentTarget.form ?? event.currentTarget;
    event.preventDefault();
    const data = new FormData(form);
    let csv = String(data.get('csv') ?? '');
    const file = data.get('file');
    if (file && typeof file === 'object' && file.size > 0) csv = await file.text();
    setBusy(true);
    setError(null);
    setResult(null);
    try {
      const answer = await postCsv(
        `/watch-lists/import${query({ tags: String(data.get('tags') ?? '').trim(), every_minutes: String(data.get('every') ?? '').trim(), dry_run: dryRun ? 'true' : '' })}`,
        csv,
      );
      setResult(answer);
      if (!dryRun) onImported();
    } catch (failure) {
      setError(failure);
    } finally {
      setBusy(false);
    }
  };
  return html`<form class="card" onSubmit=${(e) => submit(e, false)} aria-labelledby="import-h">
    <h2 id="import-h">Import URLs to watch</h2>
    <p class="muted">CSV, one URL per line: <code>url,tags,name</code> (tags separated by <code>;</code>), or a header line naming the columns (url, tags, name, every_minutes, cron, timezone, max_pages, use_selenium). Each URL becomes a scheduled scrape whose products get its tags.</p>
    <${Field} label="URLs (CSV)" id="imp-csv"><textarea id="imp-csv" name="csv" rows="6" placeholder=${'url,tags,name\nhttps://shop.example/espresso-machine,espresso;kitchen,Espresso machine'}></textarea><//>
    <div class="row">
      <${Field} label="Or a CSV file" id="imp-file"><input id="imp-file" name="file" type="file" accept=".csv,text/csv" /><//>
      <${Field} label="Tags for every line" id="imp-tags"><input id="imp-tags" name="tags" placeholder="watch-list" /><//>
      <${Field} label="Scrape every (minutes)" id="imp-every"><input id="imp-every" name="every" type="number" min="1" placeholder="1440" /><//>
    </div>
    <${ErrorBox} error=${error} />
    ${
      result &&
      html`<div role="status" class="import-result">
        <p><strong>${result.dry_run ? 'Would create' : 'Created'} ${result.created.length} schedule${result.created.length === 1 ? '' : 's'}; ${result.dry_run ? 'would add' : 'added'} tags to ${result.updated.length} existing.</strong></p>
        <ul class="import-list">${[...result.created, ...result.updated].map((r) => html`<li>line ${r.line}: ${r.url} — ${r.tags.join(', ') || 'no tags'}</li>`)}</ul>
      </div>`
    }
    <div class="actions">
      <button type="button" disabled=${busy} onClick=${(e) => submit(e, true)}>Check only</button>
      <button type="submit" class="primary" disabled=${busy}>Import</button>
    </div>
  </form>`;
}

const plural = (n, noun) => `${n.toLocaleString()} ${noun}${n === 1 ? '' : 's'}`;

export function TagsScreen() {
  useTitle('Tags');
  const { data, error, loading, reload } = useApi('/tags?limit=500');
  const [actionError, setActionError] = useState(null);
  const remove = async (name) => {
    if (!confirm(`Delete the tag "${name}" from every product and source?`)) return;
    setActionError(null);
    try {
      await api(`/tags/${encodeURIComponent(name)}`, { method: 'DELETE' });
      reload();
    } catch (failure) {
      setActionError(failure);
    }
  };
  return html`
    <h1>Tags</h1>
    <p class="lead">Watch lists: tag products and articles, or the sources whose scrapes collect them, then <a href="/ui/rules">alert on a tag</a>.</p>
    <${ErrorBox} error=${error} />
    <${ErrorBox} error=${actionError} />
    ${loading && !data ? html`<${Loading} what="Loading tags" />` : ''}
    ${data && data.length === 0 ? html`<${Empty}><p>No tags yet: tag a product on its screen, tag a source below, or import a list of URLs.</p><//>` : ''}
    ${
      data &&
      data.length > 0 &&
      html`<div class="table-wrap"><table class="tags">
        <caption class="visually-hidden">Tags</caption>
        <thead><tr><th scope="col">Tag</th><th scope="col">Tagged</th><th scope="col">Sources</th><th scope="col">Actions</th></tr></thead>
        <tbody>
          ${data.map(
            (t) => html`<tr>
              <td><a href=${`/ui/products${query({ tag: t.name })}`}>${t.name}</a></td>
              <td>
                <div>${plural(t.products, 'product')}</div>
                ${t.articles === 0 ? '' : html`<div><a href=${`/ui/articles${query({ tag: t.name })}`}>${plural(t.articles, 'article')}<span class="visually-hidden"> tagged ${t.name}</span></a></div>`}
              </td>
              <td>${(t.sources ?? []).length === 0 ? html`<span class="muted">—</span>` : t.sources.map((s) => html`<div class="url">${s}</div>`)}</td>
              <td class="buttons"><button type="button" class="danger" onClick=${() => remove(t.name)}>Delete<span class="visually-hidden"> ${t.name}</span></button></td>
            </tr>`,
          )}
        </tbody>
      </table></div>`
    }
    <${SourceTagsForm} onSaved=${reload} />
    <${ImportForm} onImported=${reload} />
  `;
}
