// schema.org items, however they were written (JSON-LD, microdata, RDFa), read into product and article candidates one way.
import { parsePrice } from '../../price.js';
import { absoluteUrl, cleanText } from '../dom-helpers.js';
import { articleCandidate, isArticleNode } from './schema-article.js';
import { first, has, imageOf, nameOf, text, urlOf, urlValue, type SdoNode, type SdoText, type SdoValue } from './sdo-node.js';
import type { ArticleCandidate, Availability, Candidate, CandidateFields, Located, Source } from '../types.js';

export { markupValue, type SdoNode, type SdoText, type SdoValue } from './sdo-node.js';

/** What the structured data of one source says about the page. */
export interface SdoReading {
  candidates: Candidate[];
  /** Article-family items (Article, NewsArticle, BlogPosting, Review...). */
  articles: ArticleCandidate[];
  /** Every item type seen, lower-cased, for the page classifier. */
  types: Set<string>;
  /** Entries of the largest ItemList/OfferCatalog (breadcrumbs excluded). */
  listEntries: number;
}

/** Types that describe a thing one can buy, with or without offers. */
const PRODUCT_TYPES: ReadonlySet<string> = new Set([
  'product',
  'productgroup',
  'productmodel',
  'individualproduct',
  'someproducts',
  'vehicle',
  'car',
  'motorcycle',
  'motorizedbicycle',
  'busorcoach',
]);

/** Types that are never the thing on offer, even when they carry an `offers` property. */
const NOT_OFFERED: ReadonlySet<string> = new Set([
  'webpage',
  'website',
  'organization',
  'corporation',
  'localbusiness',
  'store',
  'onlinestore',
  'person',
  'place',
  'itemlist',
  'offercatalog',
  'breadcrumblist',
  'offer',
  'aggregateoffer',
  'review',
  'aggregaterating',
  'collectionpage',
  'itempage',
  'searchresultspage',
]);

/** Real pages nest a few levels; hostile ones could nest thousands. */
const MAX_DEPTH = 16;
/** More items than any real page has; each costs a walk. */
const MAX_CANDIDATES = 2000;

export function readSchemaOrg(roots: readonly SdoNode[], source: Source, pageUrl: string): SdoReading {
  const reading: SdoReading = { candidates: [], articles: [], types: new Set(), listEntries: 0 };
  // A node reached twice (a graph member that is also some page's mainEntity) is one candidate.
  const add = onePerLocator(reading.candidates);
  const addArticle = onePerLocator(reading.articles);
  // Nodes are shared (JSON-LD @id references, microdata itemref) and may form cycles: a walk that
  // followed every path through such a graph would be exponential in its size. Each node is walked
  // once per way of reaching it that changes what it yields (as a main entity, as a reviewed item).
  const walked = new Map<SdoNode, number>();
  const visit = (node: SdoNode, depth: number, main: boolean, reviewed = false, partOf = false): void => {
    if (depth > MAX_DEPTH || reading.candidates.length + reading.articles.length >= MAX_CANDIDATES) return;
    const way = (main ? 1 : 0) | (reviewed ? 2 : 0) | (partOf ? 4 : 0);
    const ways = walked.get(node) ?? 0;
    if ((ways & (1 << way)) !== 0) return;
    walked.set(node, ways | (1 << way));
    for (const type of node.types) reading.types.add(type);
    if (isOffered(node)) {
      // A review names what it reviews, and an article the publication it is part of (paywall markup types
      // that a Product); either is a product for sale only when it is marked up with an offer.
      if ((reviewed || partOf) && !node.props.has('offers')) return;
      // Its own properties hold offers and related products, not more items of the page.
      add(productCandidate(node, null, source, pageUrl, main || isMainEntityOfPage(node, pageUrl)));
      return;
    }
    const offered = first(node, 'itemOffered');
    if (node.types.includes('offer') && offered?.kind === 'node') {
      add(productCandidate(offered, node, source, pageUrl, main));
      return;
    }
    if ((node.types.includes('itemlist') || node.types.includes('offercatalog')) && !node.types.includes('breadcrumblist')) {
      const entries = node.props.get('itemListElement') ?? [];
      reading.listEntries = Math.max(reading.listEntries, entries.length);
      for (const entry of entries) if (entry.kind === 'node') visitEntry(entry, depth + 1);
      return;
    }
    if (node.types.includes('breadcrumblist')) return;
    if (isArticleNode(node)) addArticle(articleCandidate(node, source, pageUrl, main || isMainEntityOfPage(node, pageUrl)));
    // Anything else is a container (a page, a graph, a review): its items may sit in any property.
    for (const [prop, values] of node.props) {
      const isMain = prop === 'mainEntity';
      for (const value of values) if (value.kind === 'node') visit(value, depth + 1, isMain, prop === 'itemReviewed', prop === 'isPartOf');
    }
  };
  /** A ListItem holds its product in `item`, or is itself just a named link. */
  const visitEntry = (entry: SdoNode, depth: number): void => {
    if (!entry.types.includes('listitem')) {
      visit(entry, depth, false);
      return;
    }
    const inner = first(entry, 'item');
    const before = reading.candidates.length;
    if (inner?.kind === 'node') visit(inner, depth + 1, false);
    if (reading.candidates.length > before) return;
    add(linkCandidate(inner?.kind === 'node' ? inner : entry, entry, source, pageUrl));
  };
  for (const root of roots) visit(root, 0, false);
  return reading;
}

/** Adds each candidate once per locator, into `list`; a later way of reaching it as the main entity marks it main. */
function onePerLocator<T extends { locator: string; main?: boolean }>(list: T[]): (candidate: T | null) => void {
  const byLocator = new Map<string, T>();
  return (candidate) => {
    if (candidate === null) return;
    const known = byLocator.get(candidate.locator);
    if (known !== undefined) {
      if (candidate.main) known.main = true;
      return;
    }
    byLocator.set(candidate.locator, candidate);
    list.push(candidate);
  };
}

function isOffered(node: SdoNode): boolean {
  if (node.types.some((t) => PRODUCT_TYPES.has(t))) return true;
  if (node.types.length === 0 || node.types.some((t) => NOT_OFFERED.has(t))) return false;
  return node.props.get('offers')?.some((v) => v.kind === 'node') === true;
}

/** A product that says it is the main entity of this very page ("mainEntityOfPage": its URL). */
function isMainEntityOfPage(node: SdoNode, pageUrl: string): boolean {
  const value = first(node, 'mainEntityOfPage');
  if (value === undefined) return false;
  if (value.kind === 'node') return true;
  const url = absoluteUrl(value.value, pageUrl);
  return url !== null && sameDocument(url, pageUrl);
}

function sameDocument(a: string, b: string): boolean {
  return a.replace(/#.*$/, '').replace(/\/$/, '') === b.replace(/#.*$/, '').replace(/\/$/, '');
}

function productCandidate(product: SdoNode, viaOffer: SdoNode | null, source: Source, pageUrl: string, main: boolean): Candidate | null {
  const title = text(first(product, 'name'));
  if (title === null) return null;
  const fields: CandidateFields = { title };
  const offer = viaOffer ?? chooseOffer(offersOf(product));
  Object.assign(fields, offer === null ? priceOf(product, product) : priceOf(offer, product));
  const url = urlOf(product, pageUrl) ?? (offer === null ? null : urlValue(first(offer, 'url'), pageUrl));
  if (url !== null) fields.url = url;
  const availability = offer === null ? null : availabilityOf(first(offer, 'availability'));
  if (availability !== null) fields.availability = availability;
  // A zero on an offer that cannot be bought is a placeholder for "no price", not a free product.
  if (fields.price?.value === 0 && (availability?.value === 'out_of_stock' || availability?.value === 'discontinued')) {
    delete fields.price;
    delete fields.price_text;
  }
  const description = text(first(product, 'description'));
  if (description !== null) fields.description = description;
  const sku = text(first(product, 'sku')) ?? (offer === null ? null : text(first(offer, 'sku'))) ?? productId(first(product, 'productID'));
  if (sku !== null) fields.sku = sku;
  const gtin = gtinOf(product) ?? (offer === null ? null : gtinOf(offer));
  if (gtin !== null) fields.gtin = gtin;
  const brand = nameOf(first(product, 'brand')) ?? nameOf(first(product, 'manufacturer'));
  if (brand !== null) fields.brand = brand;
  const image = imageOf(first(product, 'image'), pageUrl);
  if (image !== null) fields.image_url = image;
  return { source, locator: product.locator, scope: 'item', ...(main ? { main: true } : {}), fields };
}

function linkCandidate(node: SdoNode, entry: SdoNode, source: Source, pageUrl: string): Candidate | null {
  const title = text(first(node, 'name')) ?? text(first(entry, 'name'));
  if (title === null) return null;
  const fields: CandidateFields = { title };
  const url = urlOf(node, pageUrl) ?? urlOf(entry, pageUrl) ?? urlValue(first(entry, 'item'), pageUrl);
  if (url !== null) fields.url = url;
  const description = text(first(node, 'description'));
  if (description !== null) fields.description = description;
  return { source, locator: entry.locator, scope: 'item', fields };
}

/** The product's offers, with those an AggregateOffer lists flattened in after it. */
function offersOf(product: SdoNode): SdoNode[] {
  const offers: SdoNode[] = [];
  for (const value of product.props.get('offers') ?? []) {
    if (value.kind !== 'node') continue;
    offers.push(value);
    for (const inner of value.props.get('offers') ?? []) if (inner.kind === 'node') offers.push(inner);
  }
  return offers;
}

/**
 * The offer whose price a buyer pays: an AggregateOffer's "from" price when the page states one,
 * else the first priced offer that is not out of stock, else the first priced one.
 */
function chooseOffer(offers: SdoNode[]): SdoNode | null {
  const aggregate = offers.find((o) => o.types.includes('aggregateoffer') && (has(o, 'lowPrice') || has(o, 'price')));
  if (aggregate !== undefined) return aggregate;
  const priced = offers.filter((o) => has(o, 'price') || has(o, 'lowPrice') || has(o, 'priceSpecification'));
  const available = priced.find((o) => {
    const availability = availabilityOf(first(o, 'availability'));
    return availability === null || (availability.value !== 'out_of_stock' && availability.value !== 'discontinued');
  });
  return available ?? priced[0] ?? offers[0] ?? null;
}

const LIST_PRICE_TYPE = /ListPrice|StrikethroughPrice|SRP|MSRP|InvoicePrice/i;

/**
 * Price, currency, list price and top of range of an offer. A price specification typed ListPrice
 * or StrikethroughPrice is the "was" price; the offer's own price (or a SalePrice) is what is paid.
 */
function priceOf(offer: SdoNode, product: SdoNode): CandidateFields {
  const specs = (offer.props.get('priceSpecification') ?? []).filter((v): v is SdoNode => v.kind === 'node');
  const listSpec = specs.find((s) => LIST_PRICE_TYPE.test(first(s, 'priceType')?.kind === 'text' ? (first(s, 'priceType') as SdoText).value : ''));
  const saleSpec = specs.find((s) => s !== listSpec && has(s, 'price'));
  const priceValue = first(offer, 'price') ?? saleSpec?.props.get('price')?.[0] ?? first(offer, 'lowPrice') ?? (offer === product ? undefined : first(product, 'price'));
  const currencyValue = first(offer, 'priceCurrency') ?? saleSpec?.props.get('priceCurrency')?.[0] ?? listSpec?.props.get('priceCurrency')?.[0] ?? first(product, 'priceCurrency');
  const fields: CandidateFields = {};
  const currency = currencyValue?.kind === 'text' ? isoCode(currencyValue.value) : null;
  if (priceValue?.kind === 'text') {
    const amount = machineAmount(priceValue.value);
    const shown = cleanText(priceValue.shown ?? priceValue.value);
    if (shown !== '') fields.price_text = { value: shown, locator: priceValue.locator };
    if (amount !== null) {
      fields.price = { value: amount.amount, locator: priceValue.locator };
      const fromText = amount.currency ?? (priceValue.shown === undefined ? null : (parsePrice(priceValue.shown)?.currency ?? null));
      if (currency === null && fromText !== null) fields.currency = { value: fromText, locator: priceValue.locator };
    }
  }
  if (currency !== null && currencyValue !== undefined) fields.currency = { value: currency, locator: currencyValue.locator };
  const listValue = listSpec?.props.get('price')?.[0];
  const list = listValue?.kind === 'text' ? machineAmount(listValue.value) : null;
  if (list !== null && listValue !== undefined && (fields.price === undefined || list.amount > fields.price.value)) {
    fields.list_price = { value: list.amount, locator: listValue.locator };
  }
  const highValue = first(offer, 'highPrice');
  const high = highValue?.kind === 'text' ? machineAmount(highValue.value) : null;
  if (high !== null && highValue !== undefined) fields.high_price = { value: high.amount, locator: highValue.locator };
  return fields;
}

/**
 * schema.org writes prices with "." as the decimal mark ("1000.00"), which the shop-text parser would
 * read as thousands ("1.000" -> 1000); plain machine numbers are taken as they are.
 */
function machineAmount(value: string): { amount: number; currency: string | null } | null {
  const trimmed = value.trim();
  // JSON numbers arrive as their JavaScript text: "55", "4399.5", "1e+300" (dropped later as absurd), "-3".
  if (/^-?\d+(?:\.\d+)?(?:e[+-]?\d+)?$/i.test(trimmed)) return { amount: Number(trimmed), currency: null };
  const parsed = parsePrice(trimmed);
  return parsed === null ? null : { amount: parsed.amount, currency: parsed.currency };
}

const AVAILABILITY: ReadonlyMap<string, Availability> = new Map([
  ['instock', 'in_stock'],
  ['instoreonly', 'in_stock'],
  ['onlineonly', 'in_stock'],
  ['limitedavailability', 'limited'],
  ['outofstock', 'out_of_stock'],
  ['soldout', 'out_of_stock'],
  ['reserved', 'out_of_stock'],
  ['preorder', 'preorder'],
  ['presale', 'preorder'],
  ['backorder', 'backorder'],
  ['madetoorder', 'backorder'],
  ['discontinued', 'discontinued'],
]);

/** "https://schema.org/InStock", "InStock", "in stock", "http://schema.org/OutOfStock" -> the enum. */
export function availabilityFromText(raw: string): Availability | null {
  const local = raw
    .trim()
    .replace(/^.*[/#:]/, '')
    .replace(/[\s_-]+/g, '')
    .toLowerCase();
  return AVAILABILITY.get(local) ?? null;
}

function availabilityOf(value: SdoValue | undefined): Located<Availability> | null {
  if (value?.kind !== 'text') return null;
  const availability = availabilityFromText(value.value);
  return availability === null ? null : { value: availability, locator: value.locator };
}

const GTIN_PROPS = ['gtin13', 'gtin14', 'gtin12', 'gtin8', 'gtin', 'isbn'];

function gtinOf(node: SdoNode): Located<string> | null {
  for (const prop of GTIN_PROPS) {
    const value = text(first(node, prop));
    const gtin = value === null ? null : toGtin(value.value);
    if (value !== null && gtin !== null) return { value: gtin, locator: value.locator };
  }
  return null;
}

/** A GTIN's 8, 12, 13 or 14 digits; an ISBN-10 ("0-316-76948-7", "080442957X") becomes its ISBN-13, which is a GTIN. */
export function toGtin(raw: string): string | null {
  const compact = raw.replace(/^(?:urn:)?(?:isbn|gtin|ean|upc)[:\s]*/i, '').replace(/[\s-]/g, '');
  if (/^(?:\d{8}|\d{12,14})$/.test(compact)) return compact;
  if (!/^\d{9}[\dXx]$/.test(compact)) return null;
  const body = `978${compact.slice(0, 9)}`;
  const sum = [...body].reduce((total, digit, i) => total + Number(digit) * (i % 2 === 0 ? 1 : 3), 0);
  return `${body}${(10 - (sum % 10)) % 10}`;
}

/** schema.org's productID names the product for the shop; it may carry its scheme ("sku:4402917736", "isbn:…"). */
function productId(value: SdoValue | undefined): Located<string> | null {
  const id = text(value);
  if (id === null) return null;
  const bare = id.value.replace(/^(?:sku|mpn|isbn|ean|gtin\d*|upc)\s*:\s*/i, '');
  return bare === '' ? null : { value: bare, locator: id.locator };
}

function isoCode(value: string): string | null {
  const code = value.trim().toUpperCase();
  return /^[A-Z]{3}$/.test(code) ? code : null;
}
