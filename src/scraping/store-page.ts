// What a processed page stores: its items as products and its articles, recorded through the write path in the caller's transaction.
import type { Article } from '../articles/article-schema.js';
import type { ScrapedArticle } from '../articles/article-store.js';
import type { Queryable } from '../db/queryable.js';
import type { ScrapedProduct } from '../products/product-upsert.js';
import type { ArticleRecorder } from '../recording/article-recorder.js';
import type { ProductRecorder, RecordedProducts } from '../recording/product-recorder.js';
import { redactUrl } from '../redact.js';
import type { RunRef } from '../tracking/tracking-store.js';
import { productKey, urlKey } from '../url-identity/url-key.js';
import type { ExtractedArticle, ExtractedItem, PageType } from './extract/types.js';

/** The write path's two halves: what a run records of products and of articles. */
export interface RunRecorders {
  products: Pick<ProductRecorder, 'recordScraped'>;
  articles: Pick<ArticleRecorder, 'recordArticles'>;
}

export interface StoredPages extends RecordedProducts {
  articles: Article[];
  articlesCreated: number;
  articlesUpdated: number;
}

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
 * Stores what `pages` hold, in `tx` (a run's one transaction, or a crawl page's): each page's items
 * as products and its articles as articles, with their history, events and deliveries. `complete`:
 * the run read its source to the end, so the products of its source it did not see have missed a run.
 */
export async function storePages(
  recorders: RunRecorders,
  pages: ReadonlyArray<PageOfItems>,
  run: RunRef,
  tx: Queryable,
  options: { complete?: boolean } = {},
): Promise<StoredPages> {
  const items = pages.flatMap((page) => page.items.map((item) => toScrapedProduct(item, page)));
  const articles = pages.flatMap((page) => page.articles.flatMap((article) => toScrapedArticle(article, page) ?? []));
  const products = await recorders.products.recordScraped(items, run, tx, options);
  const stored = await recorders.articles.recordArticles(articles, run, tx);
  return {
    ...products,
    events: [...products.events, ...stored.events],
    articles: stored.articles,
    articlesCreated: stored.created,
    articlesUpdated: stored.updated,
  };
}
