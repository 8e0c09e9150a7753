// Client for the external posts API: pooled GETs, validated answers, a bounded per-query cache with single-flight and stale fallback.
import { LRUCache } from 'lru-cache';
import { Pool, errors as undiciErrors } from 'undici';
import { HttpProblem, UpstreamFailed, UpstreamTimeout } from '../problems.js';

export interface PostsHeaders {
  'x-total-count'?: string;
  link?: string;
}

export interface PostsAnswer {
  /** The upstream's array of post objects; shared between callers, so treat it as read-only. */
  posts: unknown[];
  /** Paging headers as the upstream sent them. */
  headers: PostsHeaders;
  /** `hit`: fresh copy; `miss`: fetched now; `stale`: the upstream failed and an older copy is served. */
  cache: 'miss' | 'hit' | 'stale';
  /** When the copy was fetched, on the `now` clock (ms). */
  fetchedAt: number;
  /** Why a stale copy is served: the failure that would otherwise have been thrown. */
  staleBecause?: HttpProblem;
}

export interface PostsClient {
  /** Posts for `query` (sent upstream as given); throws UpstreamFailed (502) or UpstreamTimeout (504) when there is no copy to fall back on. */
  get(query: Record<string, string>): Promise<PostsAnswer>;
  close(): Promise<void>;
}

export interface PostsClientOptions {
  url: string;
  /** Deadline for one upstream request, headers and body together. */
  timeoutMs: number;
  /** How long a copy is served without asking the upstream again. */
  cacheTtlMs: number;
  /** Clock for the cache (ms); injectable so tests can move time. */
  now?: () => number;
  /** Distinct queries kept (default 500); the longest-fetched is dropped first. */
  maxEntries?: number;
  /** Largest upstream body accepted (default 10 MiB). */
  maxBodyBytes?: number;
}

interface CacheEntry {
  posts: unknown[];
  headers: PostsHeaders;
  fetchedAt: number;
}

const DEFAULT_MAX_ENTRIES = 500;
const DEFAULT_MAX_BODY_BYTES = 10 * 1024 * 1024;

export function createPostsClient(options: PostsClientOptions): PostsClient {
  const { timeoutMs, cacheTtlMs } = options;
  const now = options.now ?? Date.now;
  const maxEntries = options.maxEntries ?? DEFAULT_MAX_ENTRIES;
  const maxBodyBytes = options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
  const base = new URL(options.url);
  const pool = new Pool(base.origin, {
    connections: 16,
    keepAliveTimeout: 30_000,
    connect: { timeout: timeoutMs },
  });
  // Entries outlive their TTL on purpose: a stale copy still answers when the upstream fails (below).
  // Past maxEntries the least recently used goes.
  const cache = new LRUCache<string, CacheEntry>({ max: maxEntries });
  const inFlight = new Map<string, Promise<CacheEntry>>();
  let closing: Promise<void> | undefined;

  async function fetchPosts(search: string): Promise<CacheEntry> {
    const target = new URL(base);
    // Our parameters are appended to any the operator put in the URL.
    target.search = [base.search.slice(1), search].filter((s) => s !== '').join('&');
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(), timeoutMs);
    try {
      const response = await pool.request({
        method: 'GET',
        path: target.pathname + target.search,
        headers: { accept: 'application/json' },
        signal: controller.signal,
        headersTimeout: timeoutMs,
        bodyTimeout: timeoutMs,
      });
      if (response.statusCode < 200 || response.statusCode > 299) {
        // Drain rather than destroy, so the keep-alive connection can be reused.
        await response.body.dump();
        throw new UpstreamFailed(`The external posts service answered with status ${response.statusCode}.`);
      }
      const text = await readCapped(response.body, response.headers['content-length'], maxBodyBytes);
      let parsed: unknown;
      try {
        parsed = JSON.parse(text);
      } catch (error) {
        throw new UpstreamFailed('The external posts service returned invalid JSON.', { cause: error });
      }
      if (!Array.isArray(parsed)) {
        throw new UpstreamFailed('The external posts service returned JSON that is not an array.');
      }
      if (!parsed.every((item) => typeof item === 'object' && item !== null && !Array.isArray(item))) {
        throw new UpstreamFailed('The external posts service returned an array that holds something other than objects.');
      }
      return {
        posts: Object.freeze(parsed) as unknown[],
        headers: Object.freeze(pagingHeaders(response.headers)),
        fetchedAt: now(),
      };
    } catch (error) {
      if (error instanceof HttpProblem) throw error;
      if (controller.signal.aborted || isUndiciTimeout(error)) {
        throw new UpstreamTimeout(`The external posts service did not answer within ${timeoutMs} ms.`, { cause: error });
      }
      throw new UpstreamFailed(`The external posts service could not be reached (${describe(error)}).`, { cause: error });
    } finally {
      clearTimeout(timer);
    }
  }

  /** One upstream request per key at a time: concurrent misses wait for the same answer. */
  function refresh(key: string): Promise<CacheEntry> {
    let pending = inFlight.get(key);
    if (pending === undefined) {
      pending = fetchPosts(key)
        .then((entry) => {
          cache.set(key, entry);
          return entry;
        })
        .finally(() => inFlight.delete(key));
      inFlight.set(key, pending);
    }
    return pending;
  }

  return {
    async get(query) {
      const key = cacheKey(query);
      const cached = cache.get(key);
      if (cached !== undefined && now() - cached.fetchedAt < cacheTtlMs) {
        return { ...cached, cache: 'hit' };
      }
      try {
        return { ...(await refresh(key)), cache: 'miss' };
      } catch (error) {
        // Any copy, however old, beats an error page; the caller says it is stale.
        const fallback = cache.get(key);
        if (fallback === undefined || !(error instanceof HttpProblem)) throw error;
        return { ...fallback, cache: 'stale', staleBecause: error };
      }
    },
    close() {
      closing ??= pool.close();
      return closing;
    },
  };
}

/** The query string with parameters sorted by name, so equal queries share one cache entry. */
function cacheKey(query: Record<string, string>): string {
  const params = new URLSearchParams();
  for (const name of Object.keys(query).sort()) params.append(name, query[name]!);
  return params.toString();
}

type BodyStream = AsyncIterable<unknown> & { destroy(error?: Error): unknown };

async function readCapped(body: BodyStream, declaredLength: string | string[] | undefined, maxBytes: number): Promise<string> {
  const tooLarge = () => new UpstreamFailed(`The external posts service sent a body larger than ${maxBytes} bytes.`);
  if (Number(declaredLength) > maxBytes) {
    body.destroy();
    throw tooLarge();
  }
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    const buffer = chunk as Buffer;
    size += buffer.length;
    if (size > maxBytes) {
      body.destroy();
      throw tooLarge();
    }
    chunks.push(buffer);
  }
  return Buffer.concat(chunks, size).toString('utf8');
}

function pagingHeaders(headers: Record<string, string | string[] | undefined>): PostsHeaders {
  const kept: PostsHeaders = {};
  const total = single(headers['x-total-count']);
  const link = single(headers.link);
  if (total !== undefined) kept['x-total-count'] = total;
  if (link !== undefined) kept.link = link;
  return kept;
}

function single(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value.join(', ') : value;
}

function isUndiciTimeout(error: unknown): boolean {
  return error instanceof undiciErrors.HeadersTimeoutError || error instanceof undiciErrors.BodyTimeoutError || error instanceof undiciErrors.ConnectTimeoutError;
}

function describe(error: unknown): string {
  const e = error as { code?: unknown; message?: unknown } | null;
  if (typeof e?.code === 'string') return e.code;
  return typeof e?.message === 'string' ? e.message : String(error);
}
