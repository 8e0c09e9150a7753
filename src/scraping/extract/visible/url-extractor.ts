// The product code a shop writes into its own page address: Amazon's /dp/ASIN, eBay's /itm/123…, ?pid=…, a path that ends in the code.
import type { Page } from '../page.js';
import type { Candidate, Located } from '../types.js';
import type { Extractor } from '../extractor.js';

interface UrlPattern {
  /** Where in the address, for the locator and explain. */
  name: string;
  read(url: URL): string | null;
}

/** Query parameters shops name their product's id with. */
const ID_PARAMS = ['pid', 'productid', 'product_id', 'itemid', 'item_id', 'skuid', 'sku_id', 'sku', 'articleid', 'article_id'];

const PATTERNS: readonly UrlPattern[] = [
  // Amazon's ASIN: ten capitals and digits after /dp/, /gp/product/ or /gp/aw/d/.
  { name: 'the ASIN after /dp/', read: (url) => /\/(?:dp|gp\/product|gp\/aw\/d)\/([A-Z0-9]{10})(?:[/?]|$)/.exec(url.pathname)?.[1] ?? null },
  // eBay's item number: /itm/123456789012 or /itm/title-words/123456789012.
  { name: 'the item number after /itm/', read: (url) => /\/itm\/(?:[^/]{1,300}\/)?(\d{9,15})(?:[/?]|$)/.exec(url.pathname)?.[1] ?? null },
  {
    name: 'the product id in the query',
    read: (url) => {
      for (const [key, value] of url.searchParams) {
        if (ID_PARAMS.includes(key.toLowerCase()) && /^[A-Za-z0-9][A-Za-z0-9._-]{2,39}$/.test(value) && /\d/.test(value)) return value;
      }
      return null;
    },
  },
  // A path that ends in the code itself: /product/5512034, /K40718263.htm, /6630917724.html, /Prod/208311/.
  { name: 'the code the path ends in', read: (url) => /\/((?:[A-Z]{1,2})?\d{6,15})(?:\.html?)?\/?$/.exec(url.pathname)?.[1] ?? null },
  { name: 'the number a slug ends in', read: (url) => /[-_](\d{6,12})(?:\.[a-z]{2,5})?\/?$/.exec(url.pathname)?.[1] ?? null },
];

export const urlExtractor: Extractor = {
  source: 'url',
  extract(page: Page): Candidate[] {
    // The shop's own address first (the page may have been read through a redirect or a proxy).
    for (const address of [page.canonical, page.url]) {
      const sku = address === null ? undefined : codeIn(address);
      if (sku !== undefined) return [{ source: 'url', locator: sku.locator, scope: 'page', fields: { sku } }];
    }
    return [];
  },
};

function codeIn(address: string): Located<string> | undefined {
  let url: URL;
  try {
    url = new URL(address);
  } catch {
    return undefined;
  }
  for (const pattern of PATTERNS) {
    const value = pattern.read(url);
    if (value !== null) return { value, locator: `${pattern.name}: ${url.pathname}${url.search}`.slice(0, 300) };
  }
  return undefined;
}
