// Shapes of extraction: candidates each source of evidence finds, the items merged from them, and the explanation.
import type { Wall } from '../../problems.js';
import type { PageType, SiteRuleField } from '../../site-rules/site-rule-spec.js';

/**
 * Where a value came from. Order of trust for products (most trusted first) is TRUST in merge.ts; for
 * articles, per field, ARTICLE_TRUST in article-merge.ts. `article-body` is the article's main text as
 * read from the page (boilerplate removed, then Readability).
 */
export type Source =
  | 'site-rule'
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
  | 'article-list'
  | 'article-body';

export const AVAILABILITIES = ['in_stock', 'out_of_stock', 'preorder', 'backorder', 'limited', 'discontinued'] as const;
export type Availability = (typeof AVAILABILITIES)[number];

// Site rules' fields, page types and a rule as extraction receives it live with the rules (site-rules/, the store layer below this one).
export { PAGE_TYPES, SITE_RULE_FIELDS, type PageType, type SiteRuleField, type SiteRuleSpec } from '../../site-rules/site-rule-spec.js';

/** What a site rule did on one page: which pinned fields found nothing. */
export interface SiteRuleOutcome {
  id: number;
  host_pattern: string;
  page_type: PageType | null;
  applied: SiteRuleField[];
  missed: SiteRuleField[];
}

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

/** A product one source of evidence found, before merging. */
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
  /** Every article candidate each source found, as found (values shortened for reading). */
  article_candidates: Partial<Record<Source, ArticleCandidateView[]>>;
  /** Per article: each field's choice and why, and how the body was found. */
  articles: ExplainedArticle[];
  timings_ms: { parse: number; extract: number };
  /** The lists cut to their first entries (explain-bounds.ts): which, how many shown, how many there were. */
  truncated: Array<{ list: string; shown: number; total: number }>;
}

export interface ExtractionResult {
  page_type: PageType;
  /** The source that supplied the items' (else the articles') titles; null when nothing was found. */
  extractor: Source | null;
  /** Products. A page never yields a product without evidence of one (a price, product markup). */
  items: ExtractedItem[];
  /** The page's article (an article page), or the entries of a listing of articles (each with `body: null`). */
  articles: ExtractedArticle[];
  /** Absolute URL of the page's "next" link (pagination), if any. */
  nextUrl: string | null;
  /** The page's main content as plain text, whatever its type ('' when it has none): content/main-content.ts. */
  content: string;
  /** The same content as CommonMark: content/markdown.ts. */
  markdown: string;
  /** Every link a crawl may follow (asked for with `links`): absolute http(s), no fragment, no nofollow, each once. */
  links?: string[];
  /** The site rule that applied to this page, and which of its fields found nothing. */
  site_rule?: SiteRuleOutcome;
  /** The page is a wall (a CAPTCHA, a bot check, a login, a rate limit) standing where content was: it yielded nothing. */
  blocked?: Wall;
  explanation?: PageExplanation;
}

/** The fields an article can carry; each merged on its own. */
export interface ArticleFields {
  title: string;
  /** Plain text, paragraphs separated by a blank line. */
  body: string;
  /** The same content as sanitized HTML. */
  body_html: string;
  description: string;
  authors: string[];
  /** ISO 8601: with the offset when the page states one, a bare date when it gives only the day. */
  published_at: string;
  modified_at: string;
  /** BCP 47 tag ("en", "pt-BR"). */
  language: string;
  site_name: string;
  image_url: string;
  section: string;
  tags: string[];
  /** The article's canonical URL. */
  url: string;
}
export type ArticleFieldName = keyof ArticleFields;

export type ArticleCandidateFields = { [K in ArticleFieldName]?: Located<ArticleFields[K]> };

/** An article (or a listing's entry) one source of evidence found, before merging. */
export interface ArticleCandidate {
  source: Source;
  locator: string;
  /** 'page': says something about the page's own article (meta tags, the visible page); 'item': one of possibly many. */
  scope: 'page' | 'item';
  /** Structured data names it the page's main entity, or it lives at the page's URL. */
  main?: boolean;
  /** Its schema.org type, lower-cased ("newsarticle", "review"), for structured data. */
  type?: string;
  fields: ArticleCandidateFields;
}

/** One article as extracted: what explain answers, and what the lead's article store keeps. */
export interface ExtractedArticle {
  url: string | null;
  title: string;
  /** Null for a listing's entry, whose text is on its own page. */
  body: string | null;
  body_html: string | null;
  description: string | null;
  authors: string[];
  published_at: string | null;
  modified_at: string | null;
  language: string | null;
  site_name: string | null;
  image_url: string | null;
  section: string | null;
  tags: string[];
  /** Words of `body` (Intl.Segmenter's words, as POST /process/text counts them); null without a body. */
  word_count: number | null;
  /** Per field present: the source and locator it was taken from. */
  provenance: Partial<Record<ArticleFieldName, FieldProvenance>>;
}

/** An article candidate as explain shows it: values as found, long text shortened. */
export interface ArticleCandidateView {
  locator: string;
  scope: 'page' | 'item';
  main?: boolean;
  fields: Partial<Record<ArticleFieldName, unknown>>;
}

/** How one article's fields were chosen. */
export interface ExplainedArticle {
  title: string;
  fields: Partial<Record<ArticleFieldName, FieldDecision>>;
  /** The candidates merged into this article. */
  merged: Array<{ source: Source; locator: string }>;
  /** How the body was found on the page, when it was: the method, where, and the page furniture removed first. */
  body?: { method: string; locator: string; removed: Record<string, number> };
}
