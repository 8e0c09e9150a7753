// How lists of products are read, as SQL: columns, filters, sort orders, search pages, keyset
// batches and totals. Pure text and parameters; product-store.ts runs them.
import type { QueryOptions } from '../db/database.js';
import { normalizeTag } from '../tags/tag-schema.js';
import { tagNamesSql } from '../tags/tag-store.js';
import { canonicalUrl } from '../url-identity/url-key.js';
import { Product, type ProductListQuery, type Sort } from './product-schema.js';
import { likePattern, rankTerms, relevanceRank, searchCondition } from './product-search.js';

/** A timestamptz as the API shows it (ISO 8601, UTC, milliseconds), made by the database. */
export const isoTime = (column: string) => `to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS ${column}`;

// float8 is how the driver hands us a JS number; NUMERIC keeps the stored value exact. Timestamps
// come as text: parsing them into Dates and formatting them back was a third of a list's CPU time.
// Price and the timestamps are aliased expressions, so ORDER BY must name the table's columns
// (products.price): a bare name there means the output column, which no index covers.
export const PRODUCT_COLUMNS =
  'id, title, price::float8 AS price, currency, description, source_url, list_price::float8 AS list_price, availability, sku, gtin, brand, image_url, ' +
  `${isoTime('created_at')}, ${isoTime('updated_at')}`;

/**
 * One product with its provenance and tags, in one statement: its tags read in a statement of their
 * own cost the database more than the product did.
 */
export const PRODUCT_DETAIL_SQL = `SELECT ${PRODUCT_COLUMNS}, provenance, ${isoTime('last_seen_at')}, ${isoTime('gone_at')}, ${tagNamesSql('product', 'products.id')} AS tags
  FROM products WHERE id = $1`;

export const ORDER_BY: Record<Sort, string> = {
  id: 'id ASC',
  '-id': 'id DESC',
  price: 'products.price ASC NULLS LAST, id ASC',
  '-price': 'products.price DESC NULLS LAST, id DESC',
  title: 'title ASC, id ASC',
  '-title': 'title DESC, id DESC',
  created_at: 'products.created_at ASC, id ASC',
  '-created_at': 'products.created_at DESC, id DESC',
};

/**
 * Where the next batch starts, after a row whose sort value (as text, exact: no float or
 * millisecond rounding) is $k and id is $i. Same order as ORDER_BY, NULL prices last.
 */
export const AFTER: Record<Sort, { key: string | undefined; after: (k: string, i: string) => string; afterNull?: (i: string) => string }> = {
  id: { key: undefined, after: (_k, i) => `id > ${i}` },
  '-id': { key: undefined, after: (_k, i) => `id < ${i}` },
  price: { key: 'price::text', after: (k, i) => `((price, id) > (${k}::numeric, ${i}) OR price IS NULL)`, afterNull: (i) => `(price IS NULL AND id > ${i})` },
  '-price': { key: 'price::text', after: (k, i) => `((price, id) < (${k}::numeric, ${i}) OR price IS NULL)`, afterNull: (i) => `(price IS NULL AND id < ${i})` },
  title: { key: 'title', after: (k, i) => `(title, id) > (${k}, ${i})` },
  '-title': { key: 'title', after: (k, i) => `(title, id) < (${k}, ${i})` },
  created_at: { key: 'products.created_at::text', after: (k, i) => `(products.created_at, id) > (${k}::timestamptz, ${i})` },
  '-created_at': { key: 'products.created_at::text', after: (k, i) => `(products.created_at, id) < (${k}::timestamptz, ${i})` },
};

export interface Where {
  sql: string;
  params: unknown[];
  /** q is one of the conditions. */
  search: boolean;
}

export function whereClause(query: ProductListQuery): Where {
  const conditions: string[] = [];
  const params: unknown[] = [];
  const add = (condition: (placeholder: string) => string, value: unknown) => {
    params.push(value);
    conditions.push(condition(`$${params.length}`));
  };
  if (query.q !== undefined) add(searchCondition, likePattern(query.q));
  if (query.min_price !== undefined) add((p) => `price >= ${p}`, query.min_price);
  if (query.max_price !== undefined) add((p) => `price <= ${p}`, query.max_price);
  if (query.source_url !== undefined) add((p) => `source_url = ${p}`, query.source_url);
  if (query.currency !== undefined) add((p) => `currency = ${p}`, query.currency);
  // The URL a scrape or crawl started from, in the canonical form runs store it in.
  if (query.source !== undefined) add((p) => `source_key = ${p}`, canonicalUrl(query.source) ?? query.source);
  if (query.availability !== undefined) add((p) => `availability = ${p}`, query.availability);
  if (query.tag !== undefined) add((p) => `id IN (SELECT pt.product_id FROM product_tags pt JOIN tags t ON t.id = pt.tag_id WHERE t.name = ${p})`, normalizeTag(query.tag));
  // Both start from the events since then (an index range), so a quiet catalogue costs nothing to ask.
  if (query.changed_since !== undefined) {
    add((p) => `id IN (SELECT product_id FROM events WHERE type IN ('price.changed', 'availability.changed') AND created_at >= ${p}::timestamptz)`, query.changed_since);
  }
  if (query.price_dropped_since !== undefined) {
    add(
      (p) => `id IN (SELECT product_id FROM events WHERE type = 'price.changed' AND created_at >= ${p}::timestamptz)
        AND price < COALESCE(
          (SELECT o.price FROM price_observations o WHERE o.product_id = products.id AND o.first_seen_at <= ${p}::timestamptz ORDER BY o.first_seen_at DESC, o.id DESC LIMIT 1),
          (SELECT o.price FROM price_observations o WHERE o.product_id = products.id ORDER BY o.first_seen_at ASC, o.id ASC LIMIT 1))`,
      query.price_dropped_since,
    );
  }
  return { sql: conditions.length === 0 ? '' : `WHERE ${conditions.join(' AND ')}`, params, search: query.q !== undefined };
}

/**
 * A search is planned for its pattern every time: a prepared (generic) plan cannot know whether q
 * matches ten rows or a million, and took 70 ms where the pattern's own plan took 20.
 */
export const planFor = (where: Where): QueryOptions | undefined => (where.search ? { prepared: false } : undefined);

/**
 * When `q` is given and no `sort` is, best matches first (product-search.ts): the rank of a row whose
 * lower-cased title is the column `lowered`. Appends its terms to `params`, which must hold the where clause's first.
 */
export function relevance(query: ProductListQuery, params: unknown[], lowered: string): string | undefined {
  if (query.q === undefined || query.sort !== undefined) return undefined;
  const at = params.push(...rankTerms(query.q));
  return relevanceRank(lowered, [`$${at - 3}`, `$${at - 2}`, `$${at - 1}`, `$${at}`]);
}

/**
 * A page of a search and its total from one pass over the matches: the trigram indexes give them,
 * they are kept (materialised) with their rank, counted and ordered, and only the page's rows are
 * formatted. Two statements (page, then count(*)) read every match twice, and formatting all of
 * them before the sort cost a third more. `rank` replaces `sort` when given.
 */
export function searchPageSql(where: Where, sort: Sort, rank: string | undefined, paging: string): string {
  // Inside, the matches stand in for the table, so the ORDER_BY expressions (products.price...) apply.
  const page = rank === undefined ? `SELECT id FROM matches AS products ORDER BY ${ORDER_BY[sort]}${paging}` : `SELECT id, rank FROM matches ORDER BY rank, id${paging}`;
  const kept = rank === undefined ? 'id, title, price, created_at' : `id, ${rank} AS rank`;
  return `WITH matches AS MATERIALIZED (SELECT ${kept} FROM products ${where.sql}),
      page AS (${page})
    SELECT ${PRODUCT_COLUMNS}, (SELECT count(*) FROM matches)::int AS total
      FROM page JOIN products USING (id) ORDER BY ${rank === undefined ? ORDER_BY[sort] : 'page.rank, id'}`;
}

/**
 * The total, when the page itself proves it: a page shorter than asked for (or an unlimited list)
 * ends the result. Otherwise a filtered list needs count(*), which reads every matching row.
 */
export function totalFromPage(query: ProductListQuery, rows: number): number | undefined {
  const offset = query.offset ?? 0;
  if (rows === 0 && offset > 0) return undefined; // past the end: how far is unknown
  if (query.limit === undefined || rows < query.limit) return offset + rows;
  return undefined;
}

/**
 * A row without the columns a statement added for itself. Field by field: a rest pattern
 * ({ total, ...product }) copies through a slow runtime path, ~3 us for a page of 20.
 */
export function toProduct(row: Product): Product {
  return {
    id: row.id,
    title: row.title,
    price: row.price,
    currency: row.currency,
    description: row.description,
    source_url: row.source_url,
    list_price: row.list_price,
    availability: row.availability,
    sku: row.sku,
    gtin: row.gtin,
    brand: row.brand,
    image_url: row.image_url,
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}

/** Every product, from the running count the triggers of migration 3 keep: a few rows, whatever the table size. */
export const TOTAL_ALL = '(SELECT sum(n) FROM product_count_shards)::int';

/** A page's statement: its rows (PRODUCT_COLUMNS, and `total` when `withTotal`) in the asked order. */
export interface PageStatement {
  sql: string;
  params: unknown[];
  where: Where;
  withTotal: boolean;
  /** At most this many rows (none: all). */
  limit: number | undefined;
}

export function pageStatement(query: ProductListQuery): PageStatement {
  const where = whereClause(query);
  const params = [...where.params];
  const rank = relevance(query, params, 'search_title');
  let paging = '';
  if (query.limit !== undefined) {
    params.push(query.limit);
    paging += ` LIMIT $${params.length}`;
  }
  if (query.offset) {
    params.push(query.offset);
    paging += ` OFFSET $${params.length}`;
  }
  const sort = query.sort ?? 'id';
  // An unfiltered page reads the running total in the same statement (and so the same snapshot);
  // a search counts its matches in the same pass that finds them.
  const withTotal = where.search || (where.sql === '' && query.limit !== undefined);
  const sql = where.search
    ? searchPageSql(where, sort, rank, paging)
    : `SELECT ${PRODUCT_COLUMNS}${withTotal ? `, ${TOTAL_ALL} AS total` : ''} FROM products ${where.sql} ORDER BY ${ORDER_BY[sort]}${paging}`;
  return { sql, params, where, withTotal, limit: query.limit };
}

/** The Product schema's fields, in its order, taken from a page row `p`. */
const JSON_FIELDS = Object.keys(Product.properties)
  .map((name) => `p.${name}`)
  .join(', ');

/**
 * Products per part of a page's JSON. A text the database builds and sends costs it several times
 * more per byte past ~128 KB (one page of 1000 as one text: 7.7 ms of backend CPU; as parts of 100,
 * 40 KB each: 3.7 ms; the same rows without JSON: 1.7 ms).
 */
export const JSON_PART_ROWS = 100;

/**
 * A page as JSON text in parts, in order, each the elements of up to JSON_PART_ROWS products joined
 * by commas (the caller joins the parts with commas and puts the brackets around them), with each
 * part's row count and the total. Each row is written by row_to_json, the Product schema's fields in
 * its order, compact, numbered in the order the page's own statement leaves the rows. Numbers are
 * written by PostgreSQL: price as float8, in the shortest digits JavaScript writes too, with an
 * exponent where JavaScript may write zeros (1e+15 for 1000000000000000: the same number).
 */
export function pageJsonSql(page: PageStatement): string {
  // A page that fits one part is one aggregate: numbering and grouping its rows cost more than they save.
  if (page.limit !== undefined && page.limit <= JSON_PART_ROWS) {
    return `SELECT coalesce(string_agg(row_to_json(r)::text, ','), '') AS part, count(*)::int AS rows,
        ${page.withTotal ? 'max(p.total)' : 'NULL'}::int AS total
      FROM (${page.sql}) p CROSS JOIN LATERAL (SELECT ${JSON_FIELDS}) r`;
  }
  return `SELECT string_agg(j, ',' ORDER BY n) AS part, count(*)::int AS rows, max(total)::int AS total
    FROM (SELECT row_to_json(r)::text AS j, row_number() OVER () AS n, ${page.withTotal ? 'p.total' : 'NULL::int AS total'}
            FROM (${page.sql}) p CROSS JOIN LATERAL (SELECT ${JSON_FIELDS}) r) x
   GROUP BY (n - 1) / ${JSON_PART_ROWS} ORDER BY (n - 1) / ${JSON_PART_ROWS}`;
}
