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
import type { Product, ProductCreate, ProductDetail, ProductListQuery, ProductUpdate } from './product-schema.js';
import type { RunTagging } from '../tags/tag-store.js';
import { type ProductSighting, type ScrapedProduct, type SeenBy, type UpsertResult, upsertScraped } from './product-upsert.js';

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
  /** Inserts or updates all items, in `tx` (product-upsert.ts): a re-run updates what it saw before. */
  upsertScraped(items: readonly ScrapedProduct[], seenBy: SeenBy, tx: Queryable, tagging?: RunTagging): Promise<UpsertResult>;
}

const UPDATABLE = ['title', 'price', 'description', 'currency', 'source_url', 'list_price', 'availability', 'sku', 'gtin', 'brand', 'image_url'] as const;
/** Fields whose change is history (price_observations) and an event. */
const TRACKED = ['price', 'currency', 'list_price', 'availability'] as const;
const NUMERIC: ReadonlySet<string> = new Set(['price', 'list_price']);
const URL_FIELDS: ReadonlySet<string> = new Set(['source_url', 'image_url']);

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

    upsertScraped: (items, seenBy, tx, tagging) => upsertScraped(tx, items, seenBy, tagging),
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
