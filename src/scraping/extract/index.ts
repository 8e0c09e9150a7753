// Entry point of extraction: parses a page once, runs the extractors in order of trust, and finds the "next" link.
import { load, type CheerioAPI } from 'cheerio';
import { articleListExtractor } from './article-list-extractor.js';
import { booksListingExtractor } from './books-listing-extractor.js';
import { absoluteUrl, finishItems, isElement } from './dom-helpers.js';
import { jsonLdExtractor } from './jsonld-extractor.js';
import { microdataExtractor } from './microdata-extractor.js';
import { openGraphExtractor } from './opengraph-extractor.js';
import { productCardsExtractor } from './product-cards-extractor.js';
import { selectorsExtractor } from './selectors-extractor.js';
import type { ExtractionResult, Extractor, Selectors } from './types.js';

export type { ExtractedItem, ExtractionResult, Extractor, Selectors } from './types.js';

/**
 * Most trusted first: what the caller asked for, then data the site publishes for machines, then
 * a known layout, then heuristics that guess from the markup.
 */
export const extractors: readonly Extractor[] = [
  selectorsExtractor,
  jsonLdExtractor,
  microdataExtractor,
  openGraphExtractor,
  booksListingExtractor,
  productCardsExtractor,
  articleListExtractor,
];

const NEXT_LINK_SELECTORS = ['li.next a[href]', 'a[rel~="next"][href]', 'link[rel~="next"][href]'];

/** Items of the first extractor that finds any, plus the pagination link. Never throws. */
export function extract(html: string, pageUrl: string, selectors?: Selectors): ExtractionResult {
  const $ = parse(html);
  if ($ === null) return { extractor: null, items: [], nextUrl: null };
  const nextUrl = safely(() => findNextUrl($, pageUrl), null);
  for (const extractor of extractors) {
    if (extractor === selectorsExtractor && selectors === undefined) continue;
    // One extractor tripping over odd markup must not cost the page the extractors after it.
    const context = selectors === undefined ? { $, pageUrl } : { $, pageUrl, selectors };
    const items = safely(() => finishItems(extractor.extract(context)), []);
    if (items.length > 0) return { extractor: extractor.name, items, nextUrl };
  }
  return { extractor: null, items: [], nextUrl };
}

function parse(html: string): CheerioAPI | null {
  // htmlparser2 (cheerio's `xml` option with HTML rules) parses about 2.5x faster than parse5, the
  // parse being most of a crawl's CPU; the extractors only need the element tree, not HTML5's
  // tree-building repairs.
  return safely(() => load(typeof html === 'string' ? html : '', { xml: { xmlMode: false, decodeEntities: true } }), null);
}

function safely<T>(run: () => T, fallback: T): T {
  try {
    return run();
  } catch {
    return fallback;
  }
}

/** The page's "next" link, absolute and http(s); never the page itself, which would loop a crawl. */
export function findNextUrl($: CheerioAPI, pageUrl: string): string | null {
  const current = withoutHash(pageUrl);
  for (const selector of NEXT_LINK_SELECTORS) {
    for (const el of $(selector).toArray().filter(isElement)) {
      const url = absoluteUrl(el.attribs['href'], pageUrl);
      if (url !== null && withoutHash(url) !== current) return url;
    }
  }
  return null;
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
