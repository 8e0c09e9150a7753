// Jobs: the list, one job with its live progress (Server-Sent Events), cancel.
import { useEffect, useState } from 'preact/hooks';
import { api, ApiError, query } from '../lib/api.js';
import { openStream } from '../lib/sse.js';
import { navigate } from '../lib/router.js';
import { Empty, ErrorBox, Field, html, Loading, Pager, usePaged, RunBadge, RunError, time, useApi, useTitle } from '../lib/ui.js';

const LIMIT = 25;
const STATUSES = ['queued', 'running', 'succeeded', 'failed', 'cancelled'];
const ENDED = new Set(['succeeded', 'failed', 'cancelled']);

/** A job followed live until it ends: a progress bar and its counts; `onEnd` gets the ended job. */
export function JobProgress({ job: initial, onEnd }) {
  const [job, setJob] = useState(initial);
  const [lost, setLost] = useState(false);
  const [streamError, setStreamError] = useState(null);
  useEffect(() => {
    setJob(initial);
    if (ENDED.has(initial.status)) return undefined;
    const close = openStream(`/jobs/${initial.id}/events`, {
      onEvent: (type, data) => {
        setJob(data);
        if (type === 'end') {
          close();
          onEnd?.(data);
        }
      },
      onStatus: (status, problem) => {
        setLost(status === 'reconnecting');
        if (problem) setStreamError(problem);
      },
    });
    return close;
  }, [initial.id]);

  const p = job.progress;
  const known = Math.max(p.pages_discovered, p.pages_done, 1);
  const ended = ENDED.has(job.status);
  return html`<section class="card job-progress" aria-labelledby=${`job-${job.id}-h`}>
    <h2 id=${`job-${job.id}-h`}>
      <a href=${`/ui/jobs/${job.id}`}>${job.kind === 'crawl' ? 'Crawl' : 'Scrape'} job</a> <${RunBadge} status=${job.status} error=${job.error} />
    </h2>
    <p class="url">${job.source_url}</p>
    <progress max=${ended ? 1 : known} value=${ended ? 1 : p.pages_done} aria-label="Pages done"></progress>
    <p role="status" aria-live="polite" class="counts">
      ${p.pages_done} page${p.pages_done === 1 ? '' : 's'} done${job.kind === 'crawl' ? ` of ${p.pages_discovered} found` : ''}${p.pages_failed ? `, ${p.pages_failed} failed` : ''}${p.pages_blocked ? ` (${p.pages_blocked} blocked by the site)` : ''} ·
      ${p.products_found} product${p.products_found === 1 ? '' : 's'} (${p.created} new, ${p.updated} updated)
      ${p.reading_sitemaps && !ended ? ' · reading the sitemaps' : ''}
      ${lost ? ' · connection lost, reconnecting…' : ''}
    </p>
    ${job.kind === 'crawl' && html`<${CrawlLimits} progress=${p} />`}
    <${RunError} error=${job.error} title=${`The job ${job.status}`} />
    ${streamError && html`<${ErrorBox} error=${new ApiError(streamError.status, streamError)} />`}
  </section>`;
}

/** What a crawl's limits cut: the links it found and did not follow (nothing when its rules let it reach everything). */
function CrawlLimits({ progress: p }) {
  const cut = [];
  if (p.links_over_max_pages > 0) cut.push(`${p.links_over_max_pages} link${p.links_over_max_pages === 1 ? '' : 's'} not followed (max_pages was spent)`);
  if (p.links_over_max_depth > 0) cut.push(`${p.links_over_max_depth} link${p.links_over_max_depth === 1 ? '' : 's'} beyond max_depth`);
  return cut.length === 0 ? null : html`<p class="limits">Limits: ${cut.join('; ')}.</p>`;
}

export function JobsScreen({ query: params }) {
  useTitle('Jobs');
  const status = params.get('status') ?? '';
  const { data, error, loading, offset, total } = usePaged('/jobs', params, { status }, LIMIT);
  return html`
    <h1>Jobs</h1>
    <form class="filters" aria-label="Filters" onSubmit=${(e) => e.preventDefault()}>
      <${Field} label="Status" id="status">
        <select id="status" value=${status} onChange=${(e) => navigate(`/jobs${query({ status: e.currentTarget.value })}`)}>
          <option value="">Any</option>
          ${STATUSES.map((s) => html`<option value=${s}>${s}</option>`)}
        </select>
      <//>
      <div class="actions"><a class="button" href="/ui/scrape">New scrape or crawl</a></div>
    </form>
    <${ErrorBox} error=${error} />
    ${loading && !data ? html`<${Loading} what="Loading jobs" />` : ''}
    ${data && data.length === 0 ? html`<${Empty}><p>No jobs${status ? ` that are ${status}` : ''}. <a href="/ui/scrape">Start one</a>.</p><//>` : ''}
    ${
      data &&
      data.length > 0 &&
      html`<div class="table-wrap"><table>
        <thead><tr><th scope="col">Job</th><th scope="col">Status</th><th scope="col" class="num">Pages</th><th scope="col" class="num">Products</th><th scope="col">Created</th></tr></thead>
        <tbody>
          ${data.map(
            (j) => html`<tr>
              <td><a href=${`/ui/jobs/${j.id}`}>${j.kind}</a> <span class="url">${j.source_url}</span></td>
              <td><${RunBadge} status=${j.status} error=${j.error} /></td>
              <td class="num">${j.progress.pages_done}</td>
              <td class="num">${j.progress.products_found}</td>
              <td>${time(j.created_at)}</td>
            </tr>`,
          )}
        </tbody>
      </table></div>
      <${Pager} offset=${offset} limit=${LIMIT} total=${total} onPage=${(at) => navigate(`/jobs${query({ status, offset: at || '' })}`)} />`
    }
  `;
}

export function JobScreen({ params }) {
  const { data: job, error, reload } = useApi(`/jobs/${encodeURIComponent(params.id)}`);
  const [actionError, setActionError] = useState(null);
  useTitle('Job');
  if (error) return html`<h1>Job</h1><${ErrorBox} error=${error} />`;
  if (!job) return html`<${Loading} what="Loading the job" />`;
  const cancel = async () => {
    setActionError(null);
    try {
      await api(`/jobs/${job.id}`, { method: 'DELETE' });
      reload();
    } catch (failure) {
      setActionError(failure);
    }
  };
  return html`
    <p><a href="/ui/jobs">← Jobs</a></p>
    <h1>${job.kind === 'crawl' ? 'Crawl' : 'Scrape'} of <span class="url">${job.source_url}</span></h1>
    <${JobProgress} job=${job} onEnd=${reload} />
    ${!ENDED.has(job.status) && html`<p><button type="button" class="danger" onClick=${cancel}>Cancel the job</button></p>`}
    <${ErrorBox} error=${actionError} />
    <dl class="facts">
      <dt>Created</dt><dd>${time(job.created_at)}</dd>
      <dt>Started</dt><dd>${time(job.started_at)}</dd>
      <dt>Finished</dt><dd>${time(job.finished_at)}</dd>
      <dt>Attempts</dt><dd>${job.attempts}</dd>
      ${job.schedule_id && html`<dt>Schedule</dt><dd><a href="/ui/schedules">${job.schedule_id}</a></dd>`}
      <dt>Logs</dt><dd>${job.log_ids.length === 0 ? 'none yet' : job.log_ids.map((id) => html`<a href=${`/ui/logs/${id}`}>${id.slice(0, 8)}</a> `)}</dd>
    </dl>
    <details><summary>The request</summary><pre>${JSON.stringify(job.request, null, 2)}</pre></details>
  `;
}
