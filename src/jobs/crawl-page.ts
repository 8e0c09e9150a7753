// One frontier page of a crawl, step by step: wait politely for its host, fetch it in one of the process's slots, process it, store it with its bookkeeping, or record why it failed.
import type { FetchedPage } from '../egress/page-fetcher.js';
import { RunCancelled, SiteBlocked, toProblem, UpstreamFailed, type HttpProblem } from '../problems.js';
import type { WorkContext } from '../queue/queue.js';
import type { Selectors } from '../scraping/extract/types.js';
import { type ProcessedPage, processPage } from '../scraping/process-page.js';
import { loggedArticle, siteRuleWarning } from '../scraping/run-log.js';
import { storePages } from '../scraping/store-page.js';
import { urlKey } from '../url-identity/url-key.js';
import { storeCrawlPage } from './crawl-page-store.js';
import { type CrawlShared, crawlRun, errorOf, frontierEntries, type RunningCrawl } from './crawl-shared.js';
import { SLEEP_IN_SLOT_MS, sleep, waitingMessageId, type HostAnswer } from './host-politeness.js';
import { JOB_QUEUES, type QueuedPage } from './job-queues.js';
import type { JobRequest } from './job-schema.js';
import { FINAL_STATUSES } from './job-store.js';

/** Rolls back a page's transaction that found its crawl ended or its page settled already: nothing of it is stored. */
class PageNotStored extends Error {}

/** One page of a crawl, as its steps see it. */
interface PageRun extends RunningCrawl {
  page: QueuedPage;
  trusted: boolean;
  signal: AbortSignal;
  /** Milliseconds since the page's delivery began. */
  elapsed(): number;
}

/** Crawls one frontier page (its queue message): nothing for a settled page, an ended crawl or one whose cancel was heard. */
export async function crawlPage(shared: CrawlShared, page: QueuedPage, context: WorkContext): Promise<void> {
  const { deps, jobs } = shared;
  const started = performance.now();
  const running = await shared.crawlJob(page.job_id);
  if (running === undefined || FINAL_STATUSES.has(running.job.status)) return;
  // Fresh, not cached: a cancelled crawl fetches nothing more, and a message delivered again after its
  // page was stored (its handler failed after the commit, say) does not fetch the page twice.
  if (deps.cancels.heard(running.job.id) || !(await jobs.pageOpen(page.id))) return;
  using signal = deps.runSignal(running.job.id, context);
  const run: PageRun = { ...running, page, trusted: running.request.url === undefined, signal, elapsed: () => Math.round((performance.now() - started) * 100) / 100 };
  try {
    if (!(await waitPolitely(shared, run, context))) return;
    const loaded = await fetchInSlot(shared, page.url, run);
    signal.throwIfAborted();
    // Links are read at max_depth too, only to count what the depth cut. A crawl's log keeps no page's main content: it is not read.
    const processed = await processPage(
      loaded,
      deps.extract,
      { ...(run.request.selectors ? { selectors: run.request.selectors as Selectors } : {}), links: run.policy.followLinks, content: false },
      { signal, timeoutMs: run.request.timeout_ms ?? deps.settings.defaultTimeoutMs },
    );
    await storePage(shared, run, processed);
  } catch (error) {
    const problem = toProblem(error);
    if (problem instanceof RunCancelled) return;
    if ((problem.retryable || signal.aborted) && context.retryCount < context.retryLimit) throw error;
    await failPage(shared, run, problem);
  }
}

/**
 * Waits for the page's host to take another request (robots.txt's Crawl-delay, AutoThrottle, across
 * workers). A long wait goes back to the queue instead, so that politeness to one host costs no other
 * host a slot: false then, the page is not fetched in this delivery.
 */
async function waitPolitely(shared: CrawlShared, run: PageRun, context: WorkContext): Promise<boolean> {
  const { page, signal } = run;
  // A retry takes a new moment: the one reserved before the failure (a 429 that moved the host's, say) is past.
  const retriedWhileWaiting = page.polite_at !== undefined && context.retryCount > 0;
  if (page.polite_at !== undefined && !retriedWhileWaiting) {
    await sleep(page.polite_at - Date.now(), signal); // its moment was reserved when it went back
    return true;
  }
  const waitMs = await shared.deps.pace.slot(page.url, run.trusted);
  // A message already waiting under the page's waiting id cannot go back under that id: it waits here.
  if (waitMs > SLEEP_IN_SLOT_MS && !retriedWhileWaiting) {
    const polite_at = Date.now() + waitMs;
    await shared.deps.queue.enqueue<QueuedPage>(JOB_QUEUES.page, [{ id: waitingMessageId(page.id), data: { ...page, polite_at } }], { delayMs: waitMs });
    return false;
  }
  await sleep(waitMs, signal);
  return true;
}

/**
 * A page fetched (or rendered) while it holds one of the process's fetch slots; its host's pace learns
 * how it answered. Not fetched after all when this process took a cancel of its crawl while it waited.
 */
async function fetchInSlot(shared: CrawlShared, url: string, run: { job: { id: string }; request: JobRequest; trusted: boolean; signal: AbortSignal }): Promise<FetchedPage> {
  const { deps } = shared;
  const { request, trusted, signal } = run;
  const release = await shared.fetchSlots.acquire('fetch', signal);
  if (deps.cancels.heard(run.job.id)) {
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
}

/**
 * What the page holds, then its bookkeeping, in one transaction through the run writer: the
 * bookkeeping is one statement that locks the crawl's job row (crawl-page-store.ts), so pages of a
 * crawl commit in parallel and the lock that orders them against a cancel and the crawl's budget is
 * held only from there to the commit. The links it found join the frontier; the crawl may end here.
 */
async function storePage(shared: CrawlShared, run: PageRun, processed: ProcessedPage): Promise<void> {
  const { deps } = shared;
  const { job, page, policy } = run;
  // The page's "next" link first: when the budget runs short, the listing chain that leads on to
  // everything else is what is kept, not the last of the sidebar and cards before it.
  const links = processed.nextUrl === null ? (processed.links ?? []) : [processed.nextUrl, ...(processed.links ?? [])];
  const nextKey = processed.nextUrl === null ? null : urlKey(processed.nextUrl);
  const linked = policy.followLinks ? links.filter((url) => policy.accepts(url)).map((url) => ({ url, depth: page.depth + 1 })) : [];
  let pending: number | undefined;
  await deps.writer
    .transaction(async (writes, tx) => {
      const stored = await storePages(writes, [processed], crawlRun(job));
      const settled = await storeCrawlPage(
        {
          jobId: job.id,
          pageId: page.id,
          outcome: {
            pageType: processed.page_type,
            products: processed.items.length,
            items: processed.items.map((item) => ({ ...item, page_url: processed.url })),
            articles: processed.articles.map((article) => loggedArticle(article)),
            durationMs: run.elapsed(),
            siteRuleWarning: siteRuleWarning(processed),
          },
          links: frontierEntries(linked),
          maxPages: policy.maxPages,
          tooDeep: page.depth >= policy.maxDepth,
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
      await shared.enqueuePages(job.id, settled.added, tx, nextKey);
      pending = settled.pending;
    })
    .catch((error: unknown) => {
      if (!(error instanceof PageNotStored)) throw error;
    });
  if (pending !== undefined) deps.changed(job.id);
  if (pending === 0) await shared.finishIfDone(job.id);
}

/** The page failed for good (its retries ran out, or asking again will not help): settled as failed, with why; a wall counted apart. */
async function failPage(shared: CrawlShared, run: PageRun, problem: HttpProblem): Promise<void> {
  const { deps, jobs } = shared;
  const { job, page } = run;
  await deps.db.transaction(async (tx) => {
    const locked = await jobs.lock(job.id, tx);
    if (locked === undefined || FINAL_STATUSES.has(locked.status)) return;
    if (await jobs.settlePage(page.id, { status: 'failed', error: { ...errorOf(problem), url: page.url }, durationMs: run.elapsed() }, tx)) {
      await jobs.addProgress(job.id, { pagesFailed: 1, pagesBlocked: problem instanceof SiteBlocked ? 1 : 0 }, tx);
    }
  });
  deps.changed(job.id);
  await shared.finishIfDone(job.id);
}
