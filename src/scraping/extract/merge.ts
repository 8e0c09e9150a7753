// The one merge step: candidates that describe the same product become one item, each field from the most trusted source that states it.
import { MAX_DESCRIPTION_CHARS, MAX_TITLE_CHARS, cleanText, truncate } from './dom-helpers.js';
import { chooseByRule } from './merge-rules.js';
import type { Candidate, ExplainedItem, ExtractedItem, FieldDecision, FieldName, FieldProvenance, ItemFields, Source } from './types.js';

/**
 * Order of trust, most trusted first: what the caller asked for; data the site publishes for
 * machines (JSON-LD, microdata, RDFa), then its share tags (Open Graph), then other meta tags; a
 * known layout; what the visible page shows; data the page embeds for its own scripts; patterns of
 * its address; and last the heuristics that guess from repetition. A source a user states for a
 * whole site (site rules) would go first, beside `selectors`. Where the visible page disagrees with
 * machine data on price, code or stock, merge-rules.ts decides, and explain says why.
 */
export const TRUST: readonly Source[] = [
  'site-rule',
  'selectors',
  'json-ld',
  'microdata',
  'rdfa',
  'opengraph',
  'meta',
  'books-listing',
  'visible',
  'embedded-data',
  'url',
  'product-cards',
  'article-list',
];

const rank = (source: Source): number => TRUST.indexOf(source);

export const STRUCTURED: ReadonlySet<Source> = new Set(['json-ld', 'microdata', 'rdfa']);

const FIELD_LIMITS: Partial<Record<FieldName, number>> = {
  title: MAX_TITLE_CHARS,
  description: MAX_DESCRIPTION_CHARS,
  price_text: 200,
  sku: 200,
  gtin: 20,
  brand: 200,
};
const MAX_URL_CHARS = 2048;
const MAX_LOCATOR_CHARS = 1000;

/**
 * Groups candidates that describe the same product: the same URL, SKU or GTIN, or the same title
 * where one of them has no URL (variants share titles but not URLs). Groups keep document order.
 */
export function groupByIdentity(candidates: readonly Candidate[]): Candidate[][] {
  const parent = candidates.map((_, i) => i);
  const find = (i: number): number => {
    while (parent[i] !== i) {
      parent[i] = parent[parent[i]!]!;
      i = parent[i]!;
    }
    return i;
  };
  const union = (a: number, b: number): void => {
    const ra = find(a);
    const rb = find(b);
    if (ra !== rb) parent[Math.max(ra, rb)] = Math.min(ra, rb);
  };
  const seen = new Map<string, number>();
  const link = (key: string, i: number): void => {
    const j = seen.get(key);
    if (j === undefined) seen.set(key, i);
    else union(i, j);
  };
  const titles = new Map<string, number[]>();
  candidates.forEach((c, i) => {
    const url = c.fields.url?.value;
    if (url !== undefined) link(`url ${normaliseUrl(url)}`, i);
    if (c.fields.sku !== undefined) link(`sku ${c.fields.sku.value.toLowerCase()}`, i);
    if (c.fields.gtin !== undefined) link(`gtin ${c.fields.gtin.value.replace(/^0+/, '')}`, i);
    const title = c.fields.title === undefined ? '' : normaliseTitle(c.fields.title.value);
    if (title !== '') titles.set(title, [...(titles.get(title) ?? []), i]);
  });
  for (const members of titles.values()) {
    const withoutUrl = members.filter((i) => candidates[i]!.fields.url === undefined);
    if (withoutUrl.length === 0) continue;
    for (const i of members) union(i, withoutUrl[0]!);
  }
  const groups = new Map<number, Candidate[]>();
  candidates.forEach((c, i) => {
    const root = find(i);
    groups.set(root, [...(groups.get(root) ?? []), c]);
  });
  return [...groups.values()];
}

export interface MainHints {
  pageUrl: string;
  canonical: string | null;
  ogUrl: string | null;
  ogTitle: string | null;
  heading: string | null;
  /** Entries of the page's largest ItemList: a list page has no "only product" by default. */
  listEntries: number;
}

/** Which group of structured products is the page's own product, and why; null when none stands out. */
export function chooseMain(groups: readonly Candidate[][], hints: MainHints): { group: Candidate[]; reason: string } | null {
  if (groups.length === 0) return null;
  const priced = (group: Candidate[]) => group.some((c) => c.fields.price !== undefined);
  const pick = (matching: Candidate[][], reason: string) => {
    const chosen = matching.find(priced) ?? matching[0];
    return chosen === undefined ? null : { group: chosen, reason };
  };
  const flagged = groups.filter((g) => g.some((c) => c.main === true));
  if (flagged.length > 0) return pick(flagged, 'it is named the main entity of the page');
  const pageUrls = [hints.pageUrl, hints.canonical, hints.ogUrl].filter((u): u is string => u !== null).map(normaliseUrl);
  const atPageUrl = groups.filter((g) => g.some((c) => c.fields.url !== undefined && pageUrls.includes(normaliseUrl(c.fields.url.value))));
  if (atPageUrl.length === 1) return pick(atPageUrl, "its url is this page's");
  const names = [hints.heading, hints.ogTitle].filter((t): t is string => t !== null).map(normaliseTitle);
  const named = groups.filter((g) => g.some((c) => c.fields.title !== undefined && names.some((n) => sameName(n, normaliseTitle(c.fields.title!.value)))));
  if (named.length === 1) return pick(named, "its name is the page's heading or og:title");
  // Sizes or colours marked up as separate products under one name are variants of the page's product.
  if (named.length > 1 && new Set(named.map(titleOf)).size === 1) {
    return { group: named.flat(), reason: `its ${named.length} variants share the name of the page's heading or og:title` };
  }
  if (hints.listEntries >= 2) return null;
  const pricedGroups = groups.filter(priced);
  if (pricedGroups.length === 1 && groups.length > 1) return pick(pricedGroups, 'it is the only marked-up product with a price');
  if (groups.length === 1) return pick([...groups], 'it is the only marked-up product');
  return null;
}

/** og:title is often "Name - Shop" or "Name | Category | Shop": a name that starts it counts. */
function sameName(pageName: string, productName: string): boolean {
  return pageName === productName || (productName.length >= 4 && pageName.startsWith(productName));
}

export interface Merged {
  item: ExtractedItem;
  explained?: ExplainedItem;
}

/**
 * One item from candidates that describe the same product: each field from the most trusted
 * candidate that states it, except that price text, currency and range go with the price they
 * describe, and a list price counts only when above the price.
 */
export function mergeGroup(group: readonly Candidate[], explain = false): Merged | null {
  const ordered = group.length === 1 ? group : [...group].sort((a, b) => rank(a.source) - rank(b.source));
  const decisions: Partial<Record<FieldName, FieldDecision>> = {};
  const chosen: Partial<ItemFields> = {};
  const chosenFrom = new Map<FieldName, Candidate>();
  const provenance: Partial<Record<FieldName, FieldProvenance>> = {};

  /** The most trusted candidate that states `field` (and passes `accept`). */
  const firstWith = (field: FieldName, accept: (c: Candidate) => boolean = () => true): Candidate | undefined => {
    for (const c of ordered) if (c.fields[field] !== undefined && accept(c)) return c;
    return undefined;
  };
  // Reasons and alternatives are only worded when someone asks (explain): a listing merges thousands.
  const take = (field: FieldName, from: Candidate | undefined, why: () => string): void => {
    const located = from?.fields[field];
    if (from === undefined || located === undefined) return;
    const value = finishValue(field, located.value);
    if (value === undefined) return;
    (chosen as Record<string, unknown>)[field] = value;
    chosenFrom.set(field, from);
    // A locator is built from the page's own names (JSON keys, ids): stored as JSONB, it must be bounded and NUL-free.
    provenance[field] = { source: from.source, locator: boundedLocator(located.locator) };
    if (explain) {
      decisions[field] = {
        chosen: { source: from.source, locator: located.locator, value },
        why: why(),
        others: ordered.flatMap((c) => {
          const other = c.fields[field];
          return c === from || other === undefined ? [] : [{ source: c.source, locator: other.locator, value: other.value as unknown }];
        }),
      };
    }
  };
  const trusted = (field: FieldName, from: Candidate | undefined) => (): string => {
    const others = new Set(ordered.filter((c) => c !== from && c.fields[field] !== undefined && c.source !== from?.source).map((c) => c.source));
    return others.size === 0 ? `${from?.source} is the only source that states it` : `${from?.source} is trusted over ${[...others].join(', ')}`;
  };

  for (const field of ['title', 'price', 'availability', 'sku', 'gtin', 'brand', 'image_url', 'url', 'description'] as const) {
    // What a user pinned for the site wins over every judgement of the page.
    const pinned = ordered[0]?.source === 'site-rule' && ordered[0].fields[field] !== undefined ? ordered[0] : undefined;
    if (pinned !== undefined) {
      take(field, pinned, () => 'a site rule pins it');
      continue;
    }
    const ruled = chooseByRule(field, ordered);
    if (ruled !== undefined) {
      take(field, ruled.from, () => ruled.why);
      continue;
    }
    const from = firstWith(field);
    take(field, from, trusted(field, from));
  }
  if (chosen.title === undefined) return null;
  // A GTIN identifies the product uniquely: it stands in for a sku no source states.
  if (chosen.sku === undefined && chosen.gtin !== undefined) {
    const from = chosenFrom.get('gtin')!;
    const located = from.fields.gtin!;
    chosen.sku = chosen.gtin;
    chosenFrom.set('sku', from);
    provenance.sku = { source: from.source, locator: boundedLocator(located.locator) };
    if (explain)
      decisions.sku = { chosen: { source: from.source, locator: located.locator, value: chosen.gtin }, why: 'no source states a sku; the GTIN identifies the product', others: [] };
  }

  const priceFrom = chosenFrom.get('price');
  if (priceFrom !== undefined) {
    take('price_text', priceFrom, () => 'written where the price was read');
    if (priceFrom.fields.currency !== undefined) {
      take('currency', priceFrom, () => `the price's own source (${priceFrom.source}) states it`);
    } else {
      const from = firstWith('currency');
      take('currency', from, () => `${trusted('currency', from)()}; the price's source states none`);
    }
    take('high_price', priceFrom, () => 'the top of the range the price starts');
    const above = (c: Candidate) => (c.fields.list_price?.value ?? 0) > chosen.price!;
    const from = firstWith('list_price', above);
    take('list_price', from, () => `${trusted('list_price', from)()}; above the price, so it is the regular price beside a sale`);
  }

  const item: ExtractedItem = {
    title: chosen.title,
    price_text: chosen.price_text ?? null,
    price: chosen.price ?? null,
    currency: chosen.currency ?? null,
    list_price: chosen.list_price ?? null,
    high_price: chosen.high_price ?? null,
    availability: chosen.availability ?? null,
    sku: chosen.sku ?? null,
    gtin: chosen.gtin ?? null,
    brand: chosen.brand ?? null,
    image_url: chosen.image_url ?? null,
    url: chosen.url ?? null,
    description: chosen.description ?? null,
    provenance,
  };
  if (!explain) return { item };
  return { item, explained: { title: item.title, fields: decisions, merged: ordered.map((c) => ({ source: c.source, locator: c.locator })) } };
}

/** A value as stored: text cleaned and cut to its column's size, URLs and amounts checked. */
function finishValue(field: FieldName, value: unknown): unknown {
  if (typeof value === 'number') return Number.isFinite(value) && value >= 0 && value <= 1e12 ? value : undefined;
  if (typeof value !== 'string') return undefined;
  if (field === 'url' || field === 'image_url') return value.length <= MAX_URL_CHARS ? value : undefined;
  if (field === 'gtin') return /^(?:\d{8}|\d{12,14})$/.test(value) ? value : undefined;
  const text = cleanText(value);
  if (text === '') return undefined;
  const limit = FIELD_LIMITS[field];
  return limit === undefined ? text : truncate(text, limit);
}

/** NUL-free and at most MAX_LOCATOR_CHARS, keeping the specific end of a long CSS path ("… > div > h1"). */
export function boundedLocator(locator: string): string {
  const clean = locator.replace(/\u0000/g, '');
  return clean.length <= MAX_LOCATOR_CHARS ? clean : `… ${clean.slice(clean.length - MAX_LOCATOR_CHARS + 2)}`;
}

/** A URL as an identity: no fragment, no trailing slash, host lower-cased. */
export function normaliseUrl(url: string): string {
  try {
    const parsed = new URL(url);
    parsed.hash = '';
    return parsed.href.replace(/\/$/, '');
  } catch {
    return url;
  }
}

function titleOf(group: readonly Candidate[]): string {
  const title = group.find((c) => c.fields.title !== undefined)?.fields.title?.value;
  return title === undefined ? '' : normaliseTitle(title);
}

function normaliseTitle(title: string): string {
  return cleanText(title).toLowerCase();
}
