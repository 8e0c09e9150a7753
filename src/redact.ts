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

/** A JSON-like value with every string's URL passwords replaced (request bodies, documents). */
export function redactDeep<T>(value: T): T {
  return mapStrings(value, redactUrlsIn);
}

/**
 * `value` with `change` applied to every string in it (values, not keys). Arrays and plain objects in
 * which nothing changed are returned as they are, not copied: a crawl's log (megabytes, rarely a
 * password) costs one walk, not a copy of every object. Other objects become plain copies of their own
 * fields, as JSON would have them.
 */
export function mapStrings<T>(value: T, change: (text: string) => string): T {
  if (typeof value === 'string') return change(value) as T;
  if (value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) {
    let copy: unknown[] | undefined;
    for (let i = 0; i < value.length; i++) {
      const inner = mapStrings(value[i], change);
      if (copy === undefined && inner !== value[i]) copy = value.slice(0, i);
      copy?.push(inner);
    }
    return (copy ?? value) as T;
  }
  const prototype = Object.getPrototypeOf(value);
  const plain = prototype === Object.prototype || prototype === null;
  const fields = value as Record<string, unknown>;
  let copy: Record<string, unknown> | undefined = plain ? undefined : {};
  for (const key of Object.keys(fields)) {
    const inner = fields[key];
    const changed = mapStrings(inner, change);
    if (copy === undefined && changed !== inner) copy = { ...fields };
    if (copy !== undefined) copy[key] = changed;
  }
  return (copy ?? value) as T;
}

/**
 * What to show and what to keep aside: `shown` has every URL password replaced; `hidden` is the
 * original when that changed anything (stored apart, never served, used to make the request), else null.
 */
export function splitSecrets<T>(value: T): { shown: T; hidden: T | null } {
  const shown = redactDeep(value);
  // The same object back means nothing was masked: no need to write both out to compare them.
  return { shown, hidden: shown === value || JSON.stringify(shown) === JSON.stringify(value) ? null : value };
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
