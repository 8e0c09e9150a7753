// One loaded page through extraction: what it is, its items and articles, its next page and links.
import { raceAbort } from '../egress/abort.js';
import { SiteBlocked, UpstreamTimeout } from '../problems.js';
import type { FetchedPage } from '../egress/page-fetcher.js';
import type { ExtractOptions } from './extract/index.js';
import type { PageExtractor } from './extract/pool.js';
import type { ExtractionResult, SiteRuleSpec } from './extract/types.js';
import type { LoadPage } from './page-loader.js';

/** A page as the pipeline knows it once processed: where it ended up, and what extraction found there. */
export interface ProcessedPage extends ExtractionResult {
  url: string;
}

/** Reads one page: load, then process. */
export type ReadPage = (url: string, signal: AbortSignal) => Promise<ProcessedPage>;

/** A thread that has not taken the page up after this long is as good as stuck: the page's timeout starts anyway. */
const THREAD_START_MS = 60_000;

/**
 * Extraction stops when `signal` aborts (the run's deadline, a cancel) or `timeout_ms` after it began
 * (the wait for a thread and its start not counted): a page that would take minutes to extract
 * outlives neither.
 */
export async function processPage(
  loaded: FetchedPage,
  extract: PageExtractor,
  options: ExtractOptions,
  limits: { signal?: AbortSignal | undefined; timeoutMs: number },
): Promise<ProcessedPage> {
  const timeout = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  const begin = () => {
    timer ??= setTimeout(
      () => timeout.abort(new UpstreamTimeout(`Extracting ${loaded.url} took longer than the page timeout of ${limits.timeoutMs} ms (timeout_ms); it was stopped.`)),
      limits.timeoutMs,
    );
  };
  const backstop = setTimeout(begin, THREAD_START_MS);
  try {
    const signal = limits.signal === undefined ? timeout.signal : AbortSignal.any([limits.signal, timeout.signal]);
    const result = await extract(loaded.html, loaded.url, options, signal, begin);
    // A wall is not a page with nothing on it: the run says blocked, stores nothing, sees nothing go.
    if (result.blocked !== undefined) throw new SiteBlocked(loaded.url, result.blocked, { upstreamStatus: loaded.status });
    return { url: loaded.url, ...result };
  } finally {
    clearTimeout(backstop);
    clearTimeout(timer);
  }
}

/** Load and process, as one step; a loader that ignores the signal still does not outlive an abort. */
export function pageReader(load: LoadPage, extract: PageExtractor, options: ExtractOptions, timeoutMs: number): ReadPage {
  return async (url, signal) => processPage(await raceAbort(load(url, { signal }), signal), extract, options, { signal, timeoutMs });
}

/** The rule users pinned for a host, if any (site-rules/ behind it). */
export type SiteRuleLookup = (host: string) => Promise<SiteRuleSpec | undefined>;

/**
 * Extraction with the site's pinned rule: every page the pipeline processes (scrape, crawl page,
 * schedule, explain) is extracted with the rule of the host it was loaded from.
 */
export function withSiteRules(extract: PageExtractor, lookup: SiteRuleLookup): PageExtractor {
  return async (html, pageUrl, options = {}, signal, started) => {
    let host: string;
    try {
      host = new URL(pageUrl).hostname;
    } catch {
      return extract(html, pageUrl, options, signal, started);
    }
    const siteRule = await lookup(host);
    // The signal goes on: the page timeout and the run's deadline stop the extraction it wraps.
    return extract(html, pageUrl, siteRule === undefined ? options : { ...options, siteRule }, signal, started);
  };
}
