// Products in the relational database: the same parameterised SQL for PostgreSQL and PGlite. Knows its table and nothing else.
import type { Database, Queryable } from '../db/queryable.js';
import { redactUrl } from '../redact.js';
import {
  AFTER,
  ORDER_BY,
  pageJsonSql,
  PRODUCT_DETAIL_SQL,
  pageStatement,
  planFor,
  PRODUCT_COLUMNS,
  relevance,
  toProduct,
  TOTAL_ALL,
  totalFromPage,
  whereClause,
  type Where,
} from './product-list-sql.js';
import type { Product, ProductCreate, ProductDetail, ProductListQuery, ProductUpdate, Provenance } from './product-schema.js';

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

/** One product INSERT, written as `INSERT ... SELECT ... WHERE condition RETURNING` the product columns. */
export interface InsertStatement {
  sql(condition: string): string;
  params: unknown[];
}

/** An unpaged list: the first batch, and the later ones (undefined when the first held them all). */
export interface ProductBatches {
  total: number;
  first: Product[];
  rest: AsyncIterable<Product[]> | undefined;
}

export interface ProductStore {
  list(query: ProductListQuery): Promise<{ items: Product[]; total: number }>;
  /**
   * The same page as `list`, as the JSON text the API answers, built by the database: no row of it is
   * parsed or serialised here (a page of 1000 spent most of its time doing both). In parts, in order,
   * each the elements of up to JSON_PART_ROWS products joined by commas; `[${parts.join(',')}]` is the page.
   */
  listJson(query: ProductListQuery): Promise<{ parts: string[]; total: number }>;
  /**
   * Every product matching `query` (its `limit` ignored), read `batchSize` rows at a time by keyset
   * on the sort order, so memory stays bounded and a deep batch costs what the first one does.
   */
  listAll(query: ProductListQuery, batchSize: number): Promise<ProductBatches>;
  /** One product with the provenance of its values and its tags. */
  get(id: number): Promise<ProductDetail | undefined>;
  /** The INSERT of a new product, for a caller that runs it (in a statement of its own making). */
  insert(input: ProductCreate): InsertStatement;
  /** Inserts a new product (in `q`, a transaction, when given). */
  create(input: ProductCreate, q?: Queryable): Promise<Product>;
  /** Changes only the fields present in `patch`; undefined when the product does not exist. */
  update(id: number, patch: ProductUpdate, q?: Queryable): Promise<Product | undefined>;
  /** Whether `patch` changes a value whose change is history (price, currency, list price, stock). */
  changesState(patch: ProductUpdate): boolean;
  /** Locks a product's row for the rest of `tx` and answers its state and last sighting. */
  lockState(id: number, tx: Queryable): Promise<ProductSighting['before'] | undefined>;
  delete(id: number): Promise<boolean>;
  /** Inserts or updates all items in one statement, in `tx`: a re-run updates what it saw before. */
  upsertScraped(items: readonly ScrapedProduct[], seenBy: SeenBy, tx: Queryable): Promise<UpsertResult>;
}

const UPDATABLE = ['title', 'price', 'description', 'currency', 'source_url', 'list_price', 'availability', 'sku', 'gtin', 'brand', 'image_url'] as const;
/** Fields whose change is history (price_observations) and an event. */
const TRACKED = ['price', 'currency', 'list_price', 'availability'] as const;
const NUMERIC: ReadonlySet<string> = new Set(['price', 'list_price']);
const URL_FIELDS: ReadonlySet<string> = new Set(['source_url', 'image_url']);

/** The values of a row whose change is history. */
export const stateOf = (row: ProductState): ProductState => ({
  price: row.price,
  currency: row.currency,
  list_price: row.list_price,
  availability: row.availability,
});

const inserts = new Map<string, string>();
/**
 * A new product's INSERT, written as a SELECT so that a caller can make it conditional. The same
 * text object each time: the driver names prepared statements by their text, and a string built
 * afresh per request is hashed afresh (5 % of a POST's CPU for this 2 KB statement).
 */
function insertSql(condition: string): string {
  let sql = inserts.get(condition);
  if (sql === undefined) {
    sql = `INSERT INTO products (title, price, description, currency, source_url, list_price, availability, sku, gtin, brand, image_url)
      SELECT $1::text, $2::numeric, $3::text, $4::text, $5::text, $6::numeric, $7::text, $8::text, $9::text, $10::text, $11::text
       WHERE ${condition}
      RETURNING ${PRODUCT_COLUMNS}`;
    inserts.set(condition, sql);
  }
  return sql;
}

export function createProductStore(db: Database): ProductStore {
  /** Products matching a filter: the running total when there is none, else count(*). */
  const countMatching = async (where: Where): Promise<number> => {
    const sql = where.sql === '' ? `SELECT ${TOTAL_ALL} AS total` : `SELECT count(*)::int AS total FROM products ${where.sql}`;
    const [row] = await db.query<{ total: number }>(sql, where.params, planFor(where));
    return row?.total ?? 0;
  };

  return {
    async list(query) {
      const page = pageStatement(query);
      const rows = await db.query<Product & { total?: number }>(page.sql, page.params, planFor(page.where));
      const items: Product[] = page.withTotal ? rows.map(toProduct) : rows;
      const total = totalFromPage(query, rows.length) ?? rows[0]?.total ?? (await countMatching(page.where));
      return { items, total };
    },

    async listJson(query) {
      const page = pageStatement(query);
      const rows = await db.query<{ part: string; rows: number; total: number | null }>(pageJsonSql(page), page.params, planFor(page.where));
      const count = rows.reduce((sum, row) => sum + row.rows, 0);
      const total = totalFromPage(query, count) ?? rows[0]?.total ?? (await countMatching(page.where));
      return { parts: rows.map((row) => row.part), total };
    },

    async listAll(query, batchSize) {
      const where = whereClause(query);
      const rankParams = [...where.params];
      const rank = relevance(query, rankParams, 'search_title');
      if (rank !== undefined) return rankedBatches(db, where, rank, rankParams, query.offset ?? 0, batchSize);
      const sort = query.sort ?? 'id';
      const { key, after, afterNull } = AFTER[sort];
      const select = `SELECT ${PRODUCT_COLUMNS}${key === undefined ? '' : `, ${key} AS sort_key`} FROM products`;
      const order = ORDER_BY[sort];
      type Row = Product & { sort_key?: string | null };
      const strip = (rows: Row[]): Product[] => (key === undefined ? rows : rows.map(toProduct));

      const firstParams = [...where.params, batchSize];
      let firstSql = `${select} ${where.sql} ORDER BY ${order} LIMIT $${firstParams.length}`;
      if (query.offset) {
        firstParams.push(query.offset);
        firstSql += ` OFFSET $${firstParams.length}`;
      }
      const firstRows = await db.query<Row>(firstSql, firstParams, planFor(where));
      const offset = query.offset ?? 0;
      if (firstRows.length < batchSize) {
        return { total: offset + firstRows.length, first: strip(firstRows), rest: undefined };
      }
      const total = await countMatching(where);

      async function* rest(last: Row): AsyncGenerator<Product[]> {
        for (;;) {
          const params = [...where.params];
          const at = (value: unknown) => {
            params.push(value);
            return `$${params.length}`;
          };
          const sortKey = last.sort_key ?? null;
          const condition = key === undefined ? after('', at(last.id)) : sortKey === null && afterNull !== undefined ? afterNull(at(last.id)) : after(at(sortKey), at(last.id));
          const sql = `${select} ${where.sql === '' ? 'WHERE' : `${where.sql} AND`} ${condition} ORDER BY ${order} LIMIT ${at(batchSize)}`;
          const rows = await db.query<Row>(sql, params, planFor(where));
          if (rows.length > 0) yield strip(rows);
          if (rows.length < batchSize) return;
          last = rows[rows.length - 1]!;
        }
      }
      return { total, first: strip(firstRows), rest: rest(firstRows[firstRows.length - 1]!) };
    },

    async get(id) {
      const rows = await db.query<ProductDetail>(PRODUCT_DETAIL_SQL, [id]);
      return rows[0];
    },

    insert(input) {
      return {
        sql: insertSql,
        params: [
          input.title,
          String(input.price),
          input.description ?? null,
          input.currency ?? null,
          input.source_url == null ? null : redactUrl(input.source_url),
          input.list_price == null ? null : String(input.list_price),
          input.availability ?? null,
          input.sku ?? null,
          input.gtin ?? null,
          input.brand ?? null,
          input.image_url == null ? null : redactUrl(input.image_url),
        ],
      };
    },

    async update(id, patch, q = db) {
      const sets: string[] = [];
      const params: unknown[] = [id];
      const edited: Record<string, { source: 'api'; locator: string }> = {};
      for (const field of UPDATABLE) {
        const value = patch[field];
        if (value === undefined) continue;
        // Numbers go as exact decimal text; URLs never keep a password.
        params.push(value === null ? null : NUMERIC.has(field) ? String(value) : URL_FIELDS.has(field) ? redactUrl(String(value)) : value);
        sets.push(`${field} = $${params.length}`);
        edited[field] = { source: 'api', locator: `PUT /products/${id}` };
      }
      if (sets.length === 0) return this.get(id);
      // A scraped product's provenance then says which values a person set, not the page.
      params.push(JSON.stringify(edited));
      const provenance = `provenance = CASE WHEN provenance IS NULL THEN NULL ELSE jsonb_set(provenance, '{fields}', COALESCE(provenance->'fields', '{}'::jsonb) || $${params.length}::jsonb) END`;
      const sql = `UPDATE products SET ${sets.join(', ')}, ${provenance}, updated_at = now() WHERE id = $1 RETURNING ${PRODUCT_COLUMNS}`;
      return (await q.query<Product>(sql, params))[0];
    },

    async create(input, q = db) {
      const statement = this.insert(input);
      return (await q.query<Product>(statement.sql('true'), statement.params))[0]!;
    },

    changesState: (patch) => TRACKED.some((field) => patch[field] !== undefined),

    async lockState(id, tx) {
      const [before] = await tx.query<NonNullable<ProductSighting['before']>>(
        `SELECT price::float8 AS price, currency, list_price::float8 AS list_price, availability,
                to_char(COALESCE(last_seen_at, updated_at) AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS last_seen_at, last_run
           FROM products WHERE id = $1 FOR UPDATE`,
        [id],
      );
      return before;
    },

    async delete(id) {
      const rows = await db.query('DELETE FROM products WHERE id = $1 RETURNING id', [id]);
      return rows.length > 0;
    },

    async upsertScraped(items, seenBy, tx) {
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
        const batch = await upsertBatch(tx, sorted.slice(from, from + UPSERT_BATCH), seenBy);
        // RETURNING's order is the input's.
        for (const [j, product] of batch.products.entries()) result.products[order[from + j]!] = product;
        result.created += batch.created;
        result.updated += batch.updated;
        result.sightings.push(...batch.sightings);
      }
      return result;
    },
  };
}

/**
 * An unpaged list in relevance order. A keyset cannot resume a ranking without reading every match
 * again (each batch would cost the whole search), so the matching ids are ranked once, in one
 * statement (4-8 bytes each in memory while the list streams), and the rows are read batch by batch
 * by id, each batch still held to the filters. That statement also gives the total.
 */
async function rankedBatches(db: Queryable, where: Where, rank: string, params: unknown[], offset: number, batchSize: number): Promise<ProductBatches> {
  const [row] = await db.query<{ ids: number[] }>(`SELECT coalesce(array_agg(id ORDER BY ${rank}, id), '{}') AS ids FROM products ${where.sql}`, params, planFor(where));
  const ids = row?.ids ?? [];
  const batch = async (from: number): Promise<Product[]> => {
    const wanted = ids.slice(from, from + batchSize);
    const batchParams = [...where.params, wanted];
    const rows = await db.query<Product>(`SELECT ${PRODUCT_COLUMNS} FROM products ${where.sql} AND id = ANY($${batchParams.length}::int[])`, batchParams, planFor(where));
    const position = new Map(wanted.map((id, i) => [id, i]));
    return rows.sort((a, b) => position.get(a.id)! - position.get(b.id)!);
  };
  const first = await batch(offset);
  async function* rest(): AsyncGenerator<Product[]> {
    for (let from = offset + batchSize; from < ids.length; from += batchSize) {
      const rows = await batch(from);
      // A row deleted, or changed to match no more, since the ranking is left out.
      if (rows.length > 0) yield rows;
    }
  }
  return { total: ids.length, first, rest: offset + batchSize < ids.length ? rest() : undefined };
}

/** Rows per upsert statement of a run's products. */
export const UPSERT_BATCH = 500;

/** A changed product's tracked values before the write, and its last sighting: price, currency, list price, availability, time, run. */
type PriorState = [number | null, string | null, number | null, string | null, string, string | null];

async function upsertBatch(tx: Queryable, items: readonly ScrapedProduct[], seenBy: SeenBy): Promise<UpsertResult> {
  // unnest() turns column arrays into rows: one statement (and one prepared plan) for any batch size.
  // What a run saw is the truth for price, stock and sale; identifiers a page stops showing are kept.
  // History needs a changed product as it was: ON CONFLICT updates the newest committed version,
  // locked, and `products.*` in SET is that version, so prior_state carries its tracked values back
  // (and stays NULL, costing nothing, when the run saw what was there).
  const rows = await tx.query<Product & { inserted: boolean; prior_state: PriorState | null }>(
    `INSERT INTO products (scrape_key, title, price, currency, description, source_url, list_price, availability, sku, gtin, brand, image_url, provenance,
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
     RETURNING ${PRODUCT_COLUMNS}, (xmax = 0) AS inserted, prior_state`,
    [
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
    ],
  );
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
