// A whole-site crawl as bookkeeping around the page pipeline: seed the frontier (crawl-seed.ts), then each queued page is loaded, processed and stored with its links (crawl-page.ts).
import type { WorkContext } from '../queue/queue.js';
import { crawlPage } from './crawl-page.js';
import { seedCrawl } from './crawl-seed.js';
import { createCrawlShared, type CrawlRunnerDeps } from './crawl-shared.js';
import type { QueuedPage } from './job-queues.js';
import type { Job } from './job-schema.js';

export { crawlRun, errorOf, type CrawlRunnerDeps } from './crawl-shared.js';

export interface CrawlRunner {
  /** A crawl job's first delivery: the start URL and its sitemap's pages become the frontier. */
  seed(job: Job, context: WorkContext): Promise<void>;
  /** One frontier page. */
  page(page: QueuedPage, context: WorkContext): Promise<void>;
  /** Ends a crawl whose frontier has nothing pending: its log, its status, what its source no longer lists. */
  finishIfDone(jobId: string): Promise<void>;
}

export function createCrawlRunner(deps: CrawlRunnerDeps): CrawlRunner {
  const shared = createCrawlShared(deps);
  return {
    finishIfDone: shared.finishIfDone,
    seed: (job, context) => seedCrawl(shared, job, context),
    page: (page, context) => crawlPage(shared, page, context),
  };
}
