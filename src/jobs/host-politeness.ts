// robots.txt's Crawl-delay honoured across every worker process: each fetch of a host takes the next free moment, kept in the database.
import type { Database } from '../db/queryable.js';
import type { PageFetcher } from '../egress/page-fetcher.js';

/** Waits until `url`'s host may be fetched again; nothing when its robots.txt names no Crawl-delay. */
export type PoliteWait = (url: string, trusted: boolean, signal: AbortSignal) => Promise<void>;

export function createPoliteWait(db: Database, fetcher: Pick<PageFetcher, 'robots'>): PoliteWait {
  return async (url, trusted, signal) => {
    const { crawlDelaySeconds } = await fetcher.robots(url, { trusted }).catch(() => ({ crawlDelaySeconds: null }));
    if (crawlDelaySeconds === null) return;
    const host = new URL(url).host;
    const [slot] = await db.query<{ wait_ms: number }>(
      `INSERT INTO host_politeness (host, next_at) VALUES ($1, now() + make_interval(secs => $2))
       ON CONFLICT (host) DO UPDATE SET next_at = greatest(host_politeness.next_at, now()) + make_interval(secs => $2)
       RETURNING greatest(0, extract(epoch FROM (next_at - make_interval(secs => $2) - now())) * 1000)::float8 AS wait_ms`,
      [host, Math.min(crawlDelaySeconds, 60)],
    );
    const waitMs = slot?.wait_ms ?? 0;
    if (waitMs > 0) await sleep(waitMs, signal);
  };
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
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
