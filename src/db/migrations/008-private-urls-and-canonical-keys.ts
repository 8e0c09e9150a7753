// Migration 8, private_urls_and_canonical_keys: frozen once released; a later change is a new migration.
import { createHash } from 'node:crypto';
import type { Migration } from '../migration.js';

export const migration: Migration = {
  version: 8,
  name: 'private_urls_and_canonical_keys',
  sql: `
    -- A URL's password is used for the request and never shown: what was sent is kept apart here,
    -- never served; the shown columns hold it masked.
    ALTER TABLE jobs ADD COLUMN request_private jsonb;
    ALTER TABLE schedules ADD COLUMN job_private jsonb;
    ALTER TABLE webhooks ADD COLUMN url_private text;
  `,
  run: async (tx) => {
    // Rows written before: passwords moved apart, shown columns masked.
    for (const row of await tx.query<{ id: string; request: unknown; source_url: string }>('SELECT id, request, source_url FROM jobs')) {
      const { shown, hidden } = splitSecrets(row.request);
      if (hidden === null && redactUrl(row.source_url) === row.source_url) continue;
      await tx.query('UPDATE jobs SET request = $2, request_private = $3, source_url = $4 WHERE id = $1', [
        row.id,
        JSON.stringify(shown),
        hidden === null ? null : JSON.stringify(hidden),
        redactUrl(row.source_url),
      ]);
    }
    for (const row of await tx.query<{ id: string; job: unknown }>('SELECT id, job FROM schedules')) {
      const { shown, hidden } = splitSecrets(row.job);
      if (hidden !== null) await tx.query('UPDATE schedules SET job = $2, job_private = $3 WHERE id = $1', [row.id, JSON.stringify(shown), JSON.stringify(hidden)]);
    }
    for (const row of await tx.query<{ id: string; url: string }>('SELECT id, url FROM webhooks')) {
      if (redactUrl(row.url) !== row.url) await tx.query('UPDATE webhooks SET url = $2, url_private = $3 WHERE id = $1', [row.id, redactUrl(row.url), row.url]);
    }
    await tx.query(
      `UPDATE products SET source_url = regexp_replace(source_url, '^([a-z][a-z0-9+.-]*://[^/?#@:]*):[^/?#@]*@', '\\1:***@', 'i')
        WHERE source_url ~* '^[a-z][a-z0-9+.-]*://[^/?#@:]*:[^/?#@]*@'`,
    );
    // Products keyed by a raw URL get the canonical key a scrape now computes (productKey), unless
    // another product already holds that key: that one stays the product a scrape updates.
    const rows = await tx.query<{ id: number; scrape_key: string }>(`SELECT id, scrape_key FROM products WHERE scrape_key ~ '^https?://' ORDER BY updated_at DESC, id DESC`);
    const taken = new Set(rows.map((r) => r.scrape_key));
    for (const row of rows) {
      const hash = row.scrape_key.indexOf('#');
      // "page#title" keys (a product without its own URL) keep their title; only the page part is
      // canonical. (A key whose URL had a fragment reads the same way: it stays as it was, less canonical.)
      const key =
        hash === -1 ? urlKey(row.scrape_key) : row.scrape_key.includes('#sha256=') ? null : productKey(null, row.scrape_key.slice(0, hash), row.scrape_key.slice(hash + 1));
      if (key === null || key === row.scrape_key || taken.has(key)) continue;
      await tx.query('UPDATE products SET scrape_key = $2 WHERE id = $1', [row.id, key]);
      taken.add(key);
    }
    await tx.query(`UPDATE scrape_logs SET source_url = regexp_replace(source_url, '^([a-z][a-z0-9+.-]*://[^/?#@:]*):[^/?#@]*@', '\\1:***@', 'i'),
                      document = document || jsonb_build_object('source_url', regexp_replace(document->>'source_url', '^([a-z][a-z0-9+.-]*://[^/?#@:]*):[^/?#@]*@', '\\1:***@', 'i'))
                     WHERE source_url ~* '^[a-z][a-z0-9+.-]*://[^/?#@:]*:[^/?#@]*@'`);
  },
};

// Frozen copies of the functions this migration applied when it was released (redact.ts and
// url-identity/url-key.ts as they were then): the live ones may change, what migration 8 did may not.

const CREDENTIALS = /\b([a-z][a-z0-9+.-]*:\/\/)([^\s/?#@:]*):([^\s/?#@]*)@/gi;

function redactUrl(text: string): string {
  if (!text.includes('@')) return text;
  return text.replace(CREDENTIALS, (_match, scheme: string, user: string) => `${scheme}${user}:***@`);
}

function redactDeep<T>(value: T): T {
  if (typeof value === 'string') return redactUrl(value) as T;
  if (Array.isArray(value)) return value.map(redactDeep) as T;
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([key, inner]) => [key, redactDeep(inner)])) as T;
  }
  return value;
}

function splitSecrets<T>(value: T): { shown: T; hidden: T | null } {
  const shown = redactDeep(value);
  return { shown, hidden: JSON.stringify(shown) === JSON.stringify(value) ? null : value };
}

const TRACKING = /^(?:utm_[a-z0-9_]*|gclid|gclsrc|dclid|fbclid|msclkid|yclid|mc_cid|mc_eid|_ga|_gl|_hsenc|_hsmi|igshid|ref_src|srsltid|trk|wt_mc)$/i;
const MAX_KEY_BYTES = 1000;

function canonicalUrl(url: string): string | null {
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
  return parsed.href;
}

function urlKey(url: string): string | null {
  const canonical = canonicalUrl(url);
  return canonical === null ? null : capped(canonical);
}

function productKey(itemUrl: string | null, pageUrl: string, title: string): string {
  const own = itemUrl === null ? null : urlKey(itemUrl);
  return own ?? capped(`${urlKey(pageUrl) ?? pageUrl}#${title}`);
}

function capped(text: string): string {
  if (Buffer.byteLength(text) <= MAX_KEY_BYTES) return text;
  const digest = createHash('sha256').update(text).digest('hex');
  let start = text.slice(0, MAX_KEY_BYTES - 72);
  while (Buffer.byteLength(start) > MAX_KEY_BYTES - 72) start = start.slice(0, -1);
  return `${start}#sha256=${digest}`;
}
