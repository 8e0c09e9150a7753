// Extracts the one product a product page describes in its OpenGraph/Facebook meta tags (og:type product, product:price:amount).
import type { CheerioAPI } from 'cheerio';
import { absoluteUrl, cleanText, priceFromData } from './dom-helpers.js';
import type { ExtractContext, ExtractedItem, Extractor } from './types.js';

export const openGraphExtractor: Extractor = {
  name: 'opengraph',
  extract({ $, pageUrl }: ExtractContext): ExtractedItem[] {
    const meta = metaReader($);
    const amount = meta('product:price:amount') ?? meta('og:price:amount');
    // Plain articles carry og: tags too; only a product type or a price makes the page a product.
    if (!/^(?:og:)?product\b/i.test(meta('og:type') ?? '') && amount === undefined) return [];
    const title = meta('og:title') ?? cleanText($('title').first().text());
    return [
      {
        title,
        ...priceFromData(amount ?? null, meta('product:price:currency') ?? meta('og:price:currency') ?? null),
        url: absoluteUrl(meta('og:url'), pageUrl) ?? absoluteUrl(pageUrl, pageUrl),
        description: meta('og:description') ?? null,
      },
    ];
  },
};

/** Reads a meta tag by `property` (the OpenGraph way) or `name` (what many sites write instead). */
function metaReader($: CheerioAPI): (key: string) => string | undefined {
  const metas = $('meta')
    .toArray()
    .map((el) => ({ key: (el.attribs['property'] ?? el.attribs['name'] ?? '').trim().toLowerCase(), content: cleanText(el.attribs['content']) }))
    .filter((m) => m.key !== '' && m.content !== '');
  return (key) => metas.find((m) => m.key === key)?.content;
}
