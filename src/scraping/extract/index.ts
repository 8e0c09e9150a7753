// Extraction: parse once, gather evidence from every source, classify the page, assemble and merge its items, read its articles, and describe the decision.
import { describeArticleCandidates, extractArticles } from './article/article-extraction.js';
import { applySiteRule, assembleItems, completeProduct, overridden } from './assemble.js';
import { classifyPage } from './classify.js';
import { refineGenre } from './classify-genre.js';
import { pageContent } from './content/page-content.js';
import { describeCandidates } from './describe.js';
import { gatherEvidence, safely } from './evidence.js';
import { boundExplanation } from './explain-bounds.js';
import { parsePage } from './page.js';
import { findNextUrl, pageLinks } from './page-links.js';
import type { ExtractionResult, PageExplanation, Selectors, SiteRuleSpec } from './types.js';
import { pageGenre } from './visible/page-genre.js';
import { wallOfPage } from './visible/wall-page.js';

export type { ExtractedArticle, ExtractedItem, ExtractionResult, PageExplanation, PageType, Selectors, Source } from './types.js';

export interface ExtractOptions {
  selectors?: Selectors;
  /** The rule a user pinned for the page's site: its fields win, its page type decides. */
  siteRule?: SiteRuleSpec;
  /** Also return the whole decision: every candidate, the page type and why, each field's choice. */
  explain?: boolean;
  /** Also return the page's links, for a crawl. */
  links?: boolean;
  /** Read the page's main content (`content`, `markdown`); false where nothing keeps it (a crawl's pages): '' for both. */
  content?: boolean;
}

/** Extracts the products and articles of one page. Pure and never throws: odd markup yields fewer items, not an error. */
export function extract(html: string, pageUrl: string, options: ExtractOptions = {}): ExtractionResult {
  const started = performance.now();
  const page = parsePage(html, pageUrl);
  const parsed = performance.now();
  if (page === null) return { page_type: 'none', extractor: null, items: [], articles: [], nextUrl: null, ...NO_CONTENT };
  const explain = options.explain === true;

  // 1. Evidence, cheapest first (evidence.ts). 2. What the page is (classify.ts; a site rule may say).
  const evidence = gatherEvidence(page, options.selectors, explain);
  const verdict = overridden(
    refineGenre(classifyPage(evidence.summary), evidence.summary, () => safely(() => pageGenre(page, evidence.summary.structured.types), null)),
    options.siteRule,
  );
  // 3. What its type still needs, and the site rule's fields (assemble.ts).
  completeProduct(evidence, verdict, explain);
  const ruled = applySiteRule(evidence, verdict, options.siteRule);
  // 4. Its items, merged with provenance; its articles (only for the pages that are articles: they cost most).
  const dropped: PageExplanation['dropped'] = [];
  const items = assembleItems(evidence, verdict, explain, dropped);
  const articles = extractArticles({ page, html, pageType: verdict.type, structured: evidence.structuredArticles, teasers: evidence.teasers, explain });

  const result: ExtractionResult = {
    page_type: verdict.type,
    extractor: items[0]?.item.provenance.title?.source ?? articles.articles[0]?.provenance.title?.source ?? null,
    items: items.map((m) => m.item),
    articles: articles.articles,
    nextUrl: safely(() => findNextUrl(page), null),
    ...(options.content === false ? NO_CONTENT : safely(() => pageContent(html, verdict.type, pageUrl, articles.articles[0]), NO_CONTENT)),
  };
  if (options.links === true) result.links = safely(() => pageLinks(page), []);
  if (ruled !== undefined) result.site_rule = ruled;
  // 5. A page that yielded nothing may be a wall (a CAPTCHA, a login) where the content was: said, never taken for an empty page.
  const wall = items.length === 0 && articles.articles.length === 0 ? safely(() => wallOfPage(page, html), null) : null;
  if (wall !== null) result.blocked = wall;
  // 6. The whole decision, for explain.
  if (explain) {
    result.explanation = boundExplanation({
      page_type: verdict,
      candidates: describeCandidates(evidence.found),
      skipped: evidence.skipped,
      dropped: [...dropped, ...articles.dropped],
      items: items.flatMap((m) => (m.explained === undefined ? [] : [m.explained])),
      article_candidates: describeArticleCandidates(articles.found),
      articles: articles.explained,
      timings_ms: { parse: round(parsed - started), extract: round(performance.now() - parsed) },
    });
  }
  return result;
}

const NO_CONTENT = { content: '', markdown: '' } as const;

function round(ms: number): number {
  return Math.round(ms * 100) / 100;
}
