// The one log document of a run, built the same way for a scrape run and for a whole-site crawl.
import type { ScrapeLog } from '../scrape-logs/log-schema.js';
import type { ExtractedItem } from './extract/types.js';
import { scrapeMode } from './scrape-request.js';
import type { ScrapeRequest } from './scrape-schema.js';

/** Raw items a log keeps at most: a document store limits a document's size (MongoDB: 16 MB). */
export const MAX_LOGGED_ITEMS = 5000;

/** A page as its run's log keeps it. */
export interface LoggedPage {
  url: string;
  page_type: string | null;
  items: readonly ExtractedItem[];
  extractor?: string | null;
}

export interface RunDescription {
  id: string;
  /** The job the run belongs to. */
  jobId?: string;
  sourceUrl: string;
  /** The request as shown (passwords masked). */
  request: Pick<ScrapeRequest, 'url' | 'use_selenium'> & Record<string, unknown>;
  startedAt: string;
  /** The one log of a whole-site crawl. */
  crawl?: boolean;
}

export interface RunEnding {
  status: 'succeeded' | 'failed' | 'cancelled';
  finishedAt: string;
  durationMs: number;
  /** Items found over the whole run (the log may keep fewer of them). */
  count?: number;
  created?: number;
  updated?: number;
  warning?: string | null;
  error?: ScrapeLog['error'] | null;
  failedPages?: Array<{ url: string; error: unknown }>;
}

/** The document of a run that has not ended: what the log holds while it runs. */
export function runningLog(run: RunDescription, pages: readonly LoggedPage[]): ScrapeLog {
  const items = pages.flatMap((page) => page.items.map((item) => ({ ...item, page_url: page.url })));
  return {
    id: run.id,
    ...(run.jobId === undefined ? {} : { job_id: run.jobId }),
    source_url: run.sourceUrl,
    mode: scrapeMode(run.request),
    renderer: run.request.use_selenium === true ? 'browser' : 'http',
    status: 'running',
    count: 0,
    products: items.slice(0, MAX_LOGGED_ITEMS) as ScrapeLog['products'],
    ...(items.length > MAX_LOGGED_ITEMS ? { products_truncated: true } : {}),
    pages: pages.length,
    page_urls: pages.map((page) => page.url),
    page_types: pages.map((page) => page.page_type ?? 'none'),
    extractor: pages[0]?.extractor ?? null,
    started_at: run.startedAt,
    finished_at: null,
    duration_ms: null,
    request: run.request,
    ...(run.crawl === true ? { crawl: true } : {}),
  };
}

/** The document of a run that has ended. */
export function endedLog(run: RunDescription, pages: readonly LoggedPage[], ending: RunEnding): ScrapeLog {
  const running = runningLog(run, pages);
  return {
    ...running,
    status: ending.status,
    count: ending.count ?? (ending.status === 'succeeded' ? pages.reduce((n, page) => n + page.items.length, 0) : 0),
    finished_at: ending.finishedAt,
    duration_ms: ending.durationMs,
    ...(ending.created === undefined ? {} : { created: ending.created }),
    ...(ending.updated === undefined ? {} : { updated: ending.updated }),
    ...(ending.warning === undefined || ending.warning === null ? {} : { warning: ending.warning }),
    ...(ending.error === undefined || ending.error === null ? {} : { error: ending.error }),
    ...(ending.failedPages === undefined ? {} : { failed_pages: ending.failedPages }),
  };
}
