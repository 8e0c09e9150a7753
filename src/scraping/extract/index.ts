// Extraction: parse once, gather evidence from every source, classify the page, extract for its type, merge with provenance.
import type { Element } from 'domhandler';
import { proseEvidence } from './article-evidence.js';
import { describeArticleCandidates, extractArticles } from './article-extraction.js';
import { boundExplanation } from './explain-bounds.js';
import { articleListExtractor } from './article-list-extractor.js';
import { booksListingExtractor } from './books-listing-extractor.js';
import { classifyPage, decidedByVisiblePage, decidedWithoutHeuristics, type PageEvidence } from './classify.js';
import { absoluteUrl, isElement, visibleText } from './dom-helpers.js';
import { embeddedDataExtractor } from './embedded-data-extractor.js';
import { readJsonLd } from './jsonld-extractor.js';
import { STRUCTURED, TRUST, chooseMain, groupByIdentity, mergeGroup, normaliseUrl, type Merged } from './merge.js';
import { metaExtractor, openGraphExtractor } from './meta-extractor.js';
import { readMicrodata } from './microdata-extractor.js';
import { parsePage, type Page } from './page.js';
import { productCardsExtractor } from './product-cards-extractor.js';
import { readRdfa } from './rdfa-extractor.js';
import { selectorsExtractor } from './selectors-extractor.js';
import { readSiteRule } from './site-rule-extractor.js';
import {
  SITE_RULE_FIELDS,
  type ArticleCandidate,
  type Candidate,
  type ExtractionResult,
  type ItemFields,
  type PageExplanation,
  type PageVerdict,
  type Selectors,
  type SiteRuleOutcome,
  type SiteRuleSpec,
  type Source,
} from './types.js';
import type { Extractor } from './extractor.js';
import { urlExtractor } from './url-extractor.js';
import { readVisible } from './visible-extractor.js';
import { wallOfPage } from './wall-page.js';

export type { ExtractedArticle, ExtractedItem, ExtractionResult, PageExplanation, PageType, Selectors, Source } from './types.js';

export interface ExtractOptions {
  selectors?: Selectors;
  /** The rule a user pinned for the page's site: its fields win, its page type decides. */
  siteRule?: SiteRuleSpec;
  /** Also return the whole decision: every candidate, the page type and why, each field's choice. */
  explain?: boolean;
  /** Also return the page's links, for a crawl. */
  links?: boolean;
}

/** Extracts the products and articles of one page. Pure and never throws: odd markup yields fewer items, not an error. */
export function extract(html: string, pageUrl: string, options: ExtractOptions = {}): ExtractionResult {
  const started = performance.now();
  const page = parsePage(html, pageUrl);
  const parsed = performance.now();
  if (page === null) return { page_type: 'none', extractor: null, items: [], articles: [], nextUrl: null };
  const explain = options.explain === true;
  const found = new Map<Source, Candidate[]>();
  const skipped: PageExplanation['skipped'] = [];
  const run = (extractor: Extractor): Candidate[] => {
    // One source tripping over odd markup must not cost the page the others.
    const candidates = safely(() => extractor.extract(page, options.selectors), []);
    found.set(extractor.source, candidates);
    return candidates;
  };

  const selectorItems = options.selectors === undefined ? [] : run(selectorsExtractor);
  const readings = [readJsonLd, readMicrodata, readRdfa].map((read) => safely(() => read(page), null));
  const structured = readings.flatMap((r) => r?.candidates ?? []);
  for (const source of STRUCTURED)
    found.set(
      source,
      structured.filter((c) => c.source === source),
    );
  run(openGraphExtractor);
  run(metaExtractor);
  const layout = run(booksListingExtractor);

  const structuredArticles = readings.flatMap((r) => r?.articles ?? []);
  const structuredGroups = groupByIdentity(structured);
  const heading = safely(() => mainHeading(page), null);
  const ogUrl = absoluteUrl(page.metaContent('og:url'), pageUrl);
  const main = chooseMain(structuredGroups, {
    pageUrl,
    canonical: page.canonical,
    ogUrl,
    ogTitle: page.metaContent('og:title') ?? null,
    heading: heading === null ? null : visibleText(heading),
    listEntries: readings.reduce((most, r) => Math.max(most, r?.listEntries ?? 0), 0),
  });
  const ogType = page.metaContent('og:type') ?? null;
  const evidence: PageEvidence = {
    selectorItems: selectorItems.length,
    structured: {
      products: structuredGroups.length,
      priced: structuredGroups.filter((g) => g.some((c) => c.fields.price !== undefined)).length,
      main: main?.reason ?? null,
      mainGuessed: main !== null && GUESSED_MAIN.test(main.reason),
      articleMain: articleIsPages(structuredArticles, [pageUrl, page.canonical, ogUrl], ogType),
      listEntries: readings.reduce((most, r) => Math.max(most, r?.listEntries ?? 0), 0),
      types: new Set(readings.flatMap((r) => [...(r?.types ?? [])])),
    },
    openGraph: { type: ogType, price: found.get('opengraph')?.[0]?.fields.price !== undefined },
    layoutItems: layout.length,
    visible: { heading: heading !== null, buyControls: 0, price: false, priceMarked: false, namesPage: false, stock: false, code: false },
    articleBody: false,
  };
  let teasers: ArticleCandidate[] = [];
  // The visible page and the repetition heuristics cost a walk each; markup that decides spares them.
  const decided = decidedWithoutHeuristics(evidence);
  const readVisibleNow = () => {
    const visible = safely(() => readVisible(page), null);
    if (visible?.candidate) found.set('visible', [visible.candidate]);
    return visible;
  };
  if (explain || !decided) {
    const visible = readVisibleNow();
    evidence.visible = {
      heading: visible?.heading != null,
      buyControls: visible?.buyControls.length ?? 0,
      price: visible?.candidate?.fields.price !== undefined,
      priceMarked: visible?.priceMarked ?? false,
      namesPage: visible?.headingNamesPage ?? false,
      stock: visible?.stockStated ?? false,
      code: visible?.codeShown ?? false,
    };
  }
  if (explain || (!decided && !decidedByVisiblePage(evidence))) {
    const cards = run(productCardsExtractor).filter((c) => c.fields.price !== undefined);
    // A priced card also reads as a linked heading; only entries that are not cards are teasers.
    const cardKeys = new Set<string | undefined>(cards.flatMap((c) => [c.fields.url?.value, c.fields.title?.value]));
    cardKeys.delete(undefined);
    teasers = safely(() => articleListExtractor.extract(page), []).filter((a) => !cardKeys.has(a.fields.url?.value) && !cardKeys.has(a.fields.title?.value));
    evidence.heuristics = { pricedCards: cards.length, articleEntries: teasers.length };
    const prose = safely(() => proseEvidence(page), null);
    evidence.articleBody = prose?.articleBody ?? false;
    if (prose !== null) evidence.prose = { longestBlock: prose.longestBlock, longArticles: prose.longArticles, soleArticleWords: prose.soleArticleWords };
  } else {
    const reason = decided
      ? 'the page was classified from its markup, without guessing from repeated elements'
      : 'the visible page shows one product with its buy button; repeated elements would be other products';
    skipped.push({ source: 'product-cards', reason }, { source: 'article-list', reason });
  }
  const rule = options.siteRule;
  const verdict = overridden(classifyPage(evidence), rule);
  // The visible page still completes the product when markup decided the page is one.
  if (verdict.type === 'product' && !found.has('visible')) readVisibleNow();
  // What the page embeds for its scripts and what its address says describe the page's own product only.
  if (verdict.type === 'product' || explain) {
    // Embedded app state costs a JSON parse: read only when the more trusted sources leave the code or
    // price unsaid (they would win anyway), or when explaining.
    const stated = [...(main?.group ?? []), ...(found.get('opengraph') ?? []), ...(found.get('meta') ?? []), ...(found.get('visible') ?? [])];
    const says = (field: 'sku' | 'price') => stated.some((c) => c.fields[field] !== undefined);
    if (explain || !says('sku') || !says('price')) run(embeddedDataExtractor);
    run(urlExtractor);
  }

  // A rule's fields describe the product of a product page; elsewhere only its page type applies.
  let ruled: SiteRuleOutcome | undefined;
  if (rule !== undefined) {
    const pinned = SITE_RULE_FIELDS.filter((f) => rule.fields[f] !== undefined);
    const reading = verdict.type === 'product' && pinned.length > 0 ? safely(() => readSiteRule(page, rule), { candidate: null, missed: pinned }) : null;
    if (reading?.candidate) found.set('site-rule', [reading.candidate]);
    const missed = reading?.missed ?? [];
    ruled = { id: rule.id, host_pattern: rule.host_pattern, page_type: rule.page_type, applied: reading === null ? [] : pinned.filter((f) => !missed.includes(f)), missed };
  }

  const dropped: PageExplanation['dropped'] = [];
  const groups = assemble(verdict, {
    found,
    structuredGroups,
    main: main?.group ?? null,
    pageScope: [...(found.get('opengraph') ?? []), ...(found.get('meta') ?? [])],
    selectorItems,
    dropped,
  });
  const merged = groups.flatMap((group) => {
    const result = mergeGroup(group, explain);
    return result === null ? [] : [result];
  });
  const items = dedupe(merged);
  // The article's own DOM and Readability cost more than the rest of extraction: only for the pages that are articles.
  const articles = extractArticles({ page, html, pageType: verdict.type, structured: structuredArticles, teasers, explain });
  const result: ExtractionResult = {
    page_type: verdict.type,
    extractor: items[0]?.item.provenance.title?.source ?? articles.articles[0]?.provenance.title?.source ?? null,
    items: items.map((m) => m.item),
    articles: articles.articles,
    nextUrl: safely(() => findNextUrl(page), null),
  };
  if (options.links === true) result.links = safely(() => pageLinks(page), []);
  if (ruled !== undefined) result.site_rule = ruled;
  // A page that yielded nothing may be a wall (a CAPTCHA, a login) where the content was: said, never taken for an empty page.
  const wall = items.length === 0 && articles.articles.length === 0 ? safely(() => wallOfPage(page, html), null) : null;
  if (wall !== null) result.blocked = wall;
  if (explain) {
    result.explanation = boundExplanation({
      page_type: verdict,
      candidates: describeCandidates(found),
      skipped,
      dropped: [...dropped, ...articles.dropped],
      items: items.flatMap((m) => (m.explained === undefined ? [] : [m.explained])),
      article_candidates: describeArticleCandidates(articles.found),
      articles: articles.explained,
      timings_ms: { parse: round(parsed - started), extract: round(performance.now() - parsed) },
    });
  }
  return result;
}

interface Found {
  found: ReadonlyMap<Source, Candidate[]>;
  structuredGroups: Candidate[][];
  main: Candidate[] | null;
  pageScope: Candidate[];
  selectorItems: Candidate[];
  dropped: PageExplanation['dropped'];
}

/** The candidate groups that become the page's items, for its type. */
function assemble(verdict: PageVerdict, f: Found): Candidate[][] {
  const all = (source: Source) => f.found.get(source) ?? [];
  const dropAll = (source: Source, reason: string) => {
    const count = all(source).length;
    if (count > 0) f.dropped.push({ source, count, reason });
  };
  switch (verdict.type) {
    case 'product': {
      if (f.selectorItems.length > 0) return enrich(f.selectorItems, f, 'selectors');
      // The page's own product: its structured main (every source that describes it) and what the page says of itself.
      const group = [...all('site-rule'), ...(f.main ?? []), ...f.pageScope, ...all('visible'), ...all('embedded-data'), ...all('url')];
      for (const source of STRUCTURED) {
        const others = f.structuredGroups
          .filter((g) => g !== f.main)
          .flat()
          .filter((c) => c.source === source).length;
        if (others > 0) f.dropped.push({ source, count: others, reason: "structured products other than the page's own (related, accessories)" });
      }
      dropAll('product-cards', 'cards on a product page are other products (related items, carousels)');
      return group.length === 0 ? [] : [group];
    }
    case 'listing': {
      if (f.selectorItems.length > 0) return enrich(f.selectorItems, f, 'selectors');
      const itemSources: Source[] = ['json-ld', 'microdata', 'rdfa', 'books-listing', 'product-cards'];
      const priced = itemSources.find((s) => all(s).some((c) => c.fields.price !== undefined));
      const base = priced ?? itemSources.find((s) => all(s).length > 0);
      return base === undefined ? [] : enrich(all(base), f, base);
    }
    case 'article':
    case 'article-list': {
      // Only what the page marks up as products, with a price, is a product here; teasers are articles.
      const products = f.structuredGroups.filter((g) => g.some((c) => c.fields.price !== undefined));
      dropAll('product-cards', 'prices on an article or news page are not products unless marked up as such');
      return products;
    }
    case 'none':
      return [];
  }
}

/**
 * Items of the base source, each joined by what other sources say of the same product (same URL,
 * SKU or title), so a listing's JSON-LD can lend its SKUs to the cards' prices and vice versa.
 */
function enrich(base: Candidate[], f: Found, baseSource: Source): Candidate[][] {
  const others: Candidate[] = [];
  for (const source of TRUST) {
    if (source === baseSource || source === 'visible' || source === 'opengraph' || source === 'meta') continue;
    for (const candidate of f.found.get(source) ?? []) others.push(candidate);
  }
  if (others.length === 0) return base.map((c) => [c]);
  const groups = groupByIdentity([...base, ...others]);
  const baseSet = new Set(base);
  const kept = groups.filter((g) => g.some((c) => baseSet.has(c)));
  const left = others.filter((c) => !kept.some((g) => g.includes(c)));
  const bySource = new Map<Source, number>();
  for (const c of left) bySource.set(c.source, (bySource.get(c.source) ?? 0) + 1);
  for (const [source, count] of bySource) f.dropped.push({ source, count, reason: `not among the ${baseSource} items` });
  // Base order: the page's own order of its items.
  return kept.sort((a, b) => base.indexOf(a.find((c) => baseSet.has(c))!) - base.indexOf(b.find((c) => baseSet.has(c))!));
}

/** One item per product: a listing that repeats a product (same URL and title) keeps the first. */
function dedupe(merged: Merged[]): Merged[] {
  const seen = new Set<string>();
  return merged.filter(({ item }) => {
    const key = `${item.url ?? ''}\u0000${item.title}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

function describeCandidates(found: ReadonlyMap<Source, Candidate[]>): PageExplanation['candidates'] {
  const out: PageExplanation['candidates'] = {};
  for (const source of TRUST) {
    const candidates = found.get(source);
    if (candidates === undefined || candidates.length === 0) continue;
    out[source] = candidates.map((c) => {
      const fields: Partial<ItemFields> = {};
      for (const [name, located] of Object.entries(c.fields)) (fields as Record<string, unknown>)[name] = located?.value;
      return { locator: c.locator, scope: c.scope, ...(c.main ? { main: true } : {}), fields };
    });
  }
  return out;
}

/** The page type a site rule sets wins over the classifier's, which explain still shows. */
function overridden(verdict: PageVerdict, rule: SiteRuleSpec | undefined): PageVerdict {
  if (rule?.page_type == null) return verdict;
  return { type: rule.page_type, reasons: [`a site rule for ${rule.host_pattern} sets the page type (classified as ${verdict.type} otherwise)`, ...verdict.reasons] };
}

/** A main product picked only for being the sole one marked up; an article the page names its own outweighs it. */
const GUESSED_MAIN = /^it is the only marked-up product/;

/**
 * True when the structured data marks up an article as the page's own: named its main entity, or at
 * the page's URL, or the only article (not a review) on a page whose og:type says article.
 */
function articleIsPages(articles: readonly ArticleCandidate[], pageUrls: ReadonlyArray<string | null>, ogType: string | null): boolean {
  const urls = new Set(pageUrls.filter((u): u is string => u !== null).map(normaliseUrl));
  if (articles.some((a) => a.main === true || (a.fields.url !== undefined && urls.has(normaliseUrl(a.fields.url.value))))) return true;
  const writing = articles.filter((a) => a.type !== undefined && !a.type.endsWith('review'));
  return writing.length === 1 && ogType !== null && /^(?:og:)?article/i.test(ogType);
}

/** The page's main heading: its first non-empty h1 outside navigation. */
function mainHeading(page: Page): Element | null {
  return page.elements.find((el) => el.name === 'h1' && !page.chrome.has(el) && visibleText(el) !== '') ?? null;
}

function safely<T>(run: () => T, fallback: T): T {
  try {
    return run();
  } catch {
    return fallback;
  }
}

function round(ms: number): number {
  return Math.round(ms * 100) / 100;
}

/**
 * The page's "next" link, absolute and http(s); never the page itself, which would loop a crawl.
 * In order of trust: a link inside `li.next` (the common pager), `a[rel~=next]`, `link[rel~=next]`.
 * One walk of the elements: three CSS queries over a whole page cost more than its extraction.
 */
function findNextUrl(page: Page): string | null {
  const current = withoutHash(page.url);
  const pager: Element[] = [];
  const relAnchors: Element[] = [];
  const relLinks: Element[] = [];
  const isNext = (el: Element, attr: string) => /(?:^|\s)next(?:\s|$)/i.test(el.attribs[attr] ?? '');
  const hasPagerLi = page.elements.some((el) => el.name === 'li' && isNext(el, 'class'));
  for (const el of page.elements) {
    if (el.attribs['href'] === undefined) continue;
    if (el.name === 'a') {
      if (hasPagerLi && insidePagerItem(el, isNext)) pager.push(el);
      if (isNext(el, 'rel')) relAnchors.push(el);
    } else if (el.name === 'link' && isNext(el, 'rel')) {
      relLinks.push(el);
    }
  }
  for (const el of [...pager, ...relAnchors, ...relLinks]) {
    const url = absoluteUrl(el.attribs['href'], page.url);
    if (url !== null && withoutHash(url) !== current) return url;
  }
  return null;
}

/** The links a crawler may follow: a/area hrefs, made absolute, fragments dropped, rel=nofollow respected. */
function pageLinks(page: Page): string[] {
  const links = new Set<string>();
  for (const el of page.elements) {
    if ((el.name !== 'a' && el.name !== 'area') || el.attribs['href'] === undefined) continue;
    if (/(?:^|\s)nofollow(?:\s|$)/i.test(el.attribs['rel'] ?? '')) continue;
    const url = absoluteUrl(el.attribs['href'], page.url);
    if (url !== null) links.add(withoutHash(url));
  }
  return [...links];
}

function insidePagerItem(el: Element, isNext: (el: Element, attr: string) => boolean): boolean {
  for (let current = el.parent; current !== null; current = current.parent) {
    if (isElement(current) && current.name === 'li' && isNext(current, 'class')) return true;
  }
  return false;
}

function withoutHash(url: string): string {
  try {
    const parsed = new URL(url);
    parsed.hash = '';
    return parsed.href;
  } catch {
    return url;
  }
}
