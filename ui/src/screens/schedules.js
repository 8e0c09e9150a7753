// Schedules: recurring jobs; create, pause and resume, run now, delete.
import { useState } from 'preact/hooks';
import { api, query } from '../lib/api.js';
import { navigate } from '../lib/router.js';
import { Badge, Empty, ErrorBox, Field, html, Loading, Pager, usePaged, time, useTitle } from '../lib/ui.js';

const LIMIT = 25;

function CreateSchedule({ onCreated }) {
  const [error, setError] = useState(null);
  const [busy, setBusy] = useState(false);
  const submit = async (event) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    const get = (name) => String(form.get(name) ?? '').trim();
    const body = { job: {} };
    if (get('name')) body.name = get('name');
    if (get('url')) body.job.url = get('url');
    if (get('max_pages')) body.job.max_pages = Number(get('max_pages'));
    if (get('when') === 'cron') body.cron = get('cron');
    else body.every_minutes = Number(get('every_minutes'));
    if (get('timezone')) body.timezone = get('timezone');
    setBusy(true);
    setError(null);
    try {
      await api('/schedules', { method: 'POST', body });
      event.currentTarget?.reset?.();
      onCreated();
    } catch (failure) {
      setError(failure);
    } finally {
      setBusy(false);
    }
  };
  return html`<form class="card schedule-form" onSubmit=${submit} aria-labelledby="new-schedule-h">
    <h2 id="new-schedule-h">New schedule</h2>
    <div class="row">
      <${Field} label="Name" id="s-name"><input id="s-name" name="name" placeholder="Lamps every morning" /><//>
      <${Field} label="URL to scrape (empty: the demo)" id="s-url"><input id="s-url" name="url" type="url" /><//>
      <${Field} label="Pages to follow" id="s-pages"><input id="s-pages" name="max_pages" type="number" min="1" max="100" placeholder="1" /><//>
    </div>
    <fieldset>
      <legend>When</legend>
      <div class="row">
        <label><input type="radio" name="when" value="every" checked /> Every</label>
        <${Field} label="Minutes between runs" id="s-every"><input id="s-every" name="every_minutes" type="number" min="1" value="60" /><//>
        <label><input type="radio" name="when" value="cron" /> Cron</label>
        <${Field} label="Cron expression (5 fields)" id="s-cron"><input id="s-cron" name="cron" placeholder="0 7 * * *" /><//>
        <${Field} label="Time zone" id="s-tz"><input id="s-tz" name="timezone" placeholder="UTC" /><//>
      </div>
    </fieldset>
    <${ErrorBox} error=${error} />
    <div class="actions"><button type="submit" class="primary" disabled=${busy}>${busy ? 'Creating…' : 'Create'}</button></div>
  </form>`;
}

export function SchedulesScreen({ query: params }) {
  useTitle('Schedules');
  const { data, error, loading, reload, offset, total } = usePaged('/schedules', params, {}, LIMIT);
  const [actionError, setActionError] = useState(null);
  const act = async (path, method, body) => {
    setActionError(null);
    try {
      const { data: answer } = await api(path, { method, body });
      reload();
      return answer;
    } catch (failure) {
      setActionError(failure);
      return undefined;
    }
  };
  const runNow = async (id) => {
    const job = await act(`/schedules/${id}/run`, 'POST');
    if (job) navigate(`/jobs/${job.id}`);
  };
  return html`
    <h1>Schedules</h1>
    <${ErrorBox} error=${error} />
    <${ErrorBox} error=${actionError} />
    ${loading && !data ? html`<${Loading} what="Loading schedules" />` : ''}
    ${data && data.length === 0 ? html`<${Empty}><p>No schedules yet: create one below to scrape a page again and again.</p><//>` : ''}
    ${
      data &&
      data.length > 0 &&
      html`<div class="table-wrap"><table>
        <thead><tr><th scope="col">Schedule</th><th scope="col">When</th><th scope="col">Next run</th><th scope="col" class="num">Runs</th><th scope="col">Last job</th><th scope="col">Actions</th></tr></thead>
        <tbody>
          ${data.map(
            (s) => html`<tr>
              <td>${s.name ?? html`<span class="muted">unnamed</span>`} <span class="url">${s.job.url ?? 'the demo'}</span></td>
              <td>${s.cron ? html`<code>${s.cron}</code> (${s.timezone})` : `every ${s.every_minutes} min`} ${s.paused ? html`<${Badge} value="paused" />` : ''}</td>
              <td>${s.paused ? '—' : time(s.next_run_at)}</td>
              <td class="num">${s.runs}${s.skipped ? html` <span class="muted">(${s.skipped} skipped)</span>` : ''}</td>
              <td>${s.last_job_id ? html`<a href=${`/ui/jobs/${s.last_job_id}`}>${time(s.last_run_at)}</a>` : '—'}</td>
              <td class="buttons">
                <button type="button" onClick=${() => act(`/schedules/${s.id}`, 'PATCH', { paused: !s.paused })}>${s.paused ? 'Resume' : 'Pause'}</button>
                <button type="button" onClick=${() => runNow(s.id)}>Run now</button>
                <button type="button" class="danger" onClick=${() => confirm(`Delete the schedule ${s.name ?? s.id}? Its jobs stay.`) && act(`/schedules/${s.id}`, 'DELETE')}>Delete</button>
              </td>
            </tr>`,
          )}
        </tbody>
      </table></div>
      <${Pager} offset=${offset} limit=${LIMIT} total=${total} onPage=${(at) => navigate(`/schedules${query({ offset: at || '' })}`)} />`
    }
    <${CreateSchedule} onCreated=${reload} />
  `;
}
