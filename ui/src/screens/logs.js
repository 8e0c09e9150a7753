// Logs: every scrape run's log document, filtered by status; one log raw.
import { query } from '../lib/api.js';
import { navigate } from '../lib/router.js';
import { Badge, Empty, ErrorBox, Field, html, Loading, Pager, usePaged, RunBadge, RunError, time, useApi, useTitle } from '../lib/ui.js';

const LIMIT = 25;

export function LogsScreen({ query: params }) {
  useTitle('Logs');
  const status = params.get('status') ?? '';
  const { data, error, loading, offset, total } = usePaged('/scrape-logs', params, { status }, LIMIT);
  return html`
    <h1>Scrape logs</h1>
    <form class="filters" aria-label="Filters" onSubmit=${(e) => e.preventDefault()}>
      <${Field} label="Status" id="log-status">
        <select id="log-status" value=${status} onChange=${(e) => navigate(`/logs${query({ status: e.currentTarget.value })}`)}>
          <option value="">Any</option>
          <option value="running">running</option>
          <option value="succeeded">succeeded</option>
          <option value="failed">failed</option>
          <option value="cancelled">cancelled</option>
        </select>
      <//>
    </form>
    <${ErrorBox} error=${error} />
    ${loading && !data ? html`<${Loading} what="Loading logs" />` : ''}
    ${data && data.length === 0 ? html`<${Empty}><p>No scrape logs${status ? ` that are ${status}` : ''}. Every scrape run writes one, failed ones included.</p><//>` : ''}
    ${
      data &&
      data.length > 0 &&
      html`<div class="table-wrap"><table>
        <thead><tr><th scope="col">Started</th><th scope="col">Status</th><th scope="col">Source</th><th scope="col">Mode</th><th scope="col" class="num">Products</th><th scope="col" class="num">ms</th></tr></thead>
        <tbody>
          ${data.map(
            (log) => html`<tr>
              <td><a href=${`/ui/logs/${log.id}`}>${time(log.started_at)}</a></td>
              <td><${RunBadge} status=${log.status} error=${log.error} /></td>
              <td class="url">${log.source_url ?? '—'}</td>
              <td>${log.mode}</td>
              <td class="num">${log.count}</td>
              <td class="num">${log.duration_ms === null ? '…' : Math.round(log.duration_ms)}</td>
            </tr>`,
          )}
        </tbody>
      </table></div>
      <${Pager} offset=${offset} limit=${LIMIT} total=${total} onPage=${(at) => navigate(`/logs${query({ status, offset: at || '' })}`)} />`
    }
  `;
}

export function LogScreen({ params }) {
  const { data: log, error } = useApi(`/scrape-logs/${encodeURIComponent(params.id)}`);
  useTitle('Scrape log');
  if (error) return html`<p><a href="/ui/logs">← Logs</a></p><h1>Scrape log</h1><${ErrorBox} error=${error} />`;
  if (!log) return html`<${Loading} what="Loading the log" />`;
  return html`
    <p><a href="/ui/logs">← Logs</a></p>
    <h1>Scrape log <${RunBadge} status=${log.status} error=${log.error} /></h1>
    <dl class="facts">
      <dt>Source</dt><dd class="url">${log.source_url ?? '—'}</dd>
      <dt>Started</dt><dd>${time(log.started_at)}</dd>
      <dt>Took</dt><dd>${log.duration_ms === null ? 'still running' : `${Math.round(log.duration_ms)} ms`}, ${log.pages} page${log.pages === 1 ? '' : 's'}</dd>
      <dt>Products</dt><dd>${log.count}${log.created !== undefined ? ` (${log.created} new, ${log.updated} updated)` : ''}</dd>
      ${log.job_id && html`<dt>Job</dt><dd><a href=${`/ui/jobs/${log.job_id}`}>${log.job_id}</a></dd>`}
    </dl>
    <${RunError} error=${log.error} title="The run failed" />
    <${BlockedPages} pages=${log.failed_pages} />
    <h2>The raw document</h2>
    <pre class="raw" tabindex="0" aria-label="The log document as JSON">${JSON.stringify(log, null, 2)}</pre>
  `;
}

/** A crawl's pages the site answered with a wall, each with what it was. */
function BlockedPages({ pages }) {
  const blocked = (pages ?? []).filter((page) => page.error?.blocked);
  if (blocked.length === 0) return null;
  return html`<section aria-labelledby="blocked-pages-h">
    <h2 id="blocked-pages-h">Pages the site blocked (${blocked.length})</h2>
    <ul class="blocked-pages">
      ${blocked.map((page) => html`<li><span class="url">${page.url}</span> <${Badge} value=${page.error.blocked.kind} /> <span class="muted">${page.error.blocked.signal}</span></li>`)}
    </ul>
  </section>`;
}
