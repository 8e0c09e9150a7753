// Shapes of extraction: candidates each source of evidence finds, the items merged from them, and the explanation.
import type { Page } from './page.js';

/** Where a value came from. Order of trust (most trusted first) is TRUST in merge.ts. */
export type Source =
  | 'selectors'
  | 'json-ld'
  | 'microdata'
  | 'rdfa'
  | 'opengraph'
  | 'meta'
  | 'books-listing'
  | 'visible'
  | 'embedded-data'
  | 'url'
  | 'product-cards'
  | 'article-list';

export const AVAILABILITIES = ['in_stock', 'out_of_stock', 'preorder', 'backorder', 'limited', 'discontinued'] as const;
export type Availability = (typeof AVAILABILITIES)[number];

/** What a page is, decided before extracting for it. */
export type PageType = 'product' | 'listing' | 'article' | 'article-list' | 'none';

/** The fields a product can carry; each merged on its own. */
export interface ItemFields {
  title: string;
  /** The price as written on the page ("£51.77"); goes with `price`. */
  price_text: string;
  /** What a buyer pays now. */
  price: number;
  /** ISO 4217 code. */
  currency: string;
  /** The higher "was"/list price shown beside a sale price. */
  list_price: number;
  /** The top of a price range (schema.org AggregateOffer highPrice); kept in the log only. */
  high_price: number;
  availability: Availability;
  sku: string;
  gtin: string;
  brand: string;
  image_url: string;
  /** Absolute URL of the item's own page. */
  url: string;
  description: string;
}
export type FieldName = keyof ItemFields;

/** One value and where on the page it was read: a JSON path, a CSS path, or a meta tag. */
export interface Located<T> {
  value: T;
  locator: string;
  /**
   * How the page presents the value to people, when it says so: the label beside it ("Product code",
   * "Sale price", "Currently unavailable") or the buy-box marker it sits in. The merge lets such a
   * value outrank machine data that disagrees (merge-rules.ts), and explain quotes it.
   */
  cue?: string;
}

export type CandidateFields = { [K in FieldName]?: Located<ItemFields[K]> };

/** A product (or article) one source of evidence found, before merging. */
export interface Candidate {
  source: Source;
  /** Where the whole item sits. */
  locator: string;
  /**
   * 'page': says something about the page's own product (meta tags, the visible main product).
   * 'item': one item among possibly many (structured data, cards, layouts, selectors).
   */
  scope: 'page' | 'item';
  /** Structured data names it the page's main entity. */
  main?: boolean;
  /** An article entry (no price expected), not a product. */
  article?: boolean;
  fields: CandidateFields;
}

export interface FieldProvenance {
  source: Source;
  locator: string;
}

/** One raw item as extracted: what the scrape log keeps, and what becomes a stored product. */
export interface ExtractedItem {
  title: string;
  price_text: string | null;
  price: number | null;
  currency: string | null;
  list_price: number | null;
  high_price: number | null;
  availability: Availability | null;
  sku: string | null;
  gtin: string | null;
  brand: string | null;
  image_url: string | null;
  url: string | null;
  description: string | null;
  /** Per field present: the source and locator it was taken from. */
  provenance: Partial<Record<FieldName, FieldProvenance>>;
}

/** CSS selectors a caller may supply; `title`, `price`, `description`, `link` are relative to `item`. */
export interface Selectors {
  item: string;
  title: string;
  price: string;
  description?: string;
  link?: string;
}

/** One source of evidence: a pure function from the parsed page to what it found there. */
export interface Extractor {
  source: Source;
  extract(page: Page, selectors?: Selectors): Candidate[];
}

export interface PageVerdict {
  type: PageType;
  /** Human-readable reasons, strongest first. */
  reasons: string[];
}

/** How one field of one item was chosen. */
export interface FieldDecision {
  chosen: FieldProvenance & { value: unknown };
  why: string;
  /** The values other sources offered for the same field. */
  others: Array<FieldProvenance & { value: unknown }>;
}

export interface ExplainedItem {
  title: string;
  fields: Partial<Record<FieldName, FieldDecision>>;
  /** The candidates merged into this item. */
  merged: Array<{ source: Source; locator: string }>;
}

/** The whole decision for one page, filled only when asked for (explain). */
export interface PageExplanation {
  page_type: PageVerdict;
  /** Every candidate each source found, as found. */
  candidates: Partial<Record<Source, Array<{ locator: string; scope: 'page' | 'item'; main?: boolean; fields: Partial<ItemFields> }>>>;
  /** Sources not run for this page and why (e.g. a heuristic when structured data decided). */
  skipped: Array<{ source: Source; reason: string }>;
  /** Candidates found but left out of the result, and why. */
  dropped: Array<{ source: Source; count: number; reason: string }>;
  items: ExplainedItem[];
  timings_ms: { parse: number; extract: number };
}

export interface ExtractionResult {
  page_type: PageType;
  /** The source that supplied the items' titles; null when nothing was found. */
  extractor: Source | null;
  items: ExtractedItem[];
  /** Absolute URL of the page's "next" link (pagination), if any. */
  nextUrl: string | null;
  /** Every link a crawl may follow (asked for with `links`): absolute http(s), no fragment, no nofollow, each once. */
  links?: string[];
  explanation?: PageExplanation;
}
