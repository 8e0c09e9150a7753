// One scrape run through the page pipeline: follow the pages, store them in one transaction, and write exactly one log.
import { randomUUID } from 'node:crypto';
import type { Database } from '../db/queryable.js';
import { createHostLimiter } from '../egress/host-limiter.js';
import { problemRecord, RunCancelled, ServiceUnavailable, UpstreamTimeout, toProblem } from '../problems.js';
import type { RunWriter, WrittenRun } from '../recording/run-writer.js';
import { redactUrl } from '../redact.js';
import type { LogStore } from '../scrape-logs/log-store.js';
import { normalizeTags } from '../tags/tag-schema.js';
import { canonicalUrl } from '../url-identity/url-key.js';
import { explainScrape } from './explain.js';
import type { PageExtractor } from './extract/pool.js';
import type { Selectors } from './extract/types.js';
import { followPagination, type PaginationResult } from './follow-pagination.js';
import type { PageLoader } from './page-loader.js';
import { pageReader, type ProcessedPage } from './process-page.js';
import { endedLog, runningLog, type RunDescription } from './run-log.js';
import { checkScrapeRequest, scrapeMode, sourceUrlOf } from './scrape-request.js';
import type { ContentFormat, ScrapeExplanation, ScrapeRequest, ScrapeResult } from './scrape-schema.js';
import { storePages } from './store-page.js';

export interface ScraperDeps {
  db: Database;
  loader: PageLoader;
  /** How pages are extracted (the service's thread pool). */
  extract: PageExtractor;
  /** The write path: a run's products and articles in one transaction, published after it commits. */
  writer: RunWriter;
  logs: LogStore;
  demoSiteUrl: string;
  allowPrivateNetworks: boolean;
  /** Runs at once across the service; more wait in a queue of at most `maxQueued`, then 503. */
  maxConcurrent: number;
  maxQueued: number;
  /** The longest a whole run may take (SCRAPE_RUN_DEADLINE_MS): past it the run stops with a 504. */
  runDeadlineMs: number;
  /** A page's timeout (SCRAPE_TIMEOUT_MS) where a request gives no `timeout_ms`: its load, then its extraction. */
  defaultTimeoutMs: number;
  now?: () => Date;
  /** The run deadline's timer: a signal that aborts `ms` from now (AbortSignal.timeout); a test aborts it when it chooses. */
  deadline?: (ms: number) => AbortSignal;
}

/** How a caller (a job) follows and stops a run. */
export interface RunOptions {
  /** Stops the run: pages in flight are abandoned, the log says why. */
  signal?: AbortSignal;
  /** Told after each page is loaded and processed. */
  onPage?: (page: ProcessedPage) => void;
  /** The job the run belongs to, recorded in its log. */
  jobId?: string;
  /** Told the id of the run's log document once it exists (when the run starts, as running). */
  onLog?: (logId: string) => void;
}

export interface Scraper {
  scrape(request: ScrapeRequest, options?: RunOptions): Promise<ScrapeResult>;
  /** The same pipeline with a recorder, storing nothing (explain.ts). */
  explain(request: ScrapeRequest): Promise<ScrapeExplanation>;
  /**
   * Shutdown: refuses new runs (503), gives running ones `graceMs` to finish, then aborts them
   * (each still writes its failed log). Resolves when none is left.
   */
  drain(graceMs: number): Promise<void>;
}

const round1 = (ms: number) => Math.round(ms * 10) / 10;

/**
 * Finishes a succeeded run's log, trying a few times over a second (a store that blips). A log that
 * still cannot be finished does not make the run fail (its products are committed): the answer says so.
 */
async function finishWithRetries(finish: () => Promise<void>): Promise<string | undefined> {
  let last: unknown;
  for (const wait of [0, 100, 300, 600]) {
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    try {
      await finish();
      return undefined;
    } catch (error) {
      last = error;
    }
  }
  return `The products were stored, but the run's log could not be finished (${toProblem(last).message}); it stays "running" until marked interrupted.`;
}

export function createScraper(deps: ScraperDeps): Scraper {
  const now = deps.now ?? (() => new Date());
  const startDeadline = deps.deadline ?? ((ms: number) => AbortSignal.timeout(ms));
  const slots = createHostLimiter(deps.maxConcurrent);
  const shutdown = new AbortController();
  const running = new Set<Promise<unknown>>();
  let queued = 0;
  let draining = false;

  const run = async (request: ScrapeRequest, options: RunOptions = {}): Promise<ScrapeResult> => {
    const startedMs = performance.now();
    const sourceUrl = sourceUrlOf(request, deps.demoSiteUrl);
    const described: RunDescription = {
      id: randomUUID(),
      ...(options.jobId === undefined ? {} : { jobId: options.jobId }),
      sourceUrl,
      request,
      startedAt: now().toISOString(),
    };
    /** Pages read so far: what a run that fails or times out still logs. */
    const pages: ProcessedPage[] = [];
    const ending = () => ({ finishedAt: now().toISOString(), durationMs: round1(performance.now() - startedMs) });

    // The log exists from the start, as running: a process that dies mid-run leaves it to be marked
    // interrupted (see interruptDeadRuns), so every run has exactly one log whatever happens.
    await deps.logs.insert(runningLog(described, pages));
    options.onLog?.(described.id);

    // Every run has a total deadline, whatever its pages and timeouts add up to.
    const deadline = startDeadline(deps.runDeadlineMs);
    const signal = AbortSignal.any([shutdown.signal, deadline, ...(options.signal === undefined ? [] : [options.signal])]);
    const overDeadline = () =>
      new UpstreamTimeout(
        `The run did not finish within its deadline of ${deps.runDeadlineMs / 1000} s (SCRAPE_RUN_DEADLINE_MS); ` +
          `nothing was stored, and the ${pages.length} page(s) read are in the log.`,
      );
    let followed: PaginationResult;
    let stored: WrittenRun;
    try {
      checkScrapeRequest(request, deps.allowPrivateNetworks);
      const read = pageReader(
        deps.loader.forRequest(request),
        deps.extract,
        request.selectors === undefined ? {} : { selectors: request.selectors as Selectors },
        request.timeout_ms ?? deps.defaultTimeoutMs,
      );
      followed = await followPagination(sourceUrl, request.max_pages ?? 1, read, {
        signal,
        onPage: (page) => {
          pages.push(page);
          options.onPage?.(page);
        },
      });
      if (deadline.aborted) throw overDeadline();
      // A run that read its source's pagination to the end also says which products the source no
      // longer lists; one cut short (max_pages, a failed page) saw only part of it.
      const runRef = { id: described.id, source: canonicalUrl(sourceUrl) ?? sourceUrl, kind: 'scrape' as const, tags: normalizeTags(request.tags ?? []) };
      stored = await deps.writer.transaction((writes) => storePages(writes, pages, runRef, { complete: followed.complete }));
    } catch (error) {
      // The deadline, not a caller's cancel: a 504 naming it, whatever the abort looked like inside.
      const failure = deadline.aborted && !(options.signal?.aborted ?? false) ? overDeadline() : error;
      const problem = toProblem(failure);
      const status = problem instanceof RunCancelled ? 'cancelled' : 'failed';
      await deps.logs.finish(described.id, endedLog(described, pages, { status, ...ending(), error: problemRecord(problem) })).catch(() => undefined); // the caller needs the run's own error; an unavailable log store shows on /health
      throw failure;
    }

    // The products are committed: from here the run succeeded, whatever happens to its log.
    const log = endedLog(described, pages, {
      status: 'succeeded',
      ...ending(),
      count: stored.products.length,
      created: stored.created,
      updated: stored.updated,
      articles: { count: stored.articles.length, created: stored.articlesCreated, updated: stored.articlesUpdated },
      warning: followed.stopped,
    });
    const logWarning = await finishWithRetries(() => deps.logs.finish(described.id, log));
    return {
      log_id: described.id,
      mode: scrapeMode(request),
      source_url: redactUrl(sourceUrl),
      pages: pages.length,
      count: stored.products.length,
      created: stored.created,
      updated: stored.updated,
      duration_ms: log.duration_ms ?? 0,
      extractor: log.extractor ?? null,
      page_type: pages[0]?.page_type ?? 'none',
      ...mainContentOf(pages[0], request.formats),
      products: stored.products,
      articles: stored.articles,
      articles_created: stored.articlesCreated,
      articles_updated: stored.articlesUpdated,
      ...(logWarning === undefined ? {} : { warning: logWarning }),
      ...(log.site_rule_warnings === undefined ? {} : { site_rule_warnings: log.site_rule_warnings }),
    };
  };

  /** Every run, scrape or explain, takes a slot: explain costs what a scrape costs. */
  const withSlot = async <T>(work: () => Promise<T>): Promise<T> => {
    if (draining) throw new ServiceUnavailable('The service is shutting down; try again shortly.', { retryAfterSeconds: 5 });
    // A burst of scrapes waits in a short queue; beyond it, refuse rather than pile up memory.
    if (queued >= deps.maxQueued) {
      throw new ServiceUnavailable(`All ${deps.maxConcurrent} scrape slots are busy and ${queued} runs are waiting; try again shortly.`, { retryAfterSeconds: 5 });
    }
    queued++;
    let release: () => void;
    try {
      release = await slots.acquire('scrape', shutdown.signal);
    } catch {
      throw new ServiceUnavailable('The service is shutting down; try again shortly.', { retryAfterSeconds: 5 });
    } finally {
      queued--;
    }
    const result = work().finally(release);
    const settled = result.catch(() => undefined);
    running.add(settled);
    void settled.finally(() => running.delete(settled));
    return result;
  };

  return {
    scrape: (request, options) => withSlot(() => run(request, options)),
    explain: (request) =>
      withSlot(async () => {
        // Explain is a run too: the same total deadline, whatever its pages and timeouts add up to.
        const deadline = startDeadline(deps.runDeadlineMs);
        try {
          return await explainScrape(deps, request, AbortSignal.any([shutdown.signal, deadline]));
        } catch (error) {
          if (!deadline.aborted || shutdown.signal.aborted) throw error;
          const late = new UpstreamTimeout(`The explanation did not finish within the run deadline of ${deps.runDeadlineMs / 1000} s (SCRAPE_RUN_DEADLINE_MS).`);
          late.extensions.explanation = toProblem(error).extensions.explanation;
          throw late;
        }
      }),
    async drain(graceMs) {
      draining = true;
      const timer = setTimeout(() => shutdown.abort(new ServiceUnavailable('The service is shutting down; the scrape was stopped.', { retryAfterSeconds: 5 })), graceMs);
      timer.unref();
      try {
        while (running.size > 0) await Promise.all(running);
      } finally {
        clearTimeout(timer);
        shutdown.abort();
      }
    },
  };
}

/** The first page's main content in the forms the request asked for (both unless `formats` says otherwise). */
function mainContentOf(page: ProcessedPage | undefined, formats: readonly ContentFormat[] = ['content', 'markdown']): { content?: string; markdown?: string } {
  if (page === undefined) return {};
  return { ...(formats.includes('content') ? { content: page.content } : {}), ...(formats.includes('markdown') ? { markdown: page.markdown } : {}) };
}
