// The one scrape-log document of a whole-site crawl, written when the crawl ends, under the job's own id.
import type { ScrapeLog } from '../scrape-logs/log-schema.js';
import type { LogStore } from '../scrape-logs/log-store.js';
import type { Job } from './job-schema.js';
import type { FrontierPage } from './job-store.js';

/** Raw items a crawl log keeps at most; a document store limits a document's size (MongoDB: 16 MB). */
const MAX_ITEMS = 5000;

/**
 * Writes the crawl's log once. Two finishers racing (or a sweep after a crash) write the same id:
 * the second insert is refused by the store and found to be there already, which is success.
 */
export async function writeCrawlLog(
  logs: LogStore,
  job: Job,
  pages: readonly FrontierPage[],
  status: 'succeeded' | 'failed' | 'cancelled',
  error: Job['error'],
): Promise<void> {
  if ((await logs.get(job.id)) !== undefined) return;
  const done = pages.filter((p) => p.status === 'done');
  const items = done.flatMap((p) => (Array.isArray(p.items) ? p.items : []));
  const finished = new Date();
  const started = job.started_at ?? job.created_at;
  const log: ScrapeLog = {
    id: job.id,
    job_id: job.id,
    source_url: job.source_url,
    mode: job.request.url === undefined ? 'demo' : job.request.use_selenium === true ? 'dynamic' : 'static',
    renderer: job.request.use_selenium === true ? 'browser' : 'http',
    status,
    count: items.length,
    products: items.slice(0, MAX_ITEMS) as ScrapeLog['products'],
    ...(items.length > MAX_ITEMS ? { products_truncated: true } : {}),
    pages: done.length,
    page_urls: done.map((p) => p.url),
    page_types: done.map((p) => p.page_type ?? 'none'),
    failed_pages: pages.filter((p) => p.status === 'failed').map((p) => ({ url: p.url, error: p.error })),
    extractor: null,
    started_at: started,
    finished_at: finished.toISOString(),
    duration_ms: Math.max(0, finished.getTime() - Date.parse(started)),
    request: job.request as Record<string, unknown>,
    crawl: true,
    ...(error === null || error === undefined ? {} : { error }),
  };
  try {
    await logs.insert(log);
  } catch (insertError) {
    if ((await logs.get(job.id)) === undefined) throw insertError;
  }
}
