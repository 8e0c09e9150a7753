// Reads what a page's head says of its own product: Open Graph (og:, product:) and, less trusted, Twitter cards and plain meta.
import { parsePrice } from '../../price.js';
import { absoluteUrl, cleanText, visibleText } from '../dom-helpers.js';
import type { MetaTag, Page } from '../page.js';
import { availabilityFromText, toGtin } from './schema-org.js';
import type { Availability, Candidate, CandidateFields, Located } from '../types.js';
import type { Extractor } from '../extractor.js';

/** Tags read for each field, most specific first; the first present wins. */
interface TagTable {
  title: readonly string[];
  price: readonly string[];
  currency: readonly string[];
  list_price: readonly string[];
  availability: readonly string[];
  brand: readonly string[];
  sku: readonly string[];
  gtin: readonly string[];
  image_url: readonly string[];
  url: readonly string[];
  description: readonly string[];
}

const OPEN_GRAPH: TagTable = {
  title: ['og:title'],
  // A catalogue's sale price is what is paid; product:price is then the regular one.
  price: ['product:sale_price:amount', 'product:price:amount', 'og:price:amount', 'og:price'],
  currency: ['product:sale_price:currency', 'product:price:currency', 'og:price:currency'],
  list_price: ['product:original_price:amount'],
  availability: ['product:availability', 'og:availability'],
  brand: ['product:brand', 'og:brand'],
  sku: ['product:retailer_item_id', 'product:sku'],
  gtin: ['product:gtin', 'product:upc', 'product:ean', 'product:isbn'],
  image_url: ['og:image', 'og:image:url', 'og:image:secure_url'],
  url: ['og:url'],
  description: ['og:description'],
};

const PLAIN: TagTable = {
  title: ['twitter:title'],
  price: [],
  currency: [],
  list_price: [],
  availability: [],
  brand: [],
  sku: [],
  gtin: [],
  image_url: ['twitter:image'],
  url: [],
  description: ['twitter:description', 'description'],
};

export const openGraphExtractor: Extractor = {
  source: 'opengraph',
  extract(page: Page): Candidate[] {
    const fields = readTags(page, OPEN_GRAPH);
    return fields === null ? [] : [{ source: 'opengraph', locator: 'head > meta[property^="og:"]', scope: 'page', fields }];
  },
};

export const metaExtractor: Extractor = {
  source: 'meta',
  extract(page: Page): Candidate[] {
    const fields = readTags(page, PLAIN) ?? {};
    Object.assign(fields, twitterPrice(page));
    // <title> carries the shop's name and categories too ("Name - Brand - Shop"): only a page without a heading is named by it.
    const headed = page.elements.some((el) => el.name === 'h1' && !page.chrome.has(el) && visibleText(el) !== '');
    if (fields.title === undefined && !headed) {
      const title = page.elements.find((el) => el.name === 'title');
      const text = title === undefined ? '' : cleanText(visibleText(title) || title.children.map((c) => ('data' in c ? c.data : '')).join(''));
      if (text !== '') fields.title = { value: text, locator: 'title' };
    }
    // The page's own product lives at the page: its canonical URL, else the address it was read from.
    const own = page.canonical ?? absoluteUrl(page.url, page.url);
    if (own !== null) fields.url = { value: own, locator: page.canonical === null ? 'the page URL' : 'link[rel="canonical"]' };
    return [{ source: 'meta', locator: 'head', scope: 'page', fields }];
  },
};

function readTags(page: Page, table: TagTable): CandidateFields | null {
  const fields: CandidateFields = {};
  const tag = (keys: readonly string[]): MetaTag | undefined => {
    for (const key of keys) {
      const found = page.meta.find((m) => m.key === key);
      if (found !== undefined) return found;
    }
    return undefined;
  };
  const located = <T>(found: MetaTag, value: T): Located<T> => ({
    value,
    locator: `meta[${found.el.attribs['property'] !== undefined ? 'property' : 'name'}="${found.key}"]`,
  });

  const title = tag(table.title);
  if (title !== undefined) fields.title = located(title, title.content);
  const price = tag(table.price);
  if (price !== undefined) {
    const parsed = parsePrice(price.content);
    fields.price_text = located(price, price.content);
    if (parsed !== null) fields.price = located(price, parsed.amount);
    if (parsed?.currency) fields.currency = located(price, parsed.currency);
  }
  const currency = tag(table.currency);
  if (currency !== undefined && /^[a-z]{3}$/i.test(currency.content)) fields.currency = located(currency, currency.content.toUpperCase());
  const list = tag(table.list_price);
  const listAmount = list === undefined ? null : (parsePrice(list.content)?.amount ?? null);
  if (list !== undefined && listAmount !== null && (fields.price === undefined || listAmount > fields.price.value)) {
    fields.list_price = located(list, listAmount);
  }
  const availability = tag(table.availability);
  const known = availability === undefined ? null : (availabilityFromText(availability.content) ?? availabilityWords(availability.content));
  if (availability !== undefined && known !== null) fields.availability = located(availability, known);
  for (const name of ['brand', 'sku', 'description'] as const) {
    const found = tag(table[name]);
    if (found !== undefined) fields[name] = located(found, found.content);
  }
  const gtinTag = tag(table.gtin);
  const gtin = gtinTag === undefined ? null : toGtin(gtinTag.content);
  if (gtinTag !== undefined && gtin !== null) fields.gtin = located(gtinTag, gtin);
  for (const name of ['image_url', 'url'] as const) {
    const found = tag(table[name]);
    const url = found === undefined ? null : absoluteUrl(found.content, page.url);
    if (found !== undefined && url !== null) fields[name] = located(found, url);
  }
  return Object.keys(fields).length === 0 ? null : fields;
}

/** Twitter's product card states the price as a labelled value: twitter:label1 "Price", twitter:data1 "$165.95". */
function twitterPrice(page: Page): CandidateFields {
  for (const n of [1, 2, 3, 4]) {
    const label = page.meta.find((m) => m.key === `twitter:label${n}`);
    const data = page.meta.find((m) => m.key === `twitter:data${n}`);
    if (label === undefined || data === undefined || !/price|cost|preis|prix|precio|prezzo/i.test(label.content)) continue;
    const parsed = parsePrice(data.content);
    if (parsed === null) continue;
    const locator = `meta[name="twitter:data${n}"]`;
    return {
      price_text: { value: data.content, locator },
      price: { value: parsed.amount, locator },
      ...(parsed.currency ? { currency: { value: parsed.currency, locator } } : {}),
    };
  }
  return {};
}

/** Catalogue feeds write availability in words ("in stock", "oos", "available for order"). */
function availabilityWords(text: string): Availability | null {
  const words = text.trim().toLowerCase();
  if (/^(?:in ?stock|available|instock)$/.test(words)) return 'in_stock';
  if (/^(?:oos|out ?of ?stock|sold ?out|unavailable)$/.test(words)) return 'out_of_stock';
  if (/pre-?order/.test(words)) return 'preorder';
  if (/available for order|backorder/.test(words)) return 'backorder';
  if (/discontinued/.test(words)) return 'discontinued';
  return null;
}
