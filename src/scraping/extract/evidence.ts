// Extraction's first step: every source of evidence read from the parsed page, cheapest first, and what the page's type is judged on.
import type { Element } from 'domhandler';
import { proseEvidence } from './article/article-evidence.js';
import { articleListExtractor } from './article/article-list-extractor.js';
import { booksListingExtractor } from './visible/books-listing-extractor.js';
import { decidedByVisiblePage, decidedWithoutHeuristics, type PageEvidence } from './classify.js';
import { absoluteUrl, visibleText } from './dom-helpers.js';
import type { Extractor } from './extractor.js';
import { readJsonLd } from './structured/jsonld-extractor.js';
import { STRUCTURED, chooseMain, groupByIdentity, normaliseUrl } from './merge.js';
import { metaExtractor, openGraphExtractor } from './structured/meta-extractor.js';
import { readMicrodata } from './structured/microdata-extractor.js';
import type { Page } from './page.js';
import { productCardsExtractor } from './visible/product-cards-extractor.js';
import { readRdfa } from './structured/rdfa-extractor.js';
import { selectorsExtractor } from './visible/selectors-extractor.js';
import type { ArticleCandidate, Candidate, PageExplanation, Selectors, Source } from './types.js';
import { readVisible } from './visible/visible-extractor.js';

/** What the sources found, kept as extraction goes on (later steps add the sources they read). */
export interface Evidence {
  page: Page;
  /** Candidates by source. */
  found: Map<Source, Candidate[]>;
  /** Sources not read, with why (explain). */
  skipped: PageExplanation['skipped'];
  /** The caller's selectors' items. */
  selectorItems: Candidate[];
  /** Products of structured data, grouped by identity. */
  structuredGroups: Candidate[][];
  structuredArticles: ArticleCandidate[];
  /** The page's own product among them, when one is. */
  main: { group: Candidate[]; reason: string } | null;
  /** Article teasers (an index of articles), read when the heuristics ran. */
  teasers: ArticleCandidate[];
  /** What the classifier judges. */
  summary: PageEvidence;
  /** Reads a source into `found` (one tripping over odd markup costs the page nothing else). */
  run(extractor: Extractor): Candidate[];
  /** Reads the visible page into `found` (once it is needed). */
  readVisible(): ReturnType<typeof readVisible> | null;
}

/**
 * Every source the page's type is judged on, cheapest first: the caller's selectors, the structured
 * data, Open Graph and meta tags, the known listing layout; then, unless the markup decided, the
 * visible page, and unless that decided too, the repetition heuristics (priced cards, article teasers)
 * and the prose. Explaining reads them all.
 */
export function gatherEvidence(page: Page, selectors: Selectors | undefined, explain: boolean): Evidence {
  const found = new Map<Source, Candidate[]>();
  const run = (extractor: Extractor): Candidate[] => {
    const candidates = safely(() => extractor.extract(page, selectors), []);
    found.set(extractor.source, candidates);
    return candidates;
  };
  const readVisibleNow = () => {
    const visible = safely(() => readVisible(page), null);
    if (visible?.candidate) found.set('visible', [visible.candidate]);
    return visible;
  };

  const selectorItems = selectors === undefined ? [] : run(selectorsExtractor);
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
  const ogUrl = absoluteUrl(page.metaContent('og:url'), page.url);
  const listEntries = readings.reduce((most, r) => Math.max(most, r?.listEntries ?? 0), 0);
  const main = chooseMain(structuredGroups, {
    pageUrl: page.url,
    canonical: page.canonical,
    ogUrl,
    ogTitle: page.metaContent('og:title') ?? null,
    heading: heading === null ? null : visibleText(heading),
    listEntries,
  });
  const ogType = page.metaContent('og:type') ?? null;
  const summary: PageEvidence = {
    selectorItems: selectorItems.length,
    structured: {
      products: structuredGroups.length,
      priced: structuredGroups.filter((g) => g.some((c) => c.fields.price !== undefined)).length,
      main: main?.reason ?? null,
      mainGuessed: main !== null && GUESSED_MAIN.test(main.reason),
      articleMain: articleIsPages(structuredArticles, [page.url, page.canonical, ogUrl], ogType),
      listEntries,
      types: new Set(readings.flatMap((r) => [...(r?.types ?? [])])),
    },
    openGraph: { type: ogType, price: found.get('opengraph')?.[0]?.fields.price !== undefined },
    layoutItems: layout.length,
    visible: { heading: heading !== null, buyControls: 0, price: false, priceMarked: false, namesPage: false, stock: false, code: false },
    articleBody: false,
  };
  const evidence: Evidence = { page, found, skipped: [], selectorItems, structuredGroups, structuredArticles, main, teasers: [], summary, run, readVisible: readVisibleNow };

  // The visible page and the repetition heuristics cost a walk each; markup that decides spares them.
  const decided = decidedWithoutHeuristics(summary);
  if (explain || !decided) {
    const visible = readVisibleNow();
    summary.visible = {
      heading: visible?.heading != null,
      buyControls: visible?.buyControls.length ?? 0,
      price: visible?.candidate?.fields.price !== undefined,
      priceMarked: visible?.priceMarked ?? false,
      namesPage: visible?.headingNamesPage ?? false,
      stock: visible?.stockStated ?? false,
      code: visible?.codeShown ?? false,
    };
  }
  if (explain || (!decided && !decidedByVisiblePage(summary))) {
    const cards = run(productCardsExtractor).filter((c) => c.fields.price !== undefined);
    // A priced card also reads as a linked heading; only entries that are not cards are teasers.
    const cardKeys = new Set<string | undefined>(cards.flatMap((c) => [c.fields.url?.value, c.fields.title?.value]));
    cardKeys.delete(undefined);
    evidence.teasers = safely(() => articleListExtractor.extract(page), []).filter((a) => !cardKeys.has(a.fields.url?.value) && !cardKeys.has(a.fields.title?.value));
    summary.heuristics = { pricedCards: cards.length, articleEntries: evidence.teasers.length };
    const prose = safely(() => proseEvidence(page), null);
    summary.articleBody = prose?.articleBody ?? false;
    if (prose !== null) summary.prose = { longestBlock: prose.longestBlock, longArticles: prose.longArticles, soleArticleWords: prose.soleArticleWords };
  } else {
    const reason = decided
      ? 'the page was classified from its markup, without guessing from repeated elements'
      : 'the visible page shows one product with its buy button; repeated elements would be other products';
    evidence.skipped.push({ source: 'product-cards', reason }, { source: 'article-list', reason });
  }
  return evidence;
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

export function safely<T>(run: () => T, fallback: T): T {
  try {
    return run();
  } catch {
    return fallback;
  }
}
