// The pace of each crawled host across every worker process: robots.txt's Crawl-delay, and AutoThrottle when on; each fetch of a host takes the next free moment, kept in the database.
import { createHash } from 'node:crypto';
import type { Database } from '../db/queryable.js';
import type { PageFetcher } from '../egress/page-fetcher.js';

/**
 * A page whose host's moment is further away than this goes back to the queue until then instead of
 * holding a worker slot asleep; a shorter wait is slept in place.
 */
export const SLEEP_IN_SLOT_MS = 1000;

/** Adaptive pacing per host (like Scrapy's AutoThrottle), off unless configured. */
export interface AutoThrottleSettings {
  /** Requests each host should have in flight on average, all workers together. */
  targetConcurrency: number;
  /** The slowest pace a host is ever given, however it answers, ms between requests. */
  maxDelayMs: number;
}

/** The pace a new host starts at under AutoThrottle, until its answers say more. */
export const AUTOTHROTTLE_START_DELAY_MS = 1000;

/** How a host answered one fetch: what its next pace is made of. */
export interface HostAnswer {
  latencyMs: number;
  /** The HTTP status; undefined when no answer came (timeout, refused connection). */
  status: number | undefined;
  /** Retry-After, when the host sent one. */
  retryAfterMs: number | undefined;
}

/** The pace of each host, shared by every worker process through the database. */
export interface HostPace {
  /**
   * Reserves `url`'s next free moment on its host and answers how many milliseconds away it is: 0 at
   * once, without a round trip, when its robots.txt names no Crawl-delay and AutoThrottle is off. The
   * reservation is made: the caller fetches at that moment.
   */
  slot(url: string, trusted: boolean): Promise<number>;
  /** Adapts the host's pace to how it answered (AutoThrottle only; nothing is done otherwise). */
  answered(url: string, trusted: boolean, answer: HostAnswer): Promise<void>;
}

/**
 * Crawl-delay (robots.txt) is a floor under a host's pace. Under AutoThrottle a host's delay between
 * requests moves toward latency / target concurrency, halfway at each answer: fast answers speed it
 * up (down to the floor, the process's SCRAPE_HOST_CONCURRENCY capping it), an error answer never
 * does, and a 429 or 503 doubles it at least to the host's Retry-After, and holds the host until then.
 */
export function createHostPace(db: Database, fetcher: Pick<PageFetcher, 'robots'>, autothrottle?: AutoThrottleSettings): HostPace {
  const crawlDelayMs = async (url: string, trusted: boolean) => {
    const { crawlDelaySeconds } = await fetcher.robots(url, { trusted }).catch(() => ({ crawlDelaySeconds: null }));
    return crawlDelaySeconds === null ? null : Math.min(crawlDelaySeconds, 60) * 1000;
  };
  return {
    async slot(url, trusted) {
      const floorMs = await crawlDelayMs(url, trusted);
      if (floorMs === null && autothrottle === undefined) return 0;
      // Without AutoThrottle the Crawl-delay alone is the pace (a delay_ms left from when it was on is not read).
      const startMs = autothrottle === undefined ? null : AUTOTHROTTLE_START_DELAY_MS;
      const [slot] = await db.query<{ wait_ms: number }>(
        `WITH pace AS (SELECT greatest($2::float8, CASE WHEN $3::float8 IS NULL THEN 0 ELSE coalesce((SELECT delay_ms FROM host_politeness WHERE host = $1), $3) END) AS ms)
         INSERT INTO host_politeness AS h (host, next_at, delay_ms) SELECT $1, now() + make_interval(secs => pace.ms / 1000), $3 FROM pace
         ON CONFLICT (host) DO UPDATE SET next_at = greatest(h.next_at, now()) + make_interval(secs => (SELECT ms FROM pace) / 1000)
         RETURNING greatest(0, extract(epoch FROM (h.next_at - now())) * 1000 - (SELECT ms FROM pace))::float8 AS wait_ms`,
        [new URL(url).host, floorMs ?? 0, startMs],
      );
      return slot?.wait_ms ?? 0;
    },

    async answered(url, trusted, answer) {
      if (autothrottle === undefined) return;
      const floorMs = (await crawlDelayMs(url, trusted)) ?? 0;
      const status = answer.status ?? 0;
      const slowDown = status === 429 || status === 503;
      const ok = status >= 200 && status < 400;
      const retryAfterMs = Math.min(answer.retryAfterMs ?? 0, autothrottle.maxDelayMs);
      await db.query(
        `UPDATE host_politeness SET
           delay_ms = least($7::float8, greatest($2::float8, CASE
             WHEN $3 THEN greatest(coalesce(delay_ms, $8) * 2, $6::float8)
             WHEN $4 THEN (coalesce(delay_ms, $8) + $5::float8) / 2
             ELSE greatest(coalesce(delay_ms, $8), (coalesce(delay_ms, $8) + $5::float8) / 2) END)),
           next_at = CASE WHEN $6::float8 > 0 THEN greatest(next_at, now() + make_interval(secs => $6::float8 / 1000)) ELSE next_at END
         WHERE host = $1`,
        [new URL(url).host, floorMs, slowDown, ok, answer.latencyMs / autothrottle.targetConcurrency, retryAfterMs, autothrottle.maxDelayMs, AUTOTHROTTLE_START_DELAY_MS],
      );
    },
  };
}

/**
 * The id of a page's message once it went back to the queue to wait for its host: derived from the
 * page's own id (a name-based UUID), so a cancel or a sweep finds it without a record of it.
 */
export function waitingMessageId(pageId: string): string {
  const hex = createHash('sha1').update(`${pageId}:polite`).digest('hex');
  const variant = ((Number.parseInt(hex[16]!, 16) & 0x3) | 0x8).toString(16);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-5${hex.slice(13, 16)}-${variant}${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}

export function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    if (ms <= 0) return resolve();
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal.reason);
    };
    signal.addEventListener('abort', onAbort, { once: true });
  });
}
