// Extraction's assembly: the candidates that become the page's items for its type, joined by what other sources say of the same products, merged and made unique.
import { embeddedDataExtractor } from './structured/embedded-data-extractor.js';
import { type Evidence, safely } from './evidence.js';
import { STRUCTURED, TRUST, groupByIdentity, mergeGroup, type Merged } from './merge.js';
import { readSiteRule } from './visible/site-rule-extractor.js';
import { SITE_RULE_FIELDS, type Candidate, type PageExplanation, type PageVerdict, type SiteRuleOutcome, type SiteRuleSpec, type Source } from './types.js';
import { urlExtractor } from './visible/url-extractor.js';

/**
 * What a product page still needs once it is one: the visible page (when markup decided without it),
 * what the page embeds for its scripts and what its address says, which describe its own product only.
 */
export function completeProduct(evidence: Evidence, verdict: PageVerdict, explain: boolean): void {
  if (verdict.type === 'product' && !evidence.found.has('visible')) evidence.readVisible();
  if (verdict.type !== 'product' && !explain) return;
  // Embedded app state costs a JSON parse: read only when the more trusted sources leave the code or
  // price unsaid (they would win anyway), or when explaining.
  const { found } = evidence;
  const stated = [...(evidence.main?.group ?? []), ...(found.get('opengraph') ?? []), ...(found.get('meta') ?? []), ...(found.get('visible') ?? [])];
  const says = (field: 'sku' | 'price') => stated.some((c) => c.fields[field] !== undefined);
  if (explain || !says('sku') || !says('price')) evidence.run(embeddedDataExtractor);
  evidence.run(urlExtractor);
}

/** A rule's fields describe the product of a product page; elsewhere only its page type applies. */
export function applySiteRule(evidence: Evidence, verdict: PageVerdict, rule: SiteRuleSpec | undefined): SiteRuleOutcome | undefined {
  if (rule === undefined) return undefined;
  const pinned = SITE_RULE_FIELDS.filter((f) => rule.fields[f] !== undefined);
  const reading = verdict.type === 'product' && pinned.length > 0 ? safely(() => readSiteRule(evidence.page, rule), { candidate: null, missed: pinned }) : null;
  if (reading?.candidate) evidence.found.set('site-rule', [reading.candidate]);
  const missed = reading?.missed ?? [];
  return { id: rule.id, host_pattern: rule.host_pattern, page_type: rule.page_type, applied: reading === null ? [] : pinned.filter((f) => !missed.includes(f)), missed };
}

/** The page type a site rule sets wins over the classifier's, which explain still shows. */
export function overridden(verdict: PageVerdict, rule: SiteRuleSpec | undefined): PageVerdict {
  if (rule?.page_type == null) return verdict;
  return { type: rule.page_type, reasons: [`a site rule for ${rule.host_pattern} sets the page type (classified as ${verdict.type} otherwise)`, ...verdict.reasons] };
}

/**
 * The page's items for its type: the candidate groups `assemble` picks, each merged with provenance
 * (merge.ts), one per product. What was left out, and why, goes to `dropped` (explain).
 */
export function assembleItems(evidence: Evidence, verdict: PageVerdict, explain: boolean, dropped: PageExplanation['dropped']): Merged[] {
  const { found } = evidence;
  const groups = assemble(verdict, {
    found,
    structuredGroups: evidence.structuredGroups,
    main: evidence.main?.group ?? null,
    pageScope: [...(found.get('opengraph') ?? []), ...(found.get('meta') ?? [])],
    selectorItems: evidence.selectorItems,
    dropped,
  });
  const merged = groups.flatMap((group) => {
    const result = mergeGroup(group, explain);
    return result === null ? [] : [result];
  });
  return dedupe(merged);
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
    case 'article-list':
    case 'forum':
    case 'documentation':
    case 'service': {
      // Only what the page marks up as products, with a price, is a product here; teasers are articles.
      const products = f.structuredGroups.filter((g) => g.some((c) => c.fields.price !== undefined));
      dropAll(
        'product-cards',
        `prices on ${verdict.type === 'service' ? 'a service or pricing page' : verdict.type === 'forum' ? 'a forum thread' : verdict.type === 'documentation' ? 'a documentation page' : 'an article or news page'} are not products unless marked up as such`,
      );
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
