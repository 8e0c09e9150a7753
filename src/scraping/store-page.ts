// What a processed page stores: its items as products, recorded through the write path in the caller's transaction.
import type { Queryable } from '../db/queryable.js';
import type { ScrapedProduct } from '../products/product-store.js';
import type { ProductRecorder, RecordedProducts } from '../recording/product-recorder.js';
import { redactUrl } from '../redact.js';
import type { RunRef } from '../tracking/tracking-store.js';
import { productKey } from '../url-identity/url-key.js';
import type { ExtractedItem, PageType } from './extract/types.js';

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
 * Stores what `pages` hold, in `tx` (a run's one transaction, or a crawl page's): each page's items
 * as products, with their history, events and deliveries. `complete`: the run read its source to the
 * end, so the products of its source it did not see have missed a run.
 */
export function storePages(
  recorder: Pick<ProductRecorder, 'recordScraped'>,
  pages: ReadonlyArray<{ url: string; page_type: PageType; items: readonly ExtractedItem[] }>,
  run: RunRef,
  tx: Queryable,
  options: { complete?: boolean } = {},
): Promise<RecordedProducts> {
  const items = pages.flatMap((page) => page.items.map((item) => toScrapedProduct(item, page)));
  return recorder.recordScraped(items, run, tx, options);
}
