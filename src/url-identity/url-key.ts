// The canonical form of a URL, so the same page written several ways is one page (crawl frontier, product identity).
import { createHash } from 'node:crypto';

/** Query parameters that track a visit and never change the page. */
const TRACKING = /^(?:utm_[a-z0-9_]*|gclid|gclsrc|dclid|fbclid|msclkid|yclid|mc_cid|mc_eid|_ga|_gl|_hsenc|_hsmi|igshid|ref_src|srsltid|trk|wt_mc)$/i;

/** Keys past this many bytes are cut and given a digest of the whole, so any URL fits an index. */
const MAX_KEY_BYTES = 1000;

/**
 * `url` with the scheme and host lower-cased, the default port, the fragment, tracking parameters
 * and a trailing slash (except the root's) removed, and the query sorted. Null for what is not an
 * absolute http(s) URL.
 */
export function canonicalUrl(url: string): string | null {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return null;
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') return null;
  parsed.hash = '';
  parsed.username = '';
  parsed.password = '';
  const params = [...parsed.searchParams.entries()].filter(([name]) => !TRACKING.test(name));
  params.sort(([a, av], [b, bv]) => (a === b ? (av < bv ? -1 : av > bv ? 1 : 0) : a < b ? -1 : 1));
  parsed.search = new URLSearchParams(params).toString();
  if (parsed.pathname.length > 1 && parsed.pathname.endsWith('/')) parsed.pathname = parsed.pathname.replace(/\/+$/, '');
  // WHATWG URL already lower-cases scheme and host and drops default ports.
  return parsed.href;
}

/**
 * The canonical URL, short enough for a unique index: a long one keeps its start and gains a
 * SHA-256 of the whole. Null for what is not an absolute http(s) URL.
 */
export function urlKey(url: string): string | null {
  const canonical = canonicalUrl(url);
  return canonical === null ? null : capped(canonical);
}

/**
 * A scraped product's identity: the key of its own URL, else the key of the page it was found on and
 * its title. Credentials never enter it (the canonical form drops them), and it always fits the index.
 */
export function productKey(itemUrl: string | null, pageUrl: string, title: string): string {
  const own = itemUrl === null ? null : urlKey(itemUrl);
  return own ?? capped(`${urlKey(pageUrl) ?? pageUrl}#${title}`);
}

/** `text` when it fits MAX_KEY_BYTES, else its start and a SHA-256 of the whole (the index takes at most ~2.7 KB). */
function capped(text: string): string {
  if (Buffer.byteLength(text) <= MAX_KEY_BYTES) return text;
  const digest = createHash('sha256').update(text).digest('hex');
  let start = text.slice(0, MAX_KEY_BYTES - 72);
  while (Buffer.byteLength(start) > MAX_KEY_BYTES - 72) start = start.slice(0, -1);
  return `${start}#sha256=${digest}`;
}
