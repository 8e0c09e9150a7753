// The one log document of a run, built the same way for a scrape run and for a whole-site crawl.
import type { ScrapeLog } from '../scrape-logs/log-schema.js';
import type { ExtractedArticle, ExtractedItem, SiteRuleOutcome } from './extract/types.js';
import { scrapeMode } from './scrape-request.js';
import type { ScrapeRequest } from './scrape-schema.js';

/** Raw items a log keeps at most: a document store limits a document's size (MongoDB: 16 MB). */
export const MAX_LOGGED_ITEMS = 5000;

/** A page as its run's log keeps it. */
export interface LoggedPage {
  url: string;
  page_type: string | null;
  items: readonly ExtractedItem[];
  /** Its articles as extracted (a crawl's stored pages keep them as loggedArticle made them). */
  articles?: ReadonlyArray<ExtractedArticle | LoggedArticle>;
  extractor?: string | null;
  /** The site rule that applied to the page (a scrape's pages) … */
  site_rule?: SiteRuleOutcome;
  /** … or its warning as a crawl page kept it. */
  site_rule_warning?: string | null;
  /** Its main content (a scrape's pages). */
  content?: string;
  markdown?: string;
}

/** Characters of main content (text and Markdown together) a log keeps over all its pages: a document store limits a document's size. */
export const MAX_LOGGED_CONTENT_CHARS = 2_000_000;

/** Each page's main content while the budget lasts, in page order; whether any was left out. */
function loggedContents(pages: readonly LoggedPage[]): { contents: Array<{ url: string; content: string; markdown: string }>; truncated: boolean } {
  const contents: Array<{ url: string; content: string; markdown: string }> = [];
  let left = MAX_LOGGED_CONTENT_CHARS;
  for (const page of pages) {
    if (page.content === undefined || page.markdown === undefined) continue;
    const size = page.content.length + page.markdown.length;
    if (size > left) return { contents, truncated: true };
    left -= size;
    contents.push({ url: page.url, content: page.content, markdown: page.markdown });
  }
  return { contents, truncated: false };
}

/** Warnings a log keeps at most: one per page whose rule missed, and a crawl has thousands of pages. */
const MAX_RULE_WARNINGS = 50;

/** What a page's site rule found nothing for, said for people; null when it found everything it pins. */
export function siteRuleWarning(page: { url: string; site_rule?: SiteRuleOutcome | undefined }): string | null {
  const rule = page.site_rule;
  if (rule === undefined || rule.missed.length === 0) return null;
  return `site rule ${rule.id} (${rule.host_pattern}) found nothing for ${rule.missed.join(', ')} on ${page.url}: the site may have changed its layout`;
}

/** The site-rule warnings of a run's pages, bounded. */
export function siteRuleWarnings(pages: readonly LoggedPage[]): string[] {
  const out: string[] = [];
  for (const page of pages) {
    const warning = page.site_rule_warning ?? siteRuleWarning(page);
    if (warning !== null && out.length < MAX_RULE_WARNINGS) out.push(warning);
  }
  return out;
}

/** An article as a log keeps it: what it is and where, not its text (the articles table holds that). */
export interface LoggedArticle {
  url: string | null;
  title: string;
  published_at: string | null;
  has_body: boolean;
  word_count: number | null;
  page_url?: string;
}

export function loggedArticle(article: ExtractedArticle | LoggedArticle, pageUrl?: string): LoggedArticle {
  return {
    url: article.url,
    title: article.title,
    published_at: article.published_at,
    has_body: 'has_body' in article ? article.has_body : article.body !== null,
    word_count: article.word_count,
    ...(pageUrl === undefined ? ('page_url' in article && article.page_url !== undefined ? { page_url: article.page_url } : {}) : { page_url: pageUrl }),
  };
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
  /** Articles the run stored. */
  articles?: { count: number; created: number; updated: number };
  warning?: string | null;
  error?: ScrapeLog['error'] | null;
  failedPages?: Array<{ url: string; error: unknown }>;
}

/** The document of a run that has not ended: what the log holds while it runs. */
export function runningLog(run: RunDescription, pages: readonly LoggedPage[]): ScrapeLog {
  const items = pages.flatMap((page) => page.items.map((item) => ({ ...item, page_url: page.url })));
  const articles = pages.flatMap((page) => (page.articles ?? []).map((article) => loggedArticle(article, page.url)));
  const warnings = siteRuleWarnings(pages);
  const kept = loggedContents(pages);
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
    article_count: 0,
    articles: articles.slice(0, MAX_LOGGED_ITEMS),
    ...(articles.length > MAX_LOGGED_ITEMS ? { articles_truncated: true } : {}),
    pages: pages.length,
    page_urls: pages.map((page) => page.url),
    page_types: pages.map((page) => page.page_type ?? 'none'),
    ...(kept.contents.length > 0 ? { contents: kept.contents } : {}),
    ...(kept.truncated ? { contents_truncated: true } : {}),
    extractor: pages[0]?.extractor ?? null,
    started_at: run.startedAt,
    finished_at: null,
    duration_ms: null,
    request: run.request,
    ...(run.crawl === true ? { crawl: true } : {}),
    ...(warnings.length > 0 ? { site_rule_warnings: warnings } : {}),
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
    article_count: ending.articles?.count ?? (ending.status === 'succeeded' ? (running.articles?.length ?? 0) : 0),
    ...(ending.articles === undefined ? {} : { articles_created: ending.articles.created, articles_updated: ending.articles.updated }),
    ...(ending.warning === undefined || ending.warning === null ? {} : { warning: ending.warning }),
    ...(ending.error === undefined || ending.error === null ? {} : { error: ending.error }),
    ...(ending.failedPages === undefined ? {} : { failed_pages: ending.failedPages }),
  };
}
