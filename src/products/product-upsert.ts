// A run's products written: scraped items upserted by their scrape key in batches, with what each write saw of their state (history's input).
import type { Queryable } from '../db/queryable.js';
import type { RunTagging } from '../tags/tag-store.js';
import { PRODUCT_COLUMNS, toProduct } from './product-list-sql.js';
import type { Product, Provenance } from './product-schema.js';

/** A product found by a scrape, identified by `scrape_key` so a re-run updates it. */
export interface ScrapedProduct {
  scrape_key: string;
  title: string;
  price: number | null;
  currency: string | null;
  description: string | null;
  source_url: string | null;
  // What richer pages state; absent means unknown.
  list_price?: number | null;
  availability?: Product['availability'];
  sku?: string | null;
  gtin?: string | null;
  brand?: string | null;
  image_url?: string | null;
  provenance?: Provenance | null;
}

/** The values whose change is history: what a product shows a buyer. */
export interface ProductState {
  price: number | null;
  currency: string | null;
  list_price: number | null;
  availability: string | null;
}

/** A product a write saw: as it was (null when the write created it) and as it is now. */
export interface ProductSighting {
  product_id: number;
  source_url: string | null;
  before: (ProductState & { last_seen_at: string | null; last_run: string | null }) | null;
  seen: ProductState;
}

export interface UpsertResult {
  products: Product[];
  created: number;
  updated: number;
  /** The products whose state the write changed (or created): what history and events are made of. */
  sightings: ProductSighting[];
}

/** The run that saw scraped items: stored on each product (its last run, the source it belongs to). */
export interface SeenBy {
  runId: string | null;
  /** The canonical URL the run started from. */
  source: string | null;
}

/** The values of a row whose change is history. */
export const stateOf = (row: ProductState): ProductState => ({
  price: row.price,
  currency: row.currency,
  list_price: row.list_price,
  availability: row.availability,
});

/**
 * Inserts or updates all items, in `tx`: a re-run updates what it saw before. With `tagging` (its tags
 * ensured before), the same statements give every row the run's tags.
 */
export async function upsertScraped(tx: Queryable, items: readonly ScrapedProduct[], seenBy: SeenBy, tagging?: RunTagging): Promise<UpsertResult> {
  // A key twice in a run (a listing repeating a product): the last sighting wins (ON CONFLICT touches a row once).
  const unique = [...new Map(items.map((item) => [item.scrape_key, item])).values()];
  // Written in key order, so that runs storing the same products at once lock them in one order and
  // wait for each other instead of deadlocking; answered in the order they came.
  const order = unique.map((_, i) => i).sort((a, b) => (unique[a]!.scrape_key < unique[b]!.scrape_key ? -1 : 1));
  const sorted = order.map((i) => unique[i]!);
  const result: UpsertResult = { products: new Array<Product>(unique.length), created: 0, updated: 0, sightings: [] };
  // UPSERT_BATCH rows per statement, the event loop let go in between (PGlite runs on this thread).
  for (let from = 0; from < sorted.length; from += UPSERT_BATCH) {
    if (from > 0) await new Promise((resolve) => setImmediate(resolve));
    const batch = await upsertBatch(tx, sorted.slice(from, from + UPSERT_BATCH), seenBy, tagging);
    // RETURNING's order is the input's.
    for (const [j, product] of batch.products.entries()) result.products[order[from + j]!] = product;
    result.created += batch.created;
    result.updated += batch.updated;
    result.sightings.push(...batch.sightings);
  }
  return result;
}

/** Rows per upsert statement of a run's products. */
export const UPSERT_BATCH = 500;

/** A changed product's tracked values before the write, and its last sighting: price, currency, list price, availability, time, run. */
type PriorState = [number | null, string | null, number | null, string | null, string, string | null];

/**
 * unnest() turns column arrays into rows: one statement (and one prepared plan) for any batch size.
 * What a run saw is the truth for price, stock and sale; identifiers a page stops showing are kept.
 * History needs a changed product as it was: ON CONFLICT updates the newest committed version,
 * locked, and `products.*` in SET is that version, so prior_state carries its tracked values back
 * (and stays NULL, costing nothing, when the run saw what was there).
 */
const UPSERT = `INSERT INTO products (scrape_key, title, price, currency, description, source_url, list_price, availability, sku, gtin, brand, image_url, provenance,
                           last_seen_at, last_run, source_key, missed_runs, gone_at)
     SELECT i.*, now(), $14, $15, 0, NULL
       FROM unnest($1::text[], $2::text[], $3::numeric[], $4::text[], $5::text[], $6::text[], $7::numeric[], $8::text[],
                   $9::text[], $10::text[], $11::text[], $12::text[], $13::jsonb[])
         AS i (scrape_key, title, price, currency, description, source_url, list_price, availability, sku, gtin, brand, image_url, provenance)
     ON CONFLICT (scrape_key) DO UPDATE SET
       title = EXCLUDED.title, price = EXCLUDED.price, currency = EXCLUDED.currency,
       description = EXCLUDED.description, source_url = EXCLUDED.source_url,
       list_price = EXCLUDED.list_price, availability = EXCLUDED.availability,
       sku = COALESCE(EXCLUDED.sku, products.sku), gtin = COALESCE(EXCLUDED.gtin, products.gtin),
       brand = COALESCE(EXCLUDED.brand, products.brand), image_url = COALESCE(EXCLUDED.image_url, products.image_url),
       provenance = EXCLUDED.provenance, updated_at = now(),
       last_seen_at = now(), last_run = EXCLUDED.last_run, source_key = COALESCE(EXCLUDED.source_key, products.source_key),
       missed_runs = 0, gone_at = NULL,
       prior_state = CASE
         WHEN (products.price, products.currency, products.list_price, products.availability)
              IS DISTINCT FROM (EXCLUDED.price, EXCLUDED.currency, EXCLUDED.list_price, EXCLUDED.availability)
         THEN jsonb_build_array(products.price::float8, products.currency, products.list_price::float8, products.availability,
                                COALESCE(products.last_seen_at, products.updated_at), products.last_run)
       END
     RETURNING ${PRODUCT_COLUMNS}, (xmax = 0) AS inserted, prior_state`;

async function upsertBatch(tx: Queryable, items: readonly ScrapedProduct[], seenBy: SeenBy, tagging: RunTagging | undefined): Promise<UpsertResult> {
  const params = [
    items.map((i) => i.scrape_key),
    items.map((i) => i.title),
    items.map((i) => (i.price === null ? null : String(i.price))),
    items.map((i) => i.currency),
    items.map((i) => i.description),
    items.map((i) => i.source_url),
    items.map((i) => (i.list_price == null ? null : String(i.list_price))),
    items.map((i) => i.availability ?? null),
    items.map((i) => i.sku ?? null),
    items.map((i) => i.gtin ?? null),
    items.map((i) => i.brand ?? null),
    items.map((i) => i.image_url ?? null),
    items.map((i) => (i.provenance == null ? null : JSON.stringify(i.provenance))),
    seenBy.runId,
    seenBy.source,
  ];
  // The run's tags in the same statement, on the rows it wrote (RETURNING's order is kept through the CTE).
  const statement = tagging?.around(UPSERT, params) ?? { sql: UPSERT, params };
  const rows = await tx.query<Product & { inserted: boolean; prior_state: PriorState | null }>(statement.sql, statement.params);
  let created = 0;
  const products: Product[] = [];
  const sightings: ProductSighting[] = [];
  for (const row of rows) {
    if (row.inserted) created++;
    products.push(toProduct(row));
    // A product seen as it was needs nothing but the last_seen_at the upsert already moved.
    const prior = row.prior_state;
    if (!row.inserted && prior === null) continue;
    const before: ProductSighting['before'] =
      prior === null ? null : { price: prior[0], currency: prior[1], list_price: prior[2], availability: prior[3], last_seen_at: prior[4], last_run: prior[5] };
    sightings.push({ product_id: row.id, source_url: row.source_url, before, seen: stateOf(row) });
  }
  return { products, created, updated: products.length - created, sightings };
}
