// What a worker does with each queued delivery: run a scrape job, seed a crawl, crawl one page, fire a schedule.
import { randomUUID } from 'node:crypto';
import type { Database } from '../db/database.js';
import { RunCancelled, ServiceUnavailable, toProblem, type HttpProblem } from '../problems.js';
import type { ProductStore } from '../products/product-store.js';
import { assertAllowedUrl } from '../scraping/egress/address-guard.js';
import type { PageExtractor } from '../scraping/extract/pool.js';
import type { Selectors } from '../scraping/extract/types.js';
import { toScrapedProduct, type Scraper } from '../scraping/scrape-pipeline.js';
import type { ScrapeRequest } from '../scraping/scrape-schema.js';
import { readSitemaps } from '../scraping/sitemap.js';
import type { PageFetcher, PageRenderer } from '../scraping/types.js';
import { urlKey } from '../scraping/url-key.js';
import { crawlPolicy } from './crawl-policy.js';
import { writeCrawlLog } from './crawl-log.js';
import type { Handlers, JobQueue, QueuedPage, WorkContext } from './job-queue.js';
import type { Job, JobRequest } from './job-schema.js';
import type { JobService } from './job-service.js';
import { FINAL_STATUSES, type FrontierEntry, type JobStore } from './job-store.js';
import type { LogStore } from '../scrape-logs/log-store.js';
import type { ChangeRecorder } from '../tracking/change-recorder.js';
import type { RunRef } from '../tracking/tracking-store.js';
import type { WebhookSender } from '../tracking/webhook-sender.js';
import { canonicalUrl } from '../scraping/url-key.js';

export interface JobRunnerDeps {
  db: Database;
  jobs: JobStore;
  products: ProductStore;
  logs: LogStore;
  queue: JobQueue;
  service: Pick<JobService, 'create' | 'runSchedule'>;
  scraper: Scraper;
  fetcher: PageFetcher;
  renderer: PageRenderer;
  recorder: ChangeRecorder;
  /** Extraction of crawled pages (the service's thread pool). */
  extract: PageExtractor;
  sender: Pick<WebhookSender, 'deliver'>;
  /** Tells in-process listeners (live progress streams) that a job changed. */
  changed: (jobId: string) => void;
  settings: { demoSiteUrl: string; allowPrivateNetworks: boolean; defaultTimeoutMs: number };
  logger?: { warn(details: object, message: string): void; info(details: object, message: string): void };
}

export interface JobRunner {
  handlers: Handlers;
  /**
   * Repairs what a dead process left: crawls whose last page finished without finishing the job,
   * pages and jobs the queue gave up on while our rows still say pending or running.
   */
  sweep(): Promise<void>;
}

export function createJobRunner(deps: JobRunnerDeps): JobRunner {
  const { jobs } = deps;

  /**
   * A signal for one run: aborted with RunCancelled when the job was cancelled, else with the
   * queue's own reason (shutdown, expiry), after which the queue retries the delivery. `using` it
   * detaches at the end of the handler: the queue aborts its signal after every delivery, done or not.
   */
  const runSignal = (jobId: string, context: WorkContext): AbortSignal & Disposable => {
    const controller = new AbortController();
    const onAbort = () => {
      void jobs.get(jobId).then(
        (job) => controller.abort(job?.status === 'cancelled' ? new RunCancelled() : stopped(context.signal.reason)),
        () => controller.abort(stopped(context.signal.reason)),
      );
    };
    if (context.signal.aborted) onAbort();
    else context.signal.addEventListener('abort', onAbort, { once: true });
    return Object.assign(controller.signal, { [Symbol.dispose]: () => context.signal.removeEventListener('abort', onAbort) });
  };

  const finishCrawlIfDone = async (jobId: string): Promise<void> => {
    if ((await jobs.pendingCount(jobId)) > 0) return;
    const job = await jobs.get(jobId);
    if (job === undefined || FINAL_STATUSES.has(job.status)) return;
    const status = job.progress.pages_done > 0 ? 'succeeded' : 'failed';
    const pages = await jobs.pages(jobId);
    const firstError = pages.find((p) => p.status === 'failed')?.error as Job['error'] | undefined;
    // The log first, under the job's own id: a second finisher's write is refused, not doubled.
    await writeCrawlLog(deps.logs, job, pages, status, status === 'failed' ? firstError ?? null : null);
    const events = await deps.db.transaction(async (tx) => {
      const ended = await jobs.finish(jobId, status, status === 'failed' ? firstError ?? null : null, tx);
      await jobs.addLog(jobId, jobId, tx);
      // Only a crawl that ended well says what its source no longer lists; a failed one counts for nothing.
      return ended !== undefined && status === 'succeeded' ? deps.recorder.finishRun(crawlRun(job), tx) : [];
    });
    deps.recorder.published(events);
    deps.changed(jobId);
  };

  const runScrape = async (job: Job, context: WorkContext): Promise<void> => {
    const started = await jobs.start(job.id);
    if (started === undefined) return; // cancelled before it ran
    deps.changed(job.id);
    using signal = runSignal(job.id, context);
    const { crawl: _crawl, ...request } = ((await jobs.runRequest(job.id)) ?? job.request) as ScrapeRequest & { crawl?: unknown };
    try {
      const result = await deps.scraper.scrape(request, {
        signal,
        jobId: job.id,
        onLog: (logId) => void jobs.addLog(job.id, logId).catch(() => undefined),
        onPage: (page) => {
          void jobs
            .addProgress(job.id, { pagesDone: 1, pagesDiscovered: 1, productsFound: page.items.length })
            .then(() => deps.changed(job.id), () => undefined);
        },
      });
      await jobs.addProgress(job.id, { created: result.created, updated: result.updated });
      await jobs.addLog(job.id, result.log_id);
      await jobs.finish(job.id, 'succeeded');
    } catch (error) {
      const problem = toProblem(error);
      if (problem instanceof RunCancelled) return;
      // Stopped by shutdown or expiry, or a failure that may pass: the queue delivers it again later.
      if ((problem.retryable || signal.aborted) && context.retryCount < context.retryLimit) throw error;
      await jobs.finish(job.id, 'failed', errorOf(problem));
    } finally {
      deps.changed(job.id);
    }
  };

  const seedCrawl = async (job: Job, context: WorkContext): Promise<void> => {
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
      const problem = toProblem(error);
      await writeCrawlLog(deps.logs, job, [], 'failed', errorOf(problem));
      await deps.db.transaction(async (tx) => {
        await jobs.finish(job.id, 'failed', errorOf(problem), tx);
        await jobs.addLog(job.id, job.id, tx);
      });
      deps.changed(job.id);
      return;
    }
    using signal = runSignal(job.id, context);
    const sitemap = policy.useSitemap
      ? await readSitemaps(sourceUrl, deps.fetcher, { trusted, timeoutMs: request.timeout_ms ?? deps.settings.defaultTimeoutMs, signal, limit: policy.maxPages })
      : { urls: [] };
    const candidates = [
      { url: sourceUrl, depth: 0 },
      ...sitemap.urls.filter((url) => policy.accepts(url)).map((url) => ({ url, depth: 1 })),
    ];
    const entries = frontierEntries(candidates).slice(0, policy.maxPages);
    await deps.db.transaction(async (tx) => {
      const locked = await jobs.lock(job.id, tx);
      if (locked === undefined || FINAL_STATUSES.has(locked.status)) return;
      const added = await jobs.addToFrontier(job.id, entries, tx);
      await deps.queue.enqueuePages(added.map((entry) => ({ id: entry.id, job_id: job.id, url: entry.url, depth: entry.depth })), tx);
      await jobs.addProgress(job.id, { pagesDiscovered: added.length }, tx);
    });
    deps.changed(job.id);
  };

  /**
   * A crawl's job as its pages need it (request, source): read once per process and second, not per
   * page. Whether it was cancelled meanwhile is checked under the job row's lock before anything is stored.
   */
  const crawlJobs = new Map<string, { job: Job; request: JobRequest; until: number }>();
  const crawlJob = async (jobId: string): Promise<{ job: Job; request: JobRequest } | undefined> => {
    const cached = crawlJobs.get(jobId);
    if (cached !== undefined && cached.until > Date.now()) return cached;
    const [job, request] = await Promise.all([jobs.get(jobId), jobs.runRequest(jobId)]);
    if (crawlJobs.size > 100) crawlJobs.clear();
    if (job === undefined) return undefined;
    const entry = { job, request: request ?? job.request, until: Date.now() + 1000 };
    crawlJobs.set(jobId, entry);
    return entry;
  };

  const crawlPage = async (page: QueuedPage, context: WorkContext): Promise<void> => {
    const started = performance.now();
    const elapsed = () => Math.round((performance.now() - started) * 100) / 100;
    const running = await crawlJob(page.job_id);
    if (running === undefined || FINAL_STATUSES.has(running.job.status)) return;
    const { job, request } = running;
    const trusted = request.url === undefined;
    const policy = crawlPolicy(request.url ?? job.source_url, request.crawl ?? {});
    using signal = runSignal(job.id, context);
    const timeoutMs = request.timeout_ms ?? deps.settings.defaultTimeoutMs;
    try {
      await politeWait(page.url, trusted, signal);
      const loaded =
        request.use_selenium === true
          ? await deps.renderer.render(page.url, { timeoutMs, trusted, signal, ...(request.wait_for ? { waitFor: request.wait_for } : {}) })
          : await deps.fetcher.fetchPage(page.url, { timeoutMs, trusted, signal });
      signal.throwIfAborted();
      const followLinks = policy.followLinks && page.depth < policy.maxDepth;
      const result = await deps.extract(loaded.html, loaded.url, {
        ...(request.selectors ? { selectors: request.selectors as Selectors } : {}),
        links: followLinks,
      });
      const linked = followLinks
        ? (result.links ?? []).filter((url) => policy.accepts(url)).map((url) => ({ url, depth: page.depth + 1 }))
        : [];
      const discovered = frontierEntries(linked);
      const scraped = result.items.map((item) => toScrapedProduct(item, { url: loaded.url, page_type: result.page_type }));
      const raw = result.items.map((item) => ({ ...item, page_url: loaded.url }));
      let pending: number | undefined;
      const written = await deps.db.transaction(async (tx) => {
        // The job row's lock orders this page against a cancel and against the crawl's other pages.
        const locked = await jobs.lock(job.id, tx);
        if (locked === undefined || FINAL_STATUSES.has(locked.status)) return [];
        if (!(await jobs.settlePage(page.id, { status: 'done', pageType: result.page_type, products: scraped.length, items: raw, durationMs: elapsed() }, tx))) return [];
        const stored = await deps.products.upsertScraped(scraped, { tx, run: crawlRun(job) });
        // Every frontier row is counted in pages_discovered, so the locked row says how much room is left.
        const room = Math.max(0, policy.maxPages - locked.progress.pages_discovered);
        const added = room === 0 ? [] : await jobs.addToFrontier(job.id, discovered.slice(0, room), tx);
        await deps.queue.enqueuePages(added.map((entry) => ({ id: entry.id, job_id: job.id, url: entry.url, depth: entry.depth })), tx);
        ({ pending } = await jobs.addProgress(job.id, { pagesDone: 1, pagesDiscovered: added.length, productsFound: scraped.length, created: stored.created, updated: stored.updated }, tx));
        return stored.events;
      });
      deps.recorder.published(written);
      if (pending !== undefined) deps.changed(job.id);
      if (pending === 0) await finishCrawlIfDone(job.id);
      return;
    } catch (error) {
      const problem = toProblem(error);
      if (problem instanceof RunCancelled) return;
      if ((problem.retryable || signal.aborted) && context.retryCount < context.retryLimit) throw error;
      await deps.db.transaction(async (tx) => {
        const locked = await jobs.lock(job.id, tx);
        if (locked === undefined || FINAL_STATUSES.has(locked.status)) return;
        if (await jobs.settlePage(page.id, { status: 'failed', error: { ...errorOf(problem), url: page.url }, durationMs: elapsed() }, tx)) {
          await jobs.addProgress(job.id, { pagesFailed: 1 }, tx);
        }
      });
      deps.changed(job.id);
      await finishCrawlIfDone(job.id);
    }
  };

  /** robots.txt's Crawl-delay, honoured across every worker: each fetch of a host takes the next free slot. */
  const politeWait = async (url: string, trusted: boolean, signal: AbortSignal): Promise<void> => {
    const { crawlDelaySeconds } = await deps.fetcher.robots(url, { trusted }).catch(() => ({ crawlDelaySeconds: null }));
    if (crawlDelaySeconds === null) return;
    const host = new URL(url).host;
    const [slot] = await deps.db.query<{ wait_ms: number }>(
      `INSERT INTO host_politeness (host, next_at) VALUES ($1, now() + make_interval(secs => $2))
       ON CONFLICT (host) DO UPDATE SET next_at = greatest(host_politeness.next_at, now()) + make_interval(secs => $2)
       RETURNING greatest(0, extract(epoch FROM (next_at - make_interval(secs => $2) - now())) * 1000)::float8 AS wait_ms`,
      [host, Math.min(crawlDelaySeconds, 60)],
    );
    const waitMs = slot?.wait_ms ?? 0;
    if (waitMs > 0) await sleep(waitMs, signal);
  };

  const fireSchedule = async (scheduleId: string): Promise<void> => {
    const job = await deps.service.runSchedule(scheduleId, { manual: false });
    if (job === undefined) deps.logger?.info({ schedule: scheduleId }, 'schedule did not run: paused, gone, or its previous run is still going');
  };

  return {
    handlers: {
      job: async ({ job_id }, context) => {
        const job = await jobs.get(job_id);
        if (job === undefined || FINAL_STATUSES.has(job.status)) return;
        if (job.kind === 'crawl') await seedCrawl(job, context);
        else await runScrape(job, context);
      },
      page: crawlPage,
      scheduled: async ({ schedule_id }) => fireSchedule(schedule_id),
      delivery: (delivery) => deps.sender.deliver(delivery),
    },

    async sweep() {
      for (const jobId of await jobs.stalledCrawls()) await finishCrawlIfDone(jobId);
      // A delivery the queue gave up on (its worker died on every try) leaves our row behind.
      for (const job of await jobs.quietRunning(60)) {
        if (job.kind === 'scrape') {
          const state = await deps.queue.jobState(job.id);
          if (state === 'failed' || state === 'cancelled' || state === 'completed') {
            await jobs.finish(job.id, 'failed', { type: 'urn:data-aggregator:problem:worker-lost', status: 503, detail: 'The worker running this job stopped and its retries ran out.' });
            deps.changed(job.id);
          }
          continue;
        }
        const pending = await jobs.pendingPageIds(job.id);
        const states = await deps.queue.pageStates(pending.slice(0, 200));
        for (const [pageId, state] of states) {
          if (state !== 'failed' && state !== 'cancelled' && state !== 'completed') continue;
          await deps.db.transaction(async (tx) => {
            if (await jobs.settlePage(pageId, { status: 'failed', error: { type: 'urn:data-aggregator:problem:worker-lost', status: 503, detail: 'The worker fetching this page stopped and its retries ran out.' } }, tx)) {
              await jobs.addProgress(job.id, { pagesFailed: 1 }, tx);
            }
          });
        }
        await finishCrawlIfDone(job.id);
      }
    },
  };
}

/** A crawl as a run of its source: the job is the run, its start URL the source. */
function crawlRun(job: Job): RunRef {
  return { id: job.id, source: canonicalUrl(job.source_url) ?? job.source_url, kind: 'scrape' };
}

/** Each URL once, by its canonical key; ids are the queue jobs' ids too. */
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

function errorOf(problem: HttpProblem): NonNullable<Job['error']> {
  return { type: problem.type, status: problem.status, detail: problem.message };
}

function stopped(reason: unknown): Error {
  return reason instanceof Error ? reason : new ServiceUnavailable('The worker stopped this run; it will be retried.');
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
