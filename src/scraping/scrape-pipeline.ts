// One scrape run: fetch (HTTP or browser) -> extract -> store products -> write exactly one log document.
import { randomUUID } from 'node:crypto';
import { load } from 'cheerio';
import type { ProductStore, ScrapedProduct } from '../products/product-store.js';
import { RunCancelled, ServiceUnavailable, UpstreamTimeout, ValidationFailed, toProblem } from '../problems.js';
import type { ScrapeLog } from '../scrape-logs/log-schema.js';
import type { LogStore } from '../scrape-logs/log-store.js';
import { assertAllowedUrl, describeTarget, type TargetVerdict } from './egress/address-guard.js';
import { crawl, type CrawledPage, type CrawlResult } from './crawl.js';
import type { PageExtractor } from './extract/pool.js';
import { canonicalUrl, productKey } from './url-key.js';
import { redactUrl } from '../redact.js';
import { createHostLimiter } from './egress/host-limiter.js';
import type { ExtractedItem, Selectors } from './extract/types.js';
import type { ScrapeExplanation, ScrapeMode, ScrapeRequest, ScrapeResult } from './scrape-schema.js';
import type { FetchedPage, FetchTrace, PageFetcher, PageRenderer } from './types.js';

export interface ScrapeDeps {
  fetcher: PageFetcher;
  renderer: PageRenderer;
  products: ProductStore;
  logs: LogStore;
  demoSiteUrl: string;
  allowPrivateNetworks: boolean;
  defaultTimeoutMs: number;
  /** Runs at once across the service; more wait in a queue of at most `maxQueued`, then 503. */
  maxConcurrent: number;
  maxQueued: number;
  /** The longest a whole run may take (SCRAPE_RUN_DEADLINE_MS): past it the run stops with a 504. */
  runDeadlineMs: number;
  /** How pages are extracted (the service's thread pool); inline when absent. */
  extract?: PageExtractor;
  now?: () => Date;
}

/** How a caller (a job) follows and stops a run. */
export interface RunOptions {
  /** Stops the run: pages in flight are abandoned, the log says why. */
  signal?: AbortSignal;
  /** Told after each page is fetched and extracted. */
  onPage?: (page: CrawledPage) => void;
  /** The job the run belongs to, recorded in its log. */
  jobId?: string;
  /** Told the id of the run's log document once it exists (when the run starts, as running). */
  onLog?: (logId: string) => void;
}

export interface Scraper {
  scrape(request: ScrapeRequest, options?: RunOptions): Promise<ScrapeResult>;
  /**
   * Fetches and extracts exactly as `scrape` would and stores nothing; answers every decision made.
   * Fails with the same problems as `scrape`, each carrying what was decided before the failure
   * under the problem's `explanation` member.
   */
  explain(request: ScrapeRequest): Promise<ScrapeExplanation>;
  /**
   * Shutdown: refuses new runs (503), gives running ones `graceMs` to finish, then aborts them
   * (each still writes its failed log). Resolves when none is left.
   */
  drain(graceMs: number): Promise<void>;
}

export function scrapeMode(request: ScrapeRequest): ScrapeMode {
  if (request.url === undefined) return 'demo';
  return request.use_selenium ? 'dynamic' : 'static';
}

/** Rejects selectors the CSS engine cannot parse, before any page is fetched. */
function checkSelectors(request: ScrapeRequest): void {
  const $ = load('<p></p>');
  const candidates: Array<[string, string | undefined]> = [
    ...Object.entries(request.selectors ?? {}).map(([key, value]) => [`/body/selectors/${key}`, value] as [string, string]),
    ['/body/wait_for', request.wait_for],
  ];
  const errors = candidates.flatMap(([path, selector]) => {
    if (selector === undefined) return [];
    try {
      $(selector);
      return [];
    } catch {
      return [{ path, message: 'is not a valid CSS selector' }];
    }
  });
  if (errors.length > 0) throw new ValidationFailed(errors);
}

/**
 * A stored product. Its identity is its own URL, else the page it was found on plus its title, in
 * canonical form (productKey); URLs it shows carry no password.
 */
export function toScrapedProduct(item: ExtractedItem, page: Pick<CrawledPage, 'url' | 'page_type'>): ScrapedProduct {
  return {
    scrape_key: productKey(item.url, page.url, item.title),
    title: item.title,
    price: item.price,
    currency: item.currency,
    description: item.description,
    source_url: redactUrl(item.url ?? page.url),
    list_price: item.list_price,
    availability: item.availability,
    sku: item.sku,
    gtin: item.gtin,
    brand: item.brand,
    image_url: item.image_url === null ? null : redactUrl(item.image_url),
    provenance: { page_url: redactUrl(page.url), page_type: page.page_type, fields: item.provenance },
  };
}

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

/** The log keeps every raw item as extracted, with the page it came from. */
function rawItems(pages: CrawledPage[]): Array<ExtractedItem & { page_url: string }> {
  return pages.flatMap((page) => page.items.map((item) => ({ ...item, page_url: page.url })));
}

export function createScraper(deps: ScrapeDeps): Scraper {
  const now = deps.now ?? (() => new Date());
  const slots = createHostLimiter(deps.maxConcurrent);
  const shutdown = new AbortController();
  const running = new Set<Promise<unknown>>();
  let queued = 0;
  let draining = false;

  /** How a page was loaded, for explain: what the fetcher traced plus what came back. */
  interface LoadRecord {
    requested_url: string;
    trace: FetchTrace;
    result?: { final_url: string; status: number; content_type: string; html_chars: number };
    error?: string;
    ms?: number;
  }

  /** Fetch (HTTP or browser) and extract every page of a run: the one path scrape and explain share. */
  const crawlPages = (request: ScrapeRequest, records?: LoadRecord[], run: RunOptions = {}): Promise<CrawlResult> => {
    const sourceUrl = request.url ?? deps.demoSiteUrl;
    const trusted = request.url === undefined;
    const timeoutMs = request.timeout_ms ?? deps.defaultTimeoutMs;
    checkSelectors(request);
    if (!trusted) assertAllowedUrl(sourceUrl, deps.allowPrivateNetworks);
    const load = (url: string, signal: AbortSignal, trace?: FetchTrace): Promise<FetchedPage> =>
      request.use_selenium === true
        ? deps.renderer.render(url, { timeoutMs, trusted, signal, ...(request.wait_for ? { waitFor: request.wait_for } : {}) })
        : deps.fetcher.fetchPage(url, { timeoutMs, trusted, signal, ...(trace ? { trace } : {}) });
    const loadPage =
      records === undefined
        ? load
        : async (url: string, signal: AbortSignal) => {
            const record: LoadRecord = { requested_url: url, trace: { hops: [], robots: [] } };
            records.push(record);
            const started = performance.now();
            try {
              const page = await load(url, signal, record.trace);
              record.result = { final_url: page.url, status: page.status, content_type: page.contentType, html_chars: page.html.length };
              return page;
            } catch (error) {
              record.error = toProblem(error).message;
              throw error;
            } finally {
              record.ms = Math.round((performance.now() - started) * 10) / 10;
            }
          };
    return crawl(sourceUrl, request.max_pages ?? 1, loadPage, {
      selectors: request.selectors as Selectors | undefined,
      signal: run.signal === undefined ? shutdown.signal : AbortSignal.any([shutdown.signal, run.signal]),
      ...(run.onPage ? { onPage: run.onPage } : {}),
      ...(deps.extract ? { extract: deps.extract } : {}),
      explain: records !== undefined,
    });
  };

  const run = async (request: ScrapeRequest, options: RunOptions = {}): Promise<ScrapeResult> => {
    const started = now();
    const startedMs = performance.now();
    const mode = scrapeMode(request);
    const viaBrowser = request.use_selenium === true;
    const sourceUrl = request.url ?? deps.demoSiteUrl;
    const logId = randomUUID();
    /** Pages read so far: what a run that fails or times out still logs. */
    const pages: CrawledPage[] = [];
    const document = (): Omit<ScrapeLog, 'status' | 'count'> => ({
      id: logId,
      source_url: sourceUrl,
      mode,
      renderer: viaBrowser ? 'browser' : 'http',
      products: rawItems(pages),
      pages: pages.length,
      page_urls: pages.map((p) => p.url),
      extractor: pages[0]?.extractor ?? null,
      page_types: pages.map((p) => p.page_type),
      started_at: started.toISOString(),
      finished_at: null,
      duration_ms: null,
      request,
      ...(options.jobId === undefined ? {} : { job_id: options.jobId }),
    });
    const ending = (fields: Partial<ScrapeLog> & Pick<ScrapeLog, 'status' | 'count'>): ScrapeLog => ({
      ...document(),
      finished_at: now().toISOString(),
      duration_ms: Math.round((performance.now() - startedMs) * 10) / 10,
      ...fields,
    });

    // The log exists from the start, as running: a process that dies mid-run leaves it to be marked
    // interrupted (see interruptRunning), so every run has exactly one log whatever happens.
    await deps.logs.insert({ ...document(), status: 'running', count: 0 });
    options.onLog?.(logId);

    // Every run has a total deadline, whatever its pages and timeouts add up to.
    const deadline = AbortSignal.timeout(deps.runDeadlineMs);
    const signal = options.signal === undefined ? deadline : AbortSignal.any([options.signal, deadline]);
    const overDeadline = () =>
      new UpstreamTimeout(
        `The run did not finish within its deadline of ${deps.runDeadlineMs / 1000} s (SCRAPE_RUN_DEADLINE_MS); ` +
          `nothing was stored, and the ${pages.length} page(s) read are in the log.`,
      );
    let stored: Awaited<ReturnType<ProductStore['upsertScraped']>>;
    let crawled: CrawlResult;
    try {
      crawled = await crawlPages(request, undefined, {
        ...options,
        signal,
        onPage: (page) => {
          pages.push(page);
          options.onPage?.(page);
        },
      });
      if (deadline.aborted) throw overDeadline();
      const items = pages.flatMap((page) => page.items.map((item) => toScrapedProduct(item, page)));
      // A run that read its source's pagination to the end also says which products the source no
      // longer lists; one cut short (max_pages, a failed page) saw only part of it.
      stored = await deps.products.upsertScraped(items, {
        run: { id: logId, source: canonicalUrl(sourceUrl) ?? sourceUrl, kind: 'scrape' },
        complete: crawled.complete,
      });
    } catch (error) {
      // The deadline, not a caller's cancel: a 504 naming it, whatever the abort looked like inside.
      const failure = deadline.aborted && !(options.signal?.aborted ?? false) ? overDeadline() : error;
      const problem = toProblem(failure);
      const status = problem instanceof RunCancelled ? 'cancelled' : 'failed';
      await deps.logs
        .finish(logId, ending({ status, count: 0, error: { type: problem.type, status: problem.status, detail: problem.message } }))
        .catch(() => undefined); // the caller needs the run's own error; an unavailable log store shows on /health
      throw failure;
    }

    // The products are committed: from here the run succeeded, whatever happens to its log.
    const log = ending({
      status: 'succeeded',
      count: stored.products.length,
      created: stored.created,
      updated: stored.updated,
      ...(crawled.stopped ? { warning: crawled.stopped } : {}),
    });
    const logWarning = await finishWithRetries(() => deps.logs.finish(logId, log));
    return {
      log_id: logId,
      mode,
      source_url: redactUrl(sourceUrl),
      pages: pages.length,
      count: stored.products.length,
      created: stored.created,
      updated: stored.updated,
      duration_ms: log.duration_ms ?? 0,
      extractor: log.extractor ?? null,
      page_type: pages[0]?.page_type ?? 'none',
      products: stored.products,
      articles: pages.flatMap((page) => page.articles.map((article) => ({ ...article, page_url: page.url }))),
      ...(logWarning === undefined ? {} : { warning: logWarning }),
    };
  };

  const runExplain = async (request: ScrapeRequest): Promise<ScrapeExplanation> => {
    const startedMs = performance.now();
    const mode = scrapeMode(request);
    const sourceUrl = request.url ?? deps.demoSiteUrl;
    const target: TargetVerdict =
      request.url === undefined
        ? { url: sourceUrl, verdict: 'allowed', reason: 'the operator-configured demo site is trusted', private_networks_allowed: true, addresses: [] }
        : await describeTarget(sourceUrl, deps.allowPrivateNetworks);
    const guardMs = Math.round((performance.now() - startedMs) * 10) / 10;
    const records: LoadRecord[] = [];
    const fetches = () =>
      records.map((r) => ({
        requested_url: r.requested_url,
        ...r.result,
        ...(r.error === undefined ? {} : { error: r.error }),
        ms: r.ms ?? null,
        redirects: r.trace.hops,
        robots: r.trace.robots,
        ...(r.trace.bytes === undefined ? {} : { bytes: r.trace.bytes }),
        ...(r.trace.charset === undefined ? {} : { charset: r.trace.charset }),
      }));
    try {
      const crawled = await crawlPages(request, records);
      const items = crawled.pages.flatMap((page) => page.items.map((item) => ({ ...item, page_url: page.url })));
      const fetched = fetches();
      return {
        stored: false,
        mode,
        renderer: request.use_selenium === true ? 'browser' : 'http',
        source_url: sourceUrl,
        target,
        pages: crawled.pages.map((page) => ({
          url: page.url,
          fetch: fetched.find((f) => f.final_url === page.url) ?? null,
          page_type: page.explanation!.page_type,
          extractor: page.extractor,
          candidates: page.explanation!.candidates,
          skipped: page.explanation!.skipped,
          dropped: page.explanation!.dropped,
          items: page.explanation!.items,
          article_candidates: page.explanation!.article_candidates,
          articles: page.explanation!.articles,
          timings_ms: page.explanation!.timings_ms,
        })),
        fetches: fetched,
        count: items.length,
        products: items,
        articles: crawled.pages.flatMap((page) => page.articles.map((article) => ({ ...article, page_url: page.url }))),
        ...(crawled.stopped ? { warning: crawled.stopped } : {}),
        timings_ms: {
          guard: guardMs,
          fetch: fetched.reduce((sum, f) => sum + (f.ms ?? 0), 0),
          extract: crawled.pages.reduce((sum, p) => sum + (p.explanation?.timings_ms.parse ?? 0) + (p.explanation?.timings_ms.extract ?? 0), 0),
          total: Math.round((performance.now() - startedMs) * 10) / 10,
        },
      };
    } catch (error) {
      const problem = toProblem(error);
      problem.extensions.explanation = { stored: false, mode, source_url: sourceUrl, target, fetches: fetches() };
      throw problem;
    }
  };

  /** Every run, scrape or explain, takes a slot: explain costs what a scrape costs. */
  const withSlot = async <T>(work: () => Promise<T>): Promise<T> => {
    if (draining) throw new ServiceUnavailable('The service is shutting down; try again shortly.', { retryAfterSeconds: 5 });
    // A burst of scrapes waits in a short queue; beyond it, refuse rather than pile up memory.
    if (queued >= deps.maxQueued) {
      throw new ServiceUnavailable(
        `All ${deps.maxConcurrent} scrape slots are busy and ${queued} runs are waiting; try again shortly.`,
        { retryAfterSeconds: 5 },
      );
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
    explain: (request) => withSlot(() => runExplain(request)),
    async drain(graceMs) {
      draining = true;
      const deadline = setTimeout(
        () => shutdown.abort(new ServiceUnavailable('The service is shutting down; the scrape was stopped.', { retryAfterSeconds: 5 })),
        graceMs,
      );
      deadline.unref();
      try {
        while (running.size > 0) await Promise.all(running);
      } finally {
        clearTimeout(deadline);
        shutdown.abort();
      }
    },
  };
}
