// The API as the dashboard calls it: JSON in and out, the session's API key, and problem+json errors as ApiError.

const KEY_STORAGE = 'data-aggregator.api-key';

/** The API key of this browser tab (sessionStorage: gone when the tab closes), or ''. */
export function apiKey() {
  return sessionStorage.getItem(KEY_STORAGE) ?? '';
}

export function setApiKey(key) {
  if (key) sessionStorage.setItem(KEY_STORAGE, key);
  else sessionStorage.removeItem(KEY_STORAGE);
  for (const listener of keyListeners) listener(key);
}

const keyListeners = new Set();
export function onApiKeyChange(listener) {
  keyListeners.add(listener);
  return () => keyListeners.delete(listener);
}

/** An answer that was not 2xx: the problem's title and detail, and what to do when one is known. */
export class ApiError extends Error {
  constructor(status, problem) {
    super(problem.detail || problem.title || `HTTP ${status}`);
    this.status = status;
    this.title = problem.title || `HTTP ${status}`;
    this.detail = problem.detail || '';
    this.errors = problem.errors || [];
    if (status === 401) {
      this.hint = apiKey()
        ? 'The API key set for this tab was refused: set the right one with "API key" at the top.'
        : 'This needs the service\'s API key: set it with "API key" at the top (it is kept for this tab only).';
    } else if (status === 0) {
      this.hint = 'The service did not answer: is it running?';
    } else if (status === 503) {
      this.hint = 'The service or one of its stores is not ready; see /health. Try again in a moment.';
    }
  }
}

/**
 * Calls the API. Answers `{ data, headers }`; throws ApiError for a non-2xx answer (with the
 * problem's title and detail) or when the service cannot be reached.
 */
export async function api(path, { method = 'GET', body, signal, accept } = {}) {
  const headers = { accept: accept ?? 'application/json' };
  if (body !== undefined) headers['content-type'] = 'application/json';
  const key = apiKey();
  if (key) headers['x-api-key'] = key;
  let response;
  try {
    response = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body), signal });
  } catch (error) {
    if (error.name === 'AbortError') throw error;
    throw new ApiError(0, { title: 'No answer', detail: `The request to ${path} failed: ${error.message}.` });
  }
  const type = response.headers.get('content-type') ?? '';
  const data = type.includes('json') ? await response.json().catch(() => null) : await response.text();
  if (!response.ok) throw new ApiError(response.status, data && typeof data === 'object' ? data : { detail: String(data ?? '') });
  return { data, headers: response.headers };
}

/** A query string from an object, leaving out empty values. */
export function query(params) {
  const search = new URLSearchParams();
  for (const [name, value] of Object.entries(params)) {
    if (value !== undefined && value !== null && value !== '') search.set(name, String(value));
  }
  const text = search.toString();
  return text ? `?${text}` : '';
}
