// Extracts schema.org Products (directly, in @graph, in ItemLists, behind Offers) from <script type="application/ld+json"> blocks.
import type { CheerioAPI } from 'cheerio';
import { absoluteUrl, decodeEntities, priceFromData } from './dom-helpers.js';
import type { ExtractContext, ExtractedItem, Extractor } from './types.js';

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type JsonObject = { [key: string]: Json };

/** Types that describe a thing one can buy; a Book or Vehicle counts when it carries offers. */
const PRODUCT_TYPES: ReadonlySet<string> = new Set(['product', 'productgroup', 'productmodel', 'individualproduct', 'someproducts']);
const OFFERED_TYPES: ReadonlySet<string> = new Set(['book', 'vehicle', 'car', 'creativework', 'service', 'event']);

/** Bounds the walk: real pages nest a few levels; hostile ones could nest thousands. */
const MAX_DEPTH = 12;

export const jsonLdExtractor: Extractor = {
  name: 'json-ld',
  extract({ $, pageUrl }: ExtractContext): ExtractedItem[] {
    return scriptBlocks($)
      .map(parseBlock)
      .flatMap((data) => (data === undefined ? [] : itemsIn(data, pageUrl, 0)));
  },
};

function scriptBlocks($: CheerioAPI): string[] {
  return $('script')
    .toArray()
    .filter((el) => /ld\+json/i.test(el.attribs['type'] ?? ''))
    .map((el) => el.children.map((child) => ('data' in child ? child.data : '')).join(''));
}

/**
 * JSON.parse with the wrappers CMSs add (HTML comments, CDATA) stripped and one retry without
 * trailing commas; undefined when the block is still not JSON, so one broken block skips alone.
 */
export function parseBlock(raw: string): Json | undefined {
  const unwrapped = stripClosingWrapper(raw.trim().replace(OPENING_WRAPPER, ''));
  for (const candidate of [unwrapped, unwrapped.replace(/,(\s*[}\]])/g, '$1')]) {
    try {
      return JSON.parse(candidate) as Json;
    } catch {
      // try the next repair, then give up on this block
    }
  }
  return undefined;
}

/** "<!--", "<![CDATA[", "//<![CDATA[", "/* <![CDATA[ *\/" before the JSON. */
const OPENING_WRAPPER = /^(?:\/\/|\/\*)?\s*(?:<!--|<!\[CDATA\[)\s*(?:\*\/)?/;

/** The closers ("-->", "//]]>", "/* ]]> *\/"), peeled by hand: an end-anchored regex rescans long whitespace quadratically. */
function stripClosingWrapper(text: string): string {
  let rest = text.trimEnd();
  if (rest.endsWith('*/')) rest = rest.slice(0, -2).trimEnd();
  const closer = ['-->', ']]>'].find((c) => rest.endsWith(c));
  if (closer === undefined) return text.trim();
  rest = rest.slice(0, -closer.length).trimEnd();
  if (rest.endsWith('//') || rest.endsWith('/*')) rest = rest.slice(0, -2);
  return rest.trim();
}

function itemsIn(node: Json, pageUrl: string, depth: number): ExtractedItem[] {
  if (depth > MAX_DEPTH || node === null || typeof node !== 'object') return [];
  if (Array.isArray(node)) return node.flatMap((child) => itemsIn(child, pageUrl, depth + 1));
  const types = typesOf(node);
  if (types.some((t) => PRODUCT_TYPES.has(t)) || (types.some((t) => OFFERED_TYPES.has(t)) && node['offers'] !== undefined)) {
    const item = productItem(node, pageUrl, null);
    return item === null ? [] : [item];
  }
  if (types.includes('offer') && isObject(node['itemOffered'])) {
    const item = productItem(node['itemOffered'], pageUrl, node);
    return item === null ? [] : [item];
  }
  if (types.includes('itemlist') || types.includes('offercatalog')) {
    return asArray(node['itemListElement'] ?? null).flatMap((entry) => listEntryItems(entry, pageUrl, depth + 1));
  }
  // Containers that commonly hold the products: a graph, a page's main entity.
  return ['@graph', 'mainEntity', 'about'].flatMap((key) => itemsIn(node[key] ?? null, pageUrl, depth + 1));
}

/** A ListItem holds its product in `item`, or is itself just a named link. */
function listEntryItems(entry: Json, pageUrl: string, depth: number): ExtractedItem[] {
  if (!isObject(entry)) return [];
  if (!typesOf(entry).includes('listitem')) return itemsIn(entry, pageUrl, depth);
  const inner = entry['item'];
  if (isObject(inner)) {
    const found = itemsIn(inner, pageUrl, depth + 1);
    if (found.length > 0) return found;
    return linkItem(inner, pageUrl) ?? linkItem(entry, pageUrl) ?? [];
  }
  const withUrl = typeof inner === 'string' ? { ...entry, url: inner } : entry;
  return linkItem(withUrl, pageUrl) ?? [];
}

function linkItem(node: JsonObject, pageUrl: string): ExtractedItem[] | null {
  const title = text(node['name']);
  if (title === '') return null;
  return [{ title, price_text: null, price: null, currency: null, url: urlOf(node, pageUrl), description: text(node['description']) || null }];
}

/** `offer` is the Offer the product was found under, when it was found that way round. */
function productItem(product: JsonObject, pageUrl: string, offer: JsonObject | null): ExtractedItem | null {
  const title = text(product['name']);
  if (title === '') return null;
  const chosen = offer ?? firstPricedOffer(product['offers'] ?? null);
  const spec = chosen !== null && isObject(chosen['priceSpecification']) ? chosen['priceSpecification'] : null;
  const amount = chosen?.['price'] ?? chosen?.['lowPrice'] ?? spec?.['price'] ?? null;
  const currency = chosen?.['priceCurrency'] ?? spec?.['priceCurrency'] ?? null;
  return {
    title,
    ...priceFromData(amount, currency),
    url: urlOf(product, pageUrl) ?? (chosen === null ? null : absoluteUrl(text(chosen['url']), pageUrl)),
    description: text(product['description']) || null,
  };
}

/** The first offer that states a price; an AggregateOffer states lowPrice ("from"). */
function firstPricedOffer(offers: Json): JsonObject | null {
  const candidates = asArray(offers).filter(isObject);
  const priced = candidates.find((o) => o['price'] !== undefined || o['lowPrice'] !== undefined || isObject(o['priceSpecification']));
  return priced ?? candidates[0] ?? null;
}

/**
 * `url`, else an `@id` that is a real address, made absolute. An @id's fragment only names the
 * node ("…/mug/#product"); the page is the part before it.
 */
function urlOf(node: JsonObject, pageUrl: string): string | null {
  const url = absoluteUrl(text(node['url']), pageUrl);
  if (url !== null) return url;
  const id = absoluteUrl(text(node['@id']), pageUrl);
  return id === null ? null : id.replace(/#.*$/, '');
}

function typesOf(node: JsonObject): string[] {
  // "@type" may be a string, an array, or a full IRI like "http://schema.org/Product".
  return asArray(node['@type'] ?? null)
    .filter((t): t is string => typeof t === 'string')
    .map((t) => t.replace(/^.*[/#:]/, '').toLowerCase());
}

/** Text of a JSON-LD value (entities decoded: CMSs escape names for HTML): a string, a number, a {"@value"} object, or the first of a list. */
function text(value: Json | undefined): string {
  if (typeof value === 'string') return decodeEntities(value).trim();
  if (typeof value === 'number' && Number.isFinite(value)) return String(value);
  if (Array.isArray(value)) return value.length > 0 ? text(value[0]) : '';
  if (isObject(value)) return text(value['@value'] ?? value['name']);
  return '';
}

function asArray(value: Json): Json[] {
  if (value === null) return [];
  return Array.isArray(value) ? value : [value];
}

function isObject(value: Json | undefined): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
