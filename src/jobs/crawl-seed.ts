// A crawl job's first delivery: the start URL becomes the frontier's first page, then, while it is crawled, its sitemaps' pages join it.
import { assertAllowedUrl } from '../egress/address-guard.js';
import { toProblem } from '../problems.js';
import type { WorkContext } from '../queue/queue.js';
import { readSitemaps } from '../scraping/sitemap.js';
import { crawlPolicy } from './crawl-policy.js';
import { writeCrawlLog } from './crawl-log.js';
import { errorOf, frontierEntries, type CrawlShared } from './crawl-shared.js';
import type { Job } from './job-schema.js';
import { FINAL_STATUSES, type FrontierEntry } from './job-store.js';

/** How often a crawl still reading its sitemaps tells that it is alive. */
const HEARTBEAT_MS = 1000;
/** Sitemap pages queued per transaction: the first are fetched while the rest are still being queued. */
const ADMIT_SLICE = 250;

/** Seeds the crawl `job`: its start page queued at once, its sitemaps' pages as each sitemap is read. */
export async function seedCrawl(shared: CrawlShared, job: Job, context: WorkContext): Promise<void> {
  const { deps, jobs, enqueuePages, finishIfDone } = shared;
  const started = await jobs.start(job.id);
  if (started === undefined) return;
  deps.changed(job.id);
  const request = (await jobs.runRequest(job.id)) ?? job.request;
  const trusted = request.url === undefined;
  const sourceUrl = request.url ?? job.source_url;
  const policy = crawlPolicy(sourceUrl, request.crawl ?? {});
  try {
    if (!trusted) assertAllowedUrl(sourceUrl, deps.settings.allowPrivateNetworks);
  } catch (error) {
    const problem = errorOf(toProblem(error));
    await writeCrawlLog(deps.logs, job, [], 'failed', problem);
    await deps.db.transaction(async (tx) => {
      await jobs.finish(job.id, 'failed', problem, tx);
      await jobs.addLog(job.id, job.id, tx);
    });
    deps.changed(job.id);
    return;
  }
  // The start page is crawled while the sitemaps are read (which may take minutes: slow hosts, an
  // index of thousands). Until their pages are in the frontier the crawl is seeding: not over, even
  // with no page pending. A seed run again after a crash finds its start page there already.
  const admit = (entries: FrontierEntry[], seeding: boolean) =>
    deps.db.transaction(async (tx) => {
      const locked = await jobs.lock(job.id, tx);
      if (locked === undefined || FINAL_STATUSES.has(locked.status)) return false;
      // Within the budget left by the pages the crawl found meanwhile.
      const added = await jobs.addToFrontier(job.id, entries, policy.maxPages, tx);
      await enqueuePages(job.id, added, tx);
      await jobs.addProgress(job.id, { pagesDiscovered: added.length }, tx);
      if (locked.progress.reading_sitemaps !== seeding) await jobs.setSeeding(job.id, seeding, tx);
      return true;
    });
  const opened = await admit(frontierEntries([{ url: sourceUrl, depth: 0 }]), policy.useSitemap);
  deps.changed(job.id);
  if (!opened || !policy.useSitemap) return;
  using signal = deps.runSignal(job.id, context);
  // The crawl says it is alive meanwhile, so that no sweep takes it for one whose worker died.
  const heartbeat = setInterval(() => void jobs.touch(job.id).catch(() => undefined), HEARTBEAT_MS);
  // Each sitemap's pages are queued as soon as it is read, a slice at a time: the crawl fetches them while
  // the rest of an index is still read, and no admission holds the job row (which every page's commit
  // takes) for long.
  const admitListed = async (urls: string[]): Promise<boolean> => {
    const entries = frontierEntries(urls.filter((url) => policy.accepts(url)).map((url) => ({ url, depth: 1 })));
    for (let at = 0; at < entries.length; at += ADMIT_SLICE) {
      if (!(await admit(entries.slice(at, at + ADMIT_SLICE), true))) return false;
      deps.changed(job.id);
    }
    return true;
  };
  try {
    const timeoutMs = request.timeout_ms ?? deps.settings.defaultTimeoutMs;
    await readSitemaps(sourceUrl, deps.fetcher, { trusted, timeoutMs, signal, limit: policy.maxPages, onUrls: admitListed });
  } finally {
    clearInterval(heartbeat);
  }
  await admit([], false);
  deps.changed(job.id);
  // Its pages may all be done already (the sitemap had nothing new, say).
  await finishIfDone(job.id);
}
