// What rule evaluation and preview read, batched: products with their tags, their recorded states, and the events of a period.
import type { Queryable } from '../../db/queryable.js';
import type { HistoryPoint } from '../../tracking/tracking-store.js';
import type { ConditionType, RuleScope } from './alert-rule-schema.js';
import type { AlertEvent, ProductContext } from './firing.js';
import { DAY_MS } from './price-history.js';

/** The change events each condition is judged on (rule-conditions.ts). */
export const LISTENS: Record<ConditionType, readonly string[]> = {
  price_at_or_below: ['price.changed', 'product.created'],
  price_drop: ['price.changed'],
  lowest_in_days: ['price.changed'],
  back_in_stock: ['availability.changed'],
  out_of_stock: ['availability.changed'],
  availability_changed: ['availability.changed'],
  price_changed: ['price.changed'],
  product_gone: ['product.gone'],
  suspicious_discount: ['price.changed'],
};

/** Conditions a product.created event can meet: while an enabled rule has one, a new product is recorded the long way. */
export const CREATED_CONDITIONS = (Object.keys(LISTENS) as ConditionType[]).filter((type) => LISTENS[type].includes('product.created'));

/** How far back a rule reads history: its own period (lowest price, drop from the highest, Omnibus) twice over, and the chart's 90 days. */
export function lookBackDays(conditions: ReadonlyArray<{ days?: number | undefined }>): number {
  return conditions.reduce((most, c) => Math.max(most, 2 * (c.days ?? 30)), 90) + 1;
}

const isoTime = (column: string) => `to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;

/** The products with their tags, by id. */
export async function productContexts(ids: readonly number[], tx: Queryable): Promise<Map<number, ProductContext>> {
  if (ids.length === 0) return new Map();
  const rows = await tx.query<ProductContext & { source_url: string | null }>(
    `SELECT p.id, p.title, p.source_url AS url,
            COALESCE((SELECT jsonb_agg(t.name ORDER BY t.name) FROM product_tags pt JOIN tags t ON t.id = pt.tag_id WHERE pt.product_id = p.id), '[]'::jsonb) AS tags
       FROM products p WHERE p.id = ANY ($1::int[])`,
    [ids],
  );
  return new Map(rows.map((row) => [row.id, { id: row.id, title: row.title, url: row.url, tags: row.tags }]));
}

/**
 * The recorded states of each product still in force at or after `since`, oldest first (the one in
 * force at `since` included, so a period that starts there is covered). The current state's
 * last_seen_at is its own start: evaluation reads only when states began.
 */
export async function histories(ids: readonly number[], since: string, tx: Queryable): Promise<Map<number, HistoryPoint[]>> {
  const found = new Map<number, HistoryPoint[]>(ids.map((id) => [id, []]));
  if (ids.length === 0) return found;
  const rows = await tx.query<HistoryPoint & { product_id: number }>(
    `SELECT product_id, price::float8 AS price, currency, list_price::float8 AS list_price, availability,
            ${isoTime('first_seen_at')} AS first_seen_at, ${isoTime('COALESCE(last_seen_at, first_seen_at)')} AS last_seen_at, first_run, last_run, source
       FROM price_observations
      WHERE product_id = ANY ($1::int[]) AND COALESCE(last_seen_at, 'infinity') >= $2::timestamptz
      ORDER BY product_id, first_seen_at, id`,
    [ids, since],
  );
  for (const { product_id: productId, ...point } of rows) found.get(productId)?.push(point);
  return found;
}

/**
 * The events of the last `days` days a rule of `scope` could judge (its condition's types), oldest
 * first, at most `limit` (and whether there were more). A `site` scope is narrowed afterwards, by
 * the product's own URL.
 */
export async function periodEvents(scope: RuleScope, types: readonly string[], from: string, limit: number, tx: Queryable): Promise<{ events: AlertEvent[]; truncated: boolean }> {
  const conditions = ['e.created_at >= $1::timestamptz', 'e.product_id IS NOT NULL', 'e.type = ANY ($2::text[])'];
  const values: unknown[] = [from, types];
  const add = (sql: (p: string) => string, value: unknown) => {
    values.push(value);
    conditions.push(sql(`$${values.length}`));
  };
  if (scope.type === 'product') add((p) => `e.product_id = ${p}`, scope.product_id);
  if (scope.type === 'tag') add((p) => `e.product_id IN (SELECT pt.product_id FROM product_tags pt JOIN tags t ON t.id = pt.tag_id WHERE t.name = ${p})`, scope.tag);
  if (scope.type === 'source') add((p) => `e.source = ${p}`, scope.source);
  values.push(limit + 1);
  const rows = await tx.query<AlertEvent>(
    `SELECT e.id::float8 AS id, e.type, e.product_id, e.source, e.data, ${isoTime('e.created_at')} AS created_at
       FROM events e WHERE ${conditions.join(' AND ')} ORDER BY e.created_at, e.id LIMIT $${values.length}`,
    values,
  );
  return { events: rows.slice(0, limit), truncated: rows.length > limit };
}

/** `at` minus `days`, as an ISO time. */
export function daysBefore(at: string | number, days: number): string {
  return new Date((typeof at === 'number' ? at : Date.parse(at)) - days * DAY_MS).toISOString();
}
