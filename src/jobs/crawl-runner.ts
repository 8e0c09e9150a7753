// A whole-site crawl as bookkeeping around the page pipeline: seed the frontier, then each queued page is loaded, processed and stored with its links.
import { randomUUID } from 'node:crypto';
import type { Database } from '../db/queryable.js';
import { assertAllowedUrl } from '../egress/address-guard.js';
import { createHostLimiter } from '../egress/host-limiter.js';
import type { FetchedPage, PageFetcher } from '../egress/page-fetcher.js';
import { problemRecord, RunCancelled, SiteBlocked, toProblem, UpstreamFailed, type HttpProblem } from '../problems.js';
import type { Queue, WorkContext } from '../queue/queue.js';
import type { RunWriter } from '../recording/run-writer.js';
import type { LogStore } from '../scrape-logs/log-store.js';
import type { PageExtractor } from '../scraping/extract/pool.js';
import type { Selectors } from '../scraping/extract/types.js';
import type { PageLoader } from '../scraping/page-loader.js';
import { processPage } from '../scraping/process-page.js';
import { siteRuleWarning } from '../scraping/run-log.js';
import { loggedArticle } from '../scraping/run-log.js';
import { readSitemaps } from '../scraping/sitemap.js';
import { storePages } from '../scraping/store-page.js';
import type { RunRef } from '../tracking/tracking-store.js';
import { normalizeTags } from '../tags/tag-schema.js';
import { canonicalUrl, urlKey } from '../url-identity/url-key.js';
import type { CancelRequests } from './cancel-requests.js';
import { storeCrawlPage } from './crawl-page-store.js';
import { crawlPolicy, type CrawlPolicy } from './crawl-policy.js';
import { writeCrawlLog } from './crawl-log.js';
import { SLEEP_IN_SLOT_MS, sleep, waitingMessageId, type HostAnswer, type HostPace } from './host-politeness.js';
import { JOB_QUEUES, type QueuedPage } from './job-queues.js';
import type { Job, JobRequest } from './job-schema.js';
import { FINAL_STATUSES, type FrontierEntry, type JobStore } from './job-store.js';

/** How often a crawl still reading its sitemaps tells that it is alive. */
const HEARTBEAT_MS = 1000;
/** Sitemap pages queued per transaction: the first are fetched while the rest are still being queued. */
const ADMIT_SLICE = 250;

const NO_FRONTIER: NonNullable<Job['error']> = {
  type: 'urn:data-aggregator:problem:crawl-not-seeded',
  status: 503,
  detail: 'The crawl ended before its first page was queued: the worker seeding it stopped and its retries ran out.',
};
const NO_PAGE_STORED: NonNullable<Job['error']> = {
  type: 'urn:data-aggregator:problem:crawl-empty',
  status: 502,
  detail: 'The crawl ended without storing any page.',
};

export interface CrawlRunnerDeps {
  db: Database;
  jobs: JobStore;
  logs: LogStore;
  queue: Pick<Queue, 'enqueue'>;
  fetcher: Pick<PageFetcher, 'fetchResource' | 'robots'>;
  loader: PageLoader;
  extract: PageExtractor;
  /** The write path: a page's products and articles with its bookkeeping, in one transaction. */
  writer: RunWriter;
  pace: HostPace;
  /** Tells in-process listeners (live progress streams) that a job changed. */
  changed: (jobId: string) => void;
  /** Cancels of crawls, seen before the job row says so. */
  cancels: Pick<CancelRequests, 'heard'>;
  /** A signal for one delivery of one job: aborted with RunCancelled when the job was cancelled. */
  runSignal: (jobId: string, context: WorkContext) => AbortSignal & Disposable;
  /** `workerConcurrency`: the pages this process fetches at once, whatever their crawls and hosts. */
  settings: { allowPrivateNetworks: boolean; defaultTimeoutMs: number; workerConcurrency: number };
}

export interface CrawlRunner {
  /** A crawl job's first delivery: the start URL and its sitemap's pages become the frontier. */
  seed(job: Job, context: WorkContext): Promise<void>;
  /** One frontier page. */
  page(page: QueuedPage, context: WorkContext): Promise<void>;
  /** Ends a crawl whose frontier has nothing pending: its log, its status, what its source no longer lists. */
  finishIfDone(jobId: string): Promise<void>;
}

export function createCrawlRunner(deps: CrawlRunnerDeps): CrawlRunner {
  const { jobs } = deps;
  // A slot is held while a page is fetched only: the queue hands this process more pages than it fetches
  // at once (job-system.ts), so a freed slot starts the next fetch at once while the page before it is
  // extracted and committed.
  const fetchSlots = createHostLimiter(Math.max(1, deps.settings.workerConcurrency));

  // The page that continues a listing chain ("next") is handed out before the pages found before it, as
  // a crawler reading a catalogue would: the chain is what leads on to everything else.
  const enqueuePages = (jobId: string, entries: readonly FrontierEntry[], tx: Parameters<JobStore['lock']>[1], nextKey: string | null = null) =>
    deps.queue.enqueue<QueuedPage>(
      JOB_QUEUES.page,
      entries.map((e) => ({ id: e.id, data: { id: e.id, job_id: jobId, url: e.url, depth: e.depth }, ...(e.url_key === nextKey ? { priority: 1 } : {}) })),
      { tx },
    );

  const finishIfDone = async (jobId: string): Promise<void> => {
    if ((await jobs.pendingCount(jobId)) > 0) return;
    const job = await jobs.get(jobId);
    if (job === undefined || FINAL_STATUSES.has(job.status)) return;
    const status = job.progress.pages_done > 0 ? 'succeeded' : 'failed';
    const pages = await jobs.pages(jobId);
    const firstError = pages.find((p) => p.status === 'failed')?.error as Job['error'] | undefined;
    // A failed job always says why: its first failed page's error, or that it had no page at all.
    const error = status === 'succeeded' ? null : (firstError ?? ((await jobs.hasFrontier(jobId)) ? NO_PAGE_STORED : NO_FRONTIER));
    // The log first, under the job's own id: a second finisher's write is refused, not doubled.
    await writeCrawlLog(deps.logs, job, pages, status, error);
    await deps.writer.transaction(async (writes, tx) => {
      const ended = await jobs.finish(jobId, status, error, tx);
      await jobs.addLog(jobId, jobId, tx);
      // Only a crawl that ended well says what its source no longer lists; a failed one counts for nothing.
      if (ended !== undefined && status === 'succeeded') await writes.finish(crawlRun(job));
    });
    deps.changed(jobId);
  };

  /**
   * A crawl's job as its pages need it (request, source, its policy with the globs compiled): read once
   * per process and second, not per page. Whether it was cancelled meanwhile is checked under the job
   * row's lock before the page's transaction commits.
   */
  const crawlJobs = new Map<string, { job: Job; request: JobRequest; policy: CrawlPolicy; until: number }>();
  const crawlJob = async (jobId: string): Promise<{ job: Job; request: JobRequest; policy: CrawlPolicy } | undefined> => {
    const cached = crawlJobs.get(jobId);
    if (cached !== undefined && cached.until > Date.now()) return cached;
    const [job, request] = await Promise.all([jobs.get(jobId), jobs.runRequest(jobId)]);
    if (crawlJobs.size > 100) crawlJobs.clear();
    if (job === undefined) return undefined;
    const run = request ?? job.request;
    const entry = { job, request: run, policy: crawlPolicy(run.url ?? job.source_url, run.crawl ?? {}), until: Date.now() + 1000 };
    crawlJobs.set(jobId, entry);
    return entry;
  };

  /**
   * A page fetched (or rendered) while it holds one of the process's fetch slots; its host's pace learns
   * how it answered. Not fetched after all when this process took a cancel of its crawl while it waited.
   */
  const fetchInSlot = async (url: string, run: { jobId: string; request: JobRequest; trusted: boolean; signal: AbortSignal }): Promise<FetchedPage> => {
    const { request, trusted, signal } = run;
    const release = await fetchSlots.acquire('fetch', signal);
    if (deps.cancels.heard(run.jobId)) {
      release();
      throw new RunCancelled();
    }
    const started = performance.now();
    let answer: HostAnswer;
    try {
      const loaded = await deps.loader.forRequest(request)(url, { signal });
      answer = { latencyMs: performance.now() - started, status: loaded.status, retryAfterMs: undefined };
      return loaded;
    } catch (error) {
      const failed = error instanceof UpstreamFailed ? error : undefined;
      answer = { latencyMs: performance.now() - started, status: failed?.upstreamStatus, retryAfterMs: failed?.retryAfterMs };
      throw error;
    } finally {
      release();
      // Off the slot, and never the page's failure: a pace not adapted once is adapted at the next answer.
      if (!signal.aborted) void deps.pace.answered(url, trusted, answer!).catch(() => undefined);
    }
  };

  return {
    finishIfDone,

    async seed(job, context) {
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
    },

    async page(page, context) {
      const started = performance.now();
      const elapsed = () => Math.round((performance.now() - started) * 100) / 100;
      const running = await crawlJob(page.job_id);
      if (running === undefined || FINAL_STATUSES.has(running.job.status)) return;
      const { job, request, policy } = running;
      // Fresh, not cached: a cancelled crawl fetches nothing more, and a message delivered again after its
      // page was stored (its handler failed after the commit, say) does not fetch the page twice.
      if (deps.cancels.heard(job.id) || !(await jobs.pageOpen(page.id))) return;
      using signal = deps.runSignal(job.id, context);
      const trusted = request.url === undefined;
      try {
        // A retry takes a new moment: the one reserved before the failure (a 429 that moved the host's, say) is past.
        const retriedWhileWaiting = page.polite_at !== undefined && context.retryCount > 0;
        if (page.polite_at === undefined || retriedWhileWaiting) {
          const waitMs = await deps.pace.slot(page.url, trusted);
          // A message already waiting under the page's waiting id cannot go back under that id: it waits here.
          if (waitMs > SLEEP_IN_SLOT_MS && !retriedWhileWaiting) {
            // Politeness to one host costs no other host a slot: the page waits in the queue, not here.
            const polite_at = Date.now() + waitMs;
            await deps.queue.enqueue<QueuedPage>(JOB_QUEUES.page, [{ id: waitingMessageId(page.id), data: { ...page, polite_at } }], { delayMs: waitMs });
            return;
          }
          await sleep(waitMs, signal);
        } else {
          await sleep(page.polite_at - Date.now(), signal); // its moment was reserved when it went back
        }
        const loaded = await fetchInSlot(page.url, { jobId: job.id, request, trusted, signal });
        signal.throwIfAborted();
        // Links are read at max_depth too, only to count what the depth cut.
        const processed = await processPage(
          loaded,
          deps.extract,
          {
            ...(request.selectors ? { selectors: request.selectors as Selectors } : {}),
            links: policy.followLinks,
          },
          { signal, timeoutMs: request.timeout_ms ?? deps.settings.defaultTimeoutMs },
        );
        // The page's "next" link first: when the budget runs short, the listing chain that leads on to
        // everything else is what is kept, not the last of the sidebar and cards before it.
        const links = processed.nextUrl === null ? (processed.links ?? []) : [processed.nextUrl, ...(processed.links ?? [])];
        const nextKey = processed.nextUrl === null ? null : urlKey(processed.nextUrl);
        const linked = policy.followLinks ? links.filter((url) => policy.accepts(url)).map((url) => ({ url, depth: page.depth + 1 })) : [];
        const discovered = frontierEntries(linked);
        const tooDeep = page.depth >= policy.maxDepth;
        const raw = processed.items.map((item) => ({ ...item, page_url: processed.url }));
        const rawArticles = processed.articles.map((article) => loggedArticle(article));
        let pending: number | undefined;
        await deps.writer
          .transaction(async (writes, tx) => {
            // What the page holds is written first, its bookkeeping last, in one statement that locks the
            // crawl's job row (crawl-page-store.ts): pages of a crawl commit in parallel, and the lock that
            // orders them against a cancel and the crawl's budget is held only from there to the commit.
            const stored = await storePages(writes, [processed], crawlRun(job));
            const settled = await storeCrawlPage(
              {
                jobId: job.id,
                pageId: page.id,
                outcome: {
                  pageType: processed.page_type,
                  products: processed.items.length,
                  items: raw,
                  articles: rawArticles,
                  durationMs: elapsed(),
                  siteRuleWarning: siteRuleWarning(processed),
                },
                links: discovered,
                maxPages: policy.maxPages,
                tooDeep,
                progress: {
                  productsFound: processed.items.length,
                  created: stored.created,
                  updated: stored.updated,
                  articlesFound: processed.articles.length,
                  articlesCreated: stored.articlesCreated,
                  articlesUpdated: stored.articlesUpdated,
                },
              },
              tx,
            );
            // The crawl ended, or a delivery of the same page got here first: what was written above is rolled back.
            if (settled.ended || !settled.settled) throw new PageNotStored();
            await enqueuePages(job.id, settled.added, tx, nextKey);
            pending = settled.pending;
          })
          .catch((error: unknown) => {
            if (!(error instanceof PageNotStored)) throw error;
          });
        if (pending !== undefined) deps.changed(job.id);
        if (pending === 0) await finishIfDone(job.id);
      } catch (error) {
        const problem = toProblem(error);
        if (problem instanceof RunCancelled) return;
        if ((problem.retryable || signal.aborted) && context.retryCount < context.retryLimit) throw error;
        await deps.db.transaction(async (tx) => {
          const locked = await jobs.lock(job.id, tx);
          if (locked === undefined || FINAL_STATUSES.has(locked.status)) return;
          if (await jobs.settlePage(page.id, { status: 'failed', error: { ...errorOf(problem), url: page.url }, durationMs: elapsed() }, tx)) {
            await jobs.addProgress(job.id, { pagesFailed: 1, pagesBlocked: problem instanceof SiteBlocked ? 1 : 0 }, tx);
          }
        });
        deps.changed(job.id);
        await finishIfDone(job.id);
      }
    },
  };
}

/** A crawl as a run of its source: the job is the run, its start URL the source. */
export function crawlRun(job: Job): RunRef {
  return { id: job.id, source: canonicalUrl(job.source_url) ?? job.source_url, kind: 'scrape', tags: normalizeTags(job.request.tags ?? []) };
}

/** Each URL once, by its canonical key; ids are the queue messages' ids too. */
function frontierEntries(candidates: ReadonlyArray<{ url: string; depth: number }>): FrontierEntry[] {
  const seen = new Set<string>();
  const entries: FrontierEntry[] = [];
  for (const { url, depth } of candidates) {
    const key = urlKey(url);
    if (key === null || seen.has(key)) continue;
    seen.add(key);
    entries.push({ id: randomUUID(), url_key: key, url, depth });
  }
  return entries;
}

/** Rolls back a page's transaction that found its crawl ended or its page settled already: nothing of it is stored. */
class PageNotStored extends Error {}

export function errorOf(problem: HttpProblem): NonNullable<Job['error']> {
  return problemRecord(problem) as NonNullable<Job['error']>;
}
