// The one scrape-log document of a whole-site crawl, written when the crawl ends, under the job's own id.
import type { LogStore } from '../scrape-logs/log-store.js';
import type { ExtractedItem } from '../scraping/extract/types.js';
import { endedLog, type LoggedArticle } from '../scraping/run-log.js';
import type { Job } from './job-schema.js';
import type { FrontierPage } from './job-store.js';

/**
 * Writes the crawl's log once, built by the pipeline's own log builder. Two finishers racing (or a
 * sweep after a crash) write the same id: the second insert is refused by the store and found to be
 * there already, which is success.
 */
export async function writeCrawlLog(logs: LogStore, job: Job, pages: readonly FrontierPage[], status: 'succeeded' | 'failed' | 'cancelled', error: Job['error']): Promise<void> {
  if ((await logs.get(job.id)) !== undefined) return;
  const done = pages.filter((p) => p.status === 'done');
  const finished = new Date();
  const started = job.started_at ?? job.created_at;
  const log = endedLog(
    { id: job.id, jobId: job.id, sourceUrl: job.source_url, request: job.request as Job['request'] & Record<string, unknown>, startedAt: started, crawl: true },
    done.map((p) => ({
      url: p.url,
      page_type: p.page_type,
      items: (Array.isArray(p.items) ? p.items : []) as ExtractedItem[],
      articles: (Array.isArray(p.articles) ? p.articles : []) as LoggedArticle[],
      site_rule_warning: p.site_rule_warning,
    })),
    {
      status,
      finishedAt: finished.toISOString(),
      durationMs: Math.max(0, finished.getTime() - Date.parse(started)),
      count: done.reduce((n, p) => n + (Array.isArray(p.items) ? p.items.length : 0), 0),
      error,
      failedPages: pages.filter((p) => p.status === 'failed').map((p) => ({ url: p.url, error: p.error })),
    },
  );
  try {
    await logs.insert(log);
  } catch (insertError) {
    if ((await logs.get(job.id)) === undefined) throw insertError;
  }
}
