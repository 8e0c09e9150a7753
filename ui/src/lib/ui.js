// Pieces every screen uses: loading the API into state, errors and empty states that say what happened, paging, formats.
import { html } from 'htm/preact';
import { useCallback, useEffect, useState } from 'preact/hooks';
import { api, query } from './api.js';

export { html };

/**
 * Loads `path` whenever it changes: `{ data, headers, error, loading, reload }`. A newer request
 * aborts the older one, so a slow answer never overwrites a fresh one.
 */
export function useApi(path) {
  const [state, setState] = useState({ data: undefined, headers: undefined, error: undefined, loading: path !== null });
  const [round, setRound] = useState(0);
  useEffect(() => {
    if (path === null) return undefined;
    const controller = new AbortController();
    setState((s) => ({ ...s, loading: true }));
    api(path, { signal: controller.signal }).then(
      ({ data, headers }) => setState({ data, headers, error: undefined, loading: false }),
      (error) => {
        if (error.name !== 'AbortError') setState({ data: undefined, headers: undefined, error, loading: false });
      },
    );
    return () => controller.abort();
  }, [path, round]);
  const reload = useCallback(() => setRound((r) => r + 1), []);
  return { ...state, reload };
}

/**
 * A paged list as its screen shows it: the offset from the screen's URL, the page of `path` with
 * `filters` (empty ones left out), its total from X-Total-Count, and the rest of useApi's answer.
 */
export function usePaged(path, params, filters, limit) {
  const offset = Number(params.get('offset') ?? 0) || 0;
  const answer = useApi(`${path}${query({ ...filters, limit, offset })}`);
  const total = answer.headers ? Number(answer.headers.get('x-total-count')) : undefined;
  return { ...answer, offset, total };
}

/** A failed request as the person needs it: the problem's title, its detail, the fields, what to do. */
export function ErrorBox({ error, action }) {
  if (!error) return null;
  return html`<div class="error" role="alert">
    <strong>${error.title ?? 'Something went wrong'}${error.status ? html` <span class="muted">(HTTP ${error.status})</span>` : ''}</strong>
    ${error.detail && error.detail !== error.title ? html`<p>${error.detail}</p>` : ''}
    ${fieldErrors(error).length ? html`<ul>${fieldErrors(error).map((e) => html`<li><code>${e.path}</code> ${e.message}</li>`)}</ul>` : ''}
    ${error.hint ? html`<p class="hint">${error.hint}</p>` : ''}
    ${action ?? ''}
  </div>`;
}

/** The fields a problem names, less one that only repeats its detail (a refused URL names its field with the same words). */
function fieldErrors(error) {
  return (error.errors ?? []).filter((e) => !(error.errors.length === 1 && e.message === error.detail));
}

export function Loading({ what = 'Loading' }) {
  return html`<p class="loading" role="status">${what}…</p>`;
}

export function Empty({ children }) {
  return html`<div class="empty">${children}</div>`;
}

/** Previous/next for offset paging, with "x–y of total". */
export function Pager({ offset, limit, total, onPage }) {
  if (total === undefined || total === null) return null;
  const first = total === 0 ? 0 : offset + 1;
  const last = Math.min(offset + limit, total);
  return html`<nav class="pager" aria-label="Pages">
    <button type="button" disabled=${offset === 0} onClick=${() => onPage(Math.max(0, offset - limit))}>← Previous</button>
    <span aria-live="polite">${first}–${last} of ${total.toLocaleString()}</span>
    <button type="button" disabled=${last >= total} onClick=${() => onPage(offset + limit)}>Next →</button>
  </nav>`;
}

/** A labelled control: the label names the input for screen readers and clicks. */
export function Field({ label, id, hint, children }) {
  return html`<div class="field">
    <label for=${id}>${label}</label>
    ${children}
    ${hint ? html`<small id=${`${id}-hint`} class="muted">${hint}</small>` : ''}
  </div>`;
}

export function money(value, currency) {
  if (value === null || value === undefined) return '—';
  if (!currency) return value.toLocaleString(undefined, { maximumFractionDigits: 2 });
  try {
    return value.toLocaleString(undefined, { style: 'currency', currency });
  } catch {
    return `${value} ${currency}`;
  }
}

export function time(iso) {
  if (!iso) return '—';
  const date = new Date(iso);
  return html`<time datetime=${iso} title=${iso}>${date.toLocaleString()}</time>`;
}

const WALLS = {
  captcha: 'a CAPTCHA',
  challenge: "a bot check's challenge",
  login: 'a login',
  'rate-limit': 'a rate limit',
  'access-denied': 'a block page',
};

/** The error of a run, a job or a page as an error box; a wall the site answered with says so first. */
export function RunError({ error, title }) {
  if (!error) return null;
  const blocked = error.blocked;
  if (!blocked) return html`<${ErrorBox} error=${{ title, detail: error.detail, status: error.status }} />`;
  return html`<${ErrorBox}
    error=${{
      title: `Blocked by the site: ${WALLS[blocked.kind] ?? blocked.kind}`,
      detail: `${blocked.signal}. Nothing was stored, and the run counts as no sighting of its products.`,
      status: blocked.status,
      hint: blocked.retry_after_ms ? `The site asked to wait ${Math.ceil(blocked.retry_after_ms / 1000)} s.` : undefined,
    }}
  />`;
}

/** A status badge, with a "blocked" one beside it when the run met a wall. */
export function RunBadge({ status, error }) {
  return html`<${Badge} value=${status} />${error?.blocked ? html` <${Badge} value="blocked" />` : ''}`;
}

export function Badge({ value }) {
  if (value === null || value === undefined) return html`<span class="muted">—</span>`;
  return html`<span class=${`badge badge-${String(value).replace(/[^a-z_-]/gi, '')}`}>${String(value).replace(/_/g, ' ')}</span>`;
}

/** Sets the document title per screen, so history entries and tabs say where they lead. */
/**
 * User text set inside a string (not an element of its own, which the stylesheet isolates): between
 * FIRST STRONG ISOLATE and POP DIRECTIONAL ISOLATE, so a direction override in it ends there.
 */
export function isolated(text) {
  return `\u2068${text}\u2069`;
}

export function useTitle(title) {
  useEffect(() => {
    document.title = `${isolated(title)} · Data aggregator`;
  }, [title]);
}
