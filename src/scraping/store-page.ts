// What a processed page stores: its items as products and its articles, recorded through the run's writes.
import type { ScrapedArticle } from '../articles/article-store.js';
import type { ScrapedProduct } from '../products/product-upsert.js';
import type { RunWrites, WrittenRun } from '../recording/run-writer.js';
import { redactUrl } from '../redact.js';
import type { RunRef } from '../tracking/tracking-store.js';
import { productKey, urlKey } from '../url-identity/url-key.js';
import type { ExtractedArticle, ExtractedItem, PageType } from './extract/types.js';

interface PageOfItems {
  url: string;
  page_type: PageType;
  items: readonly ExtractedItem[];
  articles: readonly ExtractedArticle[];
}

/**
 * A stored product. Its identity is its own URL, else the page it was found on plus its title, in
 * canonical form (productKey); URLs it shows carry no password.
 */
export function toScrapedProduct(item: ExtractedItem, page: { url: string; page_type: PageType }): ScrapedProduct {
  return {
    scrape_key: productKey(item.url, page.url, item.title),
    title: item.title,
    price: item.price,
    currency: item.currency,
    description: item.description,
    source_url: redactUrl(item.url ?? page.url),
    list_price: item.list_price,
    availability: item.availability,
    sku: item.sku,
    gtin: item.gtin,
    brand: item.brand,
    image_url: item.image_url === null ? null : redactUrl(item.image_url),
    provenance: { page_url: redactUrl(page.url), page_type: page.page_type, fields: item.provenance },
  };
}

/**
 * A stored article, identified by its canonical URL (url-identity, as products are): the page's own
 * article lives at its canonical URL, else at the page's; a listing's entry at the URL it links to.
 * An entry that links nowhere has no identity a later crawl could fill in, and is not stored.
 */
export function toScrapedArticle(article: ExtractedArticle, page: { url: string; page_type: PageType }): ScrapedArticle | null {
  const url = article.url ?? (article.body === null ? null : page.url);
  const key = url === null ? null : urlKey(url);
  if (url === null || key === null) return null;
  return {
    url_key: key,
    url: redactUrl(url),
    title: article.title,
    body: article.body,
    body_html: article.body_html,
    description: article.description,
    authors: article.authors,
    published_at: article.published_at,
    modified_at: article.modified_at,
    language: article.language,
    site_name: article.site_name,
    image_url: article.image_url === null ? null : redactUrl(article.image_url),
    section: article.section,
    tags: article.tags,
    word_count: article.word_count,
    provenance: { page_url: redactUrl(page.url), page_type: page.page_type, fields: article.provenance },
  };
}

/**
 * Records what `pages` hold through the run's writes (recording/run-writer.ts): each page's items as
 * products and its articles as articles, with their history, events and deliveries. `complete`: the
 * run read its source to the end, so the products of its source it did not see have missed a run.
 */
export function storePages(writes: RunWrites, pages: ReadonlyArray<PageOfItems>, run: RunRef, options: { complete?: boolean } = {}): Promise<WrittenRun> {
  return writes.record(
    {
      products: pages.flatMap((page) => page.items.map((item) => toScrapedProduct(item, page))),
      articles: pages.flatMap((page) => page.articles.flatMap((article) => toScrapedArticle(article, page) ?? [])),
    },
    run,
    options,
  );
}
