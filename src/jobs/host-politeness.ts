// robots.txt's Crawl-delay honoured across every worker process: each fetch of a host takes the next free moment, kept in the database.
import { createHash } from 'node:crypto';
import type { Database } from '../db/queryable.js';
import type { PageFetcher } from '../egress/page-fetcher.js';

/**
 * Reserves `url`'s next free moment on its host and answers how many milliseconds away it is (0 when
 * its robots.txt names no Crawl-delay). The reservation is made: the caller fetches at that moment.
 */
export type PoliteSlot = (url: string, trusted: boolean) => Promise<number>;

/**
 * A page whose host's moment is further away than this goes back to the queue until then instead of
 * holding a worker slot asleep; a shorter wait is slept in place.
 */
export const SLEEP_IN_SLOT_MS = 1000;

export function createPoliteSlot(db: Database, fetcher: Pick<PageFetcher, 'robots'>): PoliteSlot {
  return async (url, trusted) => {
    const { crawlDelaySeconds } = await fetcher.robots(url, { trusted }).catch(() => ({ crawlDelaySeconds: null }));
    if (crawlDelaySeconds === null) return 0;
    const host = new URL(url).host;
    const [slot] = await db.query<{ wait_ms: number }>(
      `INSERT INTO host_politeness (host, next_at) VALUES ($1, now() + make_interval(secs => $2))
       ON CONFLICT (host) DO UPDATE SET next_at = greatest(host_politeness.next_at, now()) + make_interval(secs => $2)
       RETURNING greatest(0, extract(epoch FROM (next_at - make_interval(secs => $2) - now())) * 1000)::float8 AS wait_ms`,
      [host, Math.min(crawlDelaySeconds, 60)],
    );
    return slot?.wait_ms ?? 0;
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
