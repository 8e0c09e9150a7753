// One scrape run: fetch (HTTP or browser) -> extract -> store products -> write exactly one log document.
import { randomUUID } from 'node:crypto';
import { load } from 'cheerio';
import type { ProductStore, ScrapedProduct } from '../products/product-store.js';
import { ServiceUnavailable, ValidationFailed, toProblem } from '../problems.js';
import type { ScrapeLog } from '../scrape-logs/log-schema.js';
import type { LogStore } from '../scrape-logs/log-store.js';
import { assertAllowedUrl } from './address-guard.js';
import { crawl, type CrawledPage } from './crawl.js';
import { createHostLimiter } from './host-limiter.js';
import type { ExtractedItem, Selectors } from './extract/types.js';
import type { ScrapeMode, ScrapeRequest, ScrapeResult } from './scrape-schema.js';
import type { PageFetcher, PageRenderer } from './types.js';

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
  now?: () => Date;
}

export interface Scraper {
  scrape(request: ScrapeRequest): Promise<ScrapeResult>;
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

/** A stored product's identity: its own URL, else the page it was found on plus its title. */
function toScrapedProduct(item: ExtractedItem, pageUrl: string): ScrapedProduct {
  return {
    scrape_key: item.url ?? `${pageUrl}#${item.title}`,
    title: item.title,
    price: item.price,
    currency: item.currency,
    description: item.description,
    source_url: item.url ?? pageUrl,
  };
}

function rawItems(pages: CrawledPage[]): ExtractedItem[] {
  return pages.flatMap((page) => page.items);
}

export function createScraper(deps: ScrapeDeps): Scraper {
  const now = deps.now ?? (() => new Date());
  const slots = createHostLimiter(deps.maxConcurrent);
  const shutdown = new AbortController();
  const running = new Set<Promise<unknown>>();
  let queued = 0;
  let draining = false;

  const run = async (request: ScrapeRequest): Promise<ScrapeResult> => {
    const started = now();
    const startedMs = performance.now();
    const mode = scrapeMode(request);
    const viaBrowser = request.use_selenium === true;
    const sourceUrl = request.url ?? deps.demoSiteUrl;
    const trusted = request.url === undefined;
    const timeoutMs = request.timeout_ms ?? deps.defaultTimeoutMs;
    const logId = randomUUID();
    let pages: CrawledPage[] = [];

    const writeLog = async (fields: Partial<ScrapeLog> & Pick<ScrapeLog, 'status' | 'count'>) => {
      const finished = now();
      const log: ScrapeLog = {
        id: logId,
        source_url: sourceUrl,
        mode,
        renderer: viaBrowser ? 'browser' : 'http',
        products: rawItems(pages),
        pages: pages.length,
        page_urls: pages.map((p) => p.url),
        extractor: pages[0]?.extractor ?? null,
        started_at: started.toISOString(),
        finished_at: finished.toISOString(),
        duration_ms: Math.round((performance.now() - startedMs) * 10) / 10,
        request,
        ...fields,
      };
      await deps.logs.insert(log);
      return log;
    };

    try {
      checkSelectors(request);
      if (!trusted) assertAllowedUrl(sourceUrl, deps.allowPrivateNetworks);
      const loadPage = viaBrowser
        ? (url: string) => deps.renderer.render(url, { timeoutMs, trusted, ...(request.wait_for ? { waitFor: request.wait_for } : {}) })
        : (url: string, signal: AbortSignal) => deps.fetcher.fetchPage(url, { timeoutMs, trusted, signal });
      const crawled = await crawl(
        sourceUrl,
        request.max_pages ?? 1,
        loadPage,
        request.selectors as Selectors | undefined,
        shutdown.signal,
      );
      pages = crawled.pages;
      const items = pages.flatMap((page) => page.items.map((item) => toScrapedProduct(item, page.url)));
      const stored = await deps.products.upsertScraped(items);
      const log = await writeLog({
        status: 'succeeded',
        count: stored.products.length,
        created: stored.created,
        updated: stored.updated,
        ...(crawled.stopped ? { warning: crawled.stopped } : {}),
      });
      return {
        log_id: logId,
        mode,
        source_url: sourceUrl,
        pages: pages.length,
        count: stored.products.length,
        created: stored.created,
        updated: stored.updated,
        duration_ms: log.duration_ms,
        extractor: log.extractor ?? null,
        products: stored.products,
      };
    } catch (error) {
      const problem = toProblem(error);
      try {
        await writeLog({
          status: 'failed',
          count: 0,
          error: { type: problem.type, status: problem.status, detail: problem.message },
        });
      } catch {
        // The caller needs the run's own error; an unavailable log store shows on /health.
      }
      throw error;
    }
  };

  return {
    async scrape(request) {
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
      const result = run(request).finally(release);
      const settled = result.catch(() => undefined);
      running.add(settled);
      void settled.finally(() => running.delete(settled));
      return result;
    },
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
