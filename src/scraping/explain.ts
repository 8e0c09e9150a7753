// POST /scrape/explain: the same page pipeline as a scrape, with a recorder on each load, storing nothing.
import { describeTarget, type TargetVerdict } from '../egress/address-guard.js';
import type { FetchTrace } from '../egress/page-fetcher.js';
import { toProblem } from '../problems.js';
import { type ExplainCut, firstListed } from './extract/explain-bounds.js';
import type { PageExtractor } from './extract/pool.js';
import type { Selectors } from './extract/types.js';
import { siteRuleWarnings } from './run-log.js';
import { followPagination } from './follow-pagination.js';
import type { LoadPage, PageLoader } from './page-loader.js';
import { pageReader } from './process-page.js';
import { checkScrapeRequest, scrapeMode, sourceUrlOf } from './scrape-request.js';
import type { ScrapeExplanation, ScrapeRequest } from './scrape-schema.js';

export interface ExplainDeps {
  loader: PageLoader;
  extract: PageExtractor;
  demoSiteUrl: string;
  allowPrivateNetworks: boolean;
  /** A page's timeout where the request gives no `timeout_ms`. */
  defaultTimeoutMs: number;
}

/** How a page was loaded: what the fetcher traced plus what came back. */
interface LoadRecord {
  requested_url: string;
  trace: FetchTrace;
  result?: { final_url: string; status: number; content_type: string; html_chars: number };
  error?: string;
  ms?: number;
}

const round1 = (ms: number) => Math.round(ms * 10) / 10;

/** A loader that records every load it makes into `records`. */
function recording(load: LoadPage, records: LoadRecord[]): LoadPage {
  return async (url, options) => {
    const record: LoadRecord = { requested_url: url, trace: { hops: [], robots: [] } };
    records.push(record);
    const started = performance.now();
    try {
      const page = await load(url, { ...options, trace: record.trace });
      record.result = { final_url: page.url, status: page.status, content_type: page.contentType, html_chars: page.html.length };
      return page;
    } catch (error) {
      record.error = toProblem(error).message;
      throw error;
    } finally {
      record.ms = round1(performance.now() - started);
    }
  };
}

/**
 * Fetches and extracts exactly as a scrape would and stores nothing; answers every decision made.
 * Fails with the same problems as a scrape, each carrying what was decided before the failure under
 * the problem's `explanation` member.
 */
export async function explainScrape(deps: ExplainDeps, request: ScrapeRequest, signal: AbortSignal): Promise<ScrapeExplanation> {
  const startedMs = performance.now();
  const mode = scrapeMode(request);
  const sourceUrl = sourceUrlOf(request, deps.demoSiteUrl);
  const target: TargetVerdict =
    request.url === undefined
      ? { url: sourceUrl, verdict: 'allowed', reason: 'the operator-configured demo site is trusted', private_networks_allowed: true, addresses: [] }
      : await describeTarget(sourceUrl, deps.allowPrivateNetworks);
  const guardMs = round1(performance.now() - startedMs);
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
    checkScrapeRequest(request, deps.allowPrivateNetworks);
    const read = pageReader(
      recording(deps.loader.forRequest(request), records),
      deps.extract,
      {
        ...(request.selectors === undefined ? {} : { selectors: request.selectors as Selectors }),
        explain: true,
      },
      request.timeout_ms ?? deps.defaultTimeoutMs,
    );
    const followed = await followPagination(sourceUrl, request.max_pages ?? 1, read, { signal });
    const items = followed.pages.flatMap((page) => page.items.map((item) => ({ ...item, page_url: page.url })));
    const fetched = fetches();
    const cuts: ExplainCut[] = [];
    const ruleWarnings = siteRuleWarnings(followed.pages);
    return {
      stored: false,
      mode,
      renderer: request.use_selenium === true ? 'browser' : 'http',
      source_url: sourceUrl,
      target,
      pages: followed.pages.map((page) => ({
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
        content: page.content,
        markdown: page.markdown,
        timings_ms: page.explanation!.timings_ms,
        truncated: page.explanation!.truncated,
        ...(page.site_rule === undefined ? {} : { site_rule: page.site_rule }),
      })),
      fetches: fetched,
      count: items.length,
      products: firstListed(items, 'products', cuts),
      articles: followed.pages.flatMap((page) => page.articles.map((article) => ({ ...article, page_url: page.url }))),
      ...(followed.stopped ? { warning: followed.stopped } : {}),
      truncated: cuts,
      ...(ruleWarnings.length > 0 ? { site_rule_warnings: ruleWarnings } : {}),
      timings_ms: {
        guard: guardMs,
        fetch: fetched.reduce((sum, f) => sum + (f.ms ?? 0), 0),
        extract: followed.pages.reduce((sum, p) => sum + (p.explanation?.timings_ms.parse ?? 0) + (p.explanation?.timings_ms.extract ?? 0), 0),
        total: round1(performance.now() - startedMs),
      },
    };
  } catch (error) {
    const problem = toProblem(error);
    problem.extensions.explanation = { stored: false, mode, source_url: sourceUrl, target, fetches: fetches() };
    throw problem;
  }
}
