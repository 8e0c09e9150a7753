// robots.txt: fetched once per origin through the guard, cached, and read as RFC 9309 says.
import { LRUCache } from 'lru-cache';
import robotsParserModule from 'robots-parser';
import type { Dispatcher } from 'undici';
import { BlockedTarget, UpstreamFailed, UpstreamTimeout } from '../problems.js';
import { raceAbort } from './abort.js';
import type { FetchTrace, RobotsInfo } from './page-fetcher.js';
import { readBody } from './body.js';
import { describeFailure } from './failures.js';

// The package's types declare an ES default export, but at runtime it is CommonJS `module.exports = fn`.
const robotsParser = robotsParserModule as unknown as typeof robotsParserModule.default;
type Rules = ReturnType<typeof robotsParser>;

// RFC 9309 asks crawlers to parse at least 500 KiB; anything beyond is ignored, not an error.
const ROBOTS_MAX_BYTES = 500 * 1024;
/** How long "could not be read" stands before robots.txt is asked again. */
const FAILURE_TTL_MS = 60_000;

/**
 * robots.txt answered 5xx or not at all: RFC 9309 2.3.1.4 says to assume complete disallow, for a
 * while (FAILURE_TTL_MS), then to ask again.
 */
const UNREACHABLE = Symbol('robots.txt unreachable');

interface Entry {
  rules: Promise<Rules | null | typeof UNREACHABLE>;
  /** What the fetch of robots.txt answered, for explain. */
  outcome?: { outcome: 'rules' | 'none (4xx)' | 'unavailable'; status: number | null };
}

/** A response whose host slot is held until `release`. */
export interface RobotsResponse {
  response: Dispatcher.ResponseData;
  release: () => void;
}

export interface RobotsOptions {
  userAgent: string;
  timeoutMs: number;
  /** GETs robots.txt through the guard (redirects re-checked), without asking robots.txt first. */
  get: (url: URL, trust: boolean, signal: AbortSignal) => Promise<RobotsResponse>;
  /** How long a fetched robots.txt is trusted (default 1 h). */
  ttlMs?: number;
  /** Origins kept (default 500), the least recently used dropped first. */
  cacheSize?: number;
  /** Clock for the cache. */
  now?: () => number;
  logger?: { warn(details: Record<string, unknown>, message: string): void };
}

export interface Robots {
  /** Whether `url` may be fetched; throws UpstreamFailed while the site's robots.txt cannot be read. */
  allows(url: URL, trust: boolean, signal: AbortSignal, trace?: FetchTrace): Promise<boolean>;
  info(url: string, trust: boolean): Promise<RobotsInfo>;
  close(): void;
}

export function robotsRefusal(url: URL): BlockedTarget {
  return new BlockedTarget(`robots.txt of ${url.origin} disallows ${url.pathname} for our user agent.`);
}

export function createRobots(options: RobotsOptions): Robots {
  const { userAgent, timeoutMs, logger } = options;
  const ttlMs = options.ttlMs ?? 3_600_000;
  const cache = new LRUCache<string, Entry>({
    max: options.cacheSize ?? 500,
    ttl: ttlMs,
    // Exact expiry on the given clock (no debounced reading of it).
    ttlResolution: 0,
    ...(options.now === undefined ? {} : { perf: { now: options.now } }),
  });
  // robots.txt fetches outlive the page that started them; close() must be able to stop them.
  const fetches = new Set<AbortController>();
  let closed = false;

  /** One robots.txt fetch per origin, shared by concurrent callers. */
  function entryFor(origin: string, trust: boolean): { entry: Entry; cached: boolean } {
    // Keyed by trust too: an untrusted attempt the guard refused must not stand in for the operator's fetch.
    const key = `${trust ? 'trusted' : 'guarded'} ${origin}`;
    const cached = cache.get(key);
    if (cached !== undefined) return { entry: cached, cached: true };
    const entry: Entry = { rules: Promise.resolve(null) };
    entry.rules = load(origin, trust).then(({ rules, ok, status }) => {
      entry.outcome = { outcome: rules === UNREACHABLE ? 'unavailable' : rules !== null ? 'rules' : 'none (4xx)', status };
      // Its lifetime starts when the answer is in; failures are asked again sooner.
      if (cache.get(key) === entry) cache.set(key, entry, { ttl: ok ? ttlMs : FAILURE_TTL_MS });
      return rules;
    });
    // Until the fetch settles the entry never expires (ttl 0), so concurrent callers share it.
    cache.set(key, entry, { ttl: 0 });
    return { entry, cached: false };
  }

  /**
   * Never rejects. A 4xx robots.txt places no restrictions (RFC 9309 2.3.1.3); a 5xx or no answer is
   * UNREACHABLE (2.3.1.4).
   */
  async function load(origin: string, trust: boolean): Promise<{ rules: Rules | null | typeof UNREACHABLE; ok: boolean; status: number | null }> {
    const robotsUrl = new URL('/robots.txt', origin);
    const deadline = new AbortController();
    const timer = setTimeout(() => deadline.abort(new UpstreamTimeout(`${robotsUrl.href} did not answer within ${timeoutMs} ms.`)), timeoutMs);
    fetches.add(deadline);
    try {
      const { response, release } = await options.get(robotsUrl, trust, deadline.signal);
      try {
        const status = response.statusCode;
        if (status >= 400 && status < 500) {
          await response.body.dump().catch(() => undefined);
          return { rules: null, ok: true, status };
        }
        if (status < 200 || status >= 300) {
          await response.body.dump().catch(() => undefined);
          logger?.warn({ origin, status }, 'robots.txt answered with an error; the site is treated as disallowed for a minute');
          return { rules: UNREACHABLE, ok: false, status };
        }
        const bytes = await readBody(response, ROBOTS_MAX_BYTES, robotsUrl.href, { truncate: true });
        return { rules: robotsParser(robotsUrl.href, bytes.toString('utf8')), ok: true, status };
      } finally {
        release();
      }
    } catch (error) {
      const problem = describeFailure(error, robotsUrl.href, deadline.signal);
      // A guard refusal is not news: the page request meets the same guard and fails with it.
      if (problem instanceof BlockedTarget) return { rules: null, ok: false, status: null };
      if (!closed) logger?.warn({ origin, error: problem.message }, 'robots.txt could not be fetched; the site is treated as disallowed for a minute');
      return { rules: UNREACHABLE, ok: false, status: null };
    } finally {
      clearTimeout(timer);
      fetches.delete(deadline);
    }
  }

  return {
    async allows(url, trust, signal, trace) {
      const { entry, cached } = entryFor(url.origin, trust);
      const rules = await raceAbort(entry.rules, signal);
      if (trace !== undefined && entry.outcome !== undefined) {
        trace.robots.push({ url: new URL('/robots.txt', url.origin).href, ...entry.outcome, cached });
      }
      if (rules === UNREACHABLE) {
        const answer = entry.outcome?.status == null ? 'no answer' : `HTTP ${entry.outcome.status}`;
        throw new UpstreamFailed(
          `robots.txt of ${url.origin} could not be read (${answer}): as RFC 9309 asks, no page of the site is fetched until it can be; it is asked again within a minute.`,
        );
      }
      return rules === null || rules.isAllowed(url.href, userAgent) !== false;
    },

    async info(url, trust) {
      const found = await entryFor(new URL(url).origin, trust).entry.rules;
      const rules = found === UNREACHABLE ? null : found;
      const delay = rules?.getCrawlDelay(userAgent);
      return { crawlDelaySeconds: typeof delay === 'number' && delay > 0 ? delay : null, sitemaps: rules?.getSitemaps() ?? [] };
    },

    close() {
      closed = true;
      for (const fetch of fetches) fetch.abort(new UpstreamFailed('The fetcher was closed.'));
      cache.clear();
    },
  };
}
