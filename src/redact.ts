// Passwords in URLs (https://user:secret@host/) are used for the request and never stored, shown or logged.

const MASK = '***';

/** Userinfo with a password: `scheme://user:password@`. The user name stays; it says whose access it was. */
const CREDENTIALS = /\b([a-z][a-z0-9+.-]*:\/\/)([^\s/?#@:]*):([^\s/?#@]*)@/gi;

/** `url` with its password replaced by ***; anything else, including text that is not a URL, unchanged. */
export function redactUrl(url: string): string {
  return redactUrlsIn(url);
}

/** Every URL password inside `text` (an error message, a log line) replaced by ***. */
export function redactUrlsIn(text: string): string {
  if (!text.includes('@')) return text;
  return text.replace(CREDENTIALS, (_match, scheme: string, user: string) => `${scheme}${user}:${MASK}@`);
}

/** A copy of a JSON-like value with every string's URL passwords replaced (request bodies, documents). */
export function redactDeep<T>(value: T): T {
  if (typeof value === 'string') return redactUrlsIn(value) as T;
  if (Array.isArray(value)) return value.map(redactDeep) as T;
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([key, inner]) => [key, redactDeep(inner)])) as T;
  }
  return value;
}

/**
 * What to show and what to keep aside: `shown` has every URL password replaced; `hidden` is the
 * original when that changed anything (stored apart, never served, used to make the request), else null.
 */
export function splitSecrets<T>(value: T): { shown: T; hidden: T | null } {
  const shown = redactDeep(value);
  return { shown, hidden: JSON.stringify(shown) === JSON.stringify(value) ? null : value };
}

/** The `Authorization: Basic` header a URL's user and password stand for, or undefined without them. */
export function basicAuthorization(url: URL): string | undefined {
  if (url.username === '' && url.password === '') return undefined;
  const user = decodeURIComponent(url.username);
  const password = decodeURIComponent(url.password);
  return `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;
}

/** `url` without user and password (they travel as a header, see basicAuthorization). */
export function withoutCredentials(url: URL): URL {
  const copy = new URL(url);
  copy.username = '';
  copy.password = '';
  return copy;
}

/**
 * A request line's path and query for a log: a URL with a password inside a query parameter is
 * percent-encoded there, so the line is read decoded when it may hold one.
 */
export function redactRequestUrl(url: string): string {
  if (!/@|%40/i.test(url)) return url;
  let decoded = url;
  try {
    decoded = decodeURIComponent(url);
  } catch {
    // Malformed escapes: masked as written.
  }
  const masked = redactUrlsIn(decoded);
  return masked === decoded ? url : masked;
}
