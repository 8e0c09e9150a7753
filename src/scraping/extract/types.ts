// Shapes shared by every extractor: what a page yields before it becomes a stored product.
import type { CheerioAPI } from 'cheerio';

/** One raw item as found on a page; kept verbatim in the scrape log. */
export interface ExtractedItem {
  title: string;
  /** The price as written on the page, e.g. "£51.77"; null when the item shows none (articles). */
  price_text: string | null;
  /** Parsed amount; null when there is no price or it could not be parsed. */
  price: number | null;
  /** ISO 4217 code, e.g. "GBP"; null when unknown. */
  currency: string | null;
  /** Absolute URL of the item's own page, when it links to one. */
  url: string | null;
  description: string | null;
}

/** CSS selectors a caller may supply; `title`, `price`, `description`, `link` are relative to `item`. */
export interface Selectors {
  item: string;
  title: string;
  price: string;
  description?: string;
  link?: string;
}

export interface ExtractContext {
  $: CheerioAPI;
  /** Absolute URL the HTML came from (after redirects); base for relative links. */
  pageUrl: string;
  selectors?: Selectors;
}

export interface Extractor {
  /** Reported to the client as `extractor`, e.g. "json-ld". */
  name: string;
  extract(ctx: ExtractContext): ExtractedItem[];
}

export interface ExtractionResult {
  /** Name of the first extractor that yielded items; null when none did. */
  extractor: string | null;
  items: ExtractedItem[];
  /** Absolute URL of the page's "next" link (pagination), if any. */
  nextUrl: string | null;
}
