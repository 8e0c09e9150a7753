// Articles of a page once it is classified: the page's own article (every source merged, the body read from the page), or a listing's entries.
import { extractArticleBody, type ArticleBody } from './article-body.js';
import { mergeArticle, type MergedArticle } from './article-merge.js';
import { metaArticleExtractor, openGraphArticleExtractor } from './article-meta.js';
import { visibleArticleExtractor } from './article-visible.js';
import { absoluteUrl, cleanText } from '../dom-helpers.js';
import { normaliseUrl } from '../merge.js';
import type { Page } from '../page.js';
import { sanitizeBodyHtml } from './sanitize-body-html.js';
import type { ArticleCandidate, ArticleCandidateView, ExplainedArticle, ExtractedArticle, PageExplanation, PageType, Source } from '../types.js';
import type { ArticleExtractor } from '../extractor.js';

export interface ArticleInputs {
  page: Page;
  /** The page's HTML, for the body's own DOM (Readability needs a browser-like one). */
  html: string;
  pageType: PageType;
  /** Article-family items of the page's structured data (JSON-LD, microdata, RDFa). */
  structured: readonly ArticleCandidate[];
  /** A listing's entries (the article-list heuristic), when it ran. */
  teasers: readonly ArticleCandidate[];
  explain: boolean;
}

export interface ArticleOutcome {
  articles: ExtractedArticle[];
  /** Every candidate found, by source (for explain). */
  found: Map<Source, ArticleCandidate[]>;
  explained: ExplainedArticle[];
  dropped: PageExplanation['dropped'];
}

/** Never throws: a source that trips over odd markup costs its own fields only. */
export function extractArticles(inputs: ArticleInputs): ArticleOutcome {
  const outcome: ArticleOutcome = { articles: [], found: new Map(), explained: [], dropped: [] };
  const { structured, teasers } = inputs;
  for (const c of structured) outcome.found.set(c.source, [...(outcome.found.get(c.source) ?? []), c]);
  if (teasers.length > 0) outcome.found.set('article-list', [...teasers]);
  if (inputs.pageType === 'article') {
    keep(outcome, pageArticle(inputs, outcome));
  } else if (inputs.pageType === 'article-list') {
    // What the page says of itself that holds for every entry: the site's name and its language.
    const site = [openGraphArticleExtractor, metaArticleExtractor].flatMap((extractor) => safely(() => extractor.extract(inputs.page), [])).map(siteOnly);
    for (const entry of listEntries(teasers, structured)) keep(outcome, mergeArticle([...entry, ...site], null, inputs.explain));
  } else if (teasers.length > 0) {
    outcome.dropped.push({ source: 'article-list', count: teasers.length, reason: 'linked headings on a page that is not writing are not articles (product names, navigation)' });
  }
  return outcome;
}

/** The page's own article: its structured article, what its head and visible page say, and the body read from its DOM. */
function pageArticle(inputs: ArticleInputs, outcome: ArticleOutcome): MergedArticle | null {
  const { structured, teasers } = inputs;
  const run = (extractor: ArticleExtractor): ArticleCandidate[] => {
    const candidates = safely(() => extractor.extract(inputs.page), []);
    if (candidates.length > 0) outcome.found.set(extractor.source, candidates);
    return candidates;
  };
  const pageScope = [openGraphArticleExtractor, metaArticleExtractor, visibleArticleExtractor].flatMap(run);
  const own = ownArticles(inputs.page, structured, pageScope);
  for (const source of ['json-ld', 'microdata', 'rdfa'] as const) {
    const others = structured.filter((c) => c.source === source && !own.includes(c)).length;
    if (others > 0) outcome.dropped.push({ source, count: others, reason: "articles marked up besides the page's own (related stories, a publisher's list)" });
  }
  if (teasers.length > 0)
    outcome.dropped.push({ source: 'article-list', count: teasers.length, reason: "linked headings on an article page are its related stories, not the page's article" });
  const body = safely(() => extractArticleBody(inputs.html), null);
  const bodyCandidate = body === null ? [] : [bodyAsCandidate(body)];
  if (bodyCandidate.length > 0) outcome.found.set('article-body', bodyCandidate);
  // Links in the body resolve as the browser would: against <base href> when the page sets one.
  const base = absoluteUrl(inputs.page.elements.find((el) => el.name === 'base')?.attribs['href'], inputs.page.url) ?? inputs.page.url;
  const html = body === null ? null : safely(() => sanitizeBodyHtml(body.html, base), null);
  const merged = mergeArticle([...own, ...pageScope, ...bodyCandidate], html, inputs.explain);
  if (merged?.explained !== undefined && body !== null && merged.article.provenance.body?.source === 'article-body') {
    merged.explained.body = { method: body.method, locator: body.locator, removed: body.removed };
  }
  return merged;
}

function keep(outcome: ArticleOutcome, merged: MergedArticle | null): void {
  if (merged === null) return;
  outcome.articles.push(merged.article);
  if (merged.explained !== undefined) outcome.explained.push(merged.explained);
}

function siteOnly(c: ArticleCandidate): ArticleCandidate {
  const { site_name, language } = c.fields;
  return { ...c, fields: { ...(site_name === undefined ? {} : { site_name }), ...(language === undefined ? {} : { language }) } };
}

function bodyAsCandidate(body: ArticleBody): ArticleCandidate {
  return { source: 'article-body', locator: body.locator, scope: 'page', fields: { body: { value: body.text, locator: body.locator } } };
}

/**
 * The structured articles that are the page's own, at most one per source: named its main entity or
 * living at its URL; else the one whose headline is the page's (h1, og:title); else the only one.
 */
function ownArticles(page: Page, structured: readonly ArticleCandidate[], pageScope: readonly ArticleCandidate[]): ArticleCandidate[] {
  const urls = new Set([page.url, page.canonical, absoluteUrl(page.metaContent('og:url'), page.url)].filter((u): u is string => u !== null).map(normaliseUrl));
  const titles = new Set(pageScope.flatMap((c) => (c.fields.title === undefined ? [] : [squash(c.fields.title.value)])));
  const own: ArticleCandidate[] = [];
  for (const source of ['json-ld', 'microdata', 'rdfa'] as const) {
    const of = structured.filter((c) => c.source === source);
    const pick =
      of.find((c) => c.main === true) ??
      of.find((c) => c.fields.url !== undefined && urls.has(normaliseUrl(c.fields.url.value))) ??
      of.find((c) => c.fields.title !== undefined && [...titles].some((t) => t.startsWith(squash(c.fields.title!.value)))) ??
      (of.length === 1 ? of[0] : undefined);
    if (pick !== undefined) own.push(pick);
  }
  return own;
}

/** A listing's entries: each teaser, joined by the structured article at the same URL; structured ones alone when no teaser was found. */
function listEntries(teasers: readonly ArticleCandidate[], structured: readonly ArticleCandidate[]): ArticleCandidate[][] {
  const byUrl = new Map<string, ArticleCandidate>();
  for (const c of structured) if (c.fields.url !== undefined) byUrl.set(normaliseUrl(c.fields.url.value), c);
  if (teasers.length === 0) return structured.filter((c) => c.fields.url !== undefined).map((c) => [withoutBody(c)]);
  return teasers.map((t) => {
    const match = t.fields.url === undefined ? undefined : byUrl.get(normaliseUrl(t.fields.url.value));
    return match === undefined ? [t] : [t, withoutBody(match)];
  });
}

/** A listing's entry has no body: the text is on the article's own page. */
function withoutBody(c: ArticleCandidate): ArticleCandidate {
  const { body: _body, ...fields } = c.fields;
  return { ...c, fields };
}

/** Candidates as explain shows them: long text shortened. */
export function describeArticleCandidates(found: ReadonlyMap<Source, ArticleCandidate[]>): Partial<Record<Source, ArticleCandidateView[]>> {
  const out: Partial<Record<Source, ArticleCandidateView[]>> = {};
  for (const [source, candidates] of found) {
    out[source] = candidates.map((c) => {
      const fields: ArticleCandidateView['fields'] = {};
      for (const [name, located] of Object.entries(c.fields)) {
        const value = located?.value as unknown;
        (fields as Record<string, unknown>)[name] = typeof value === 'string' && value.length > 300 ? `${value.slice(0, 300)}… (${value.length} characters)` : value;
      }
      return { locator: c.locator, scope: c.scope, ...(c.main ? { main: true } : {}), fields };
    });
  }
  return out;
}

function squash(text: string): string {
  return cleanText(text).toLowerCase();
}

function safely<T>(run: () => T, fallback: T): T {
  try {
    return run();
  } catch {
    return fallback;
  }
}
