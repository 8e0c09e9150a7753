// A product made through the API, its first state and its product.created event written by one statement, when nothing must be judged or delivered for it.
import type { AlertEvaluator } from '../alerts/rules/alert-evaluator.js';
import type { Queryable } from '../db/queryable.js';
import type { Product, ProductCreate } from '../products/product-schema.js';
import type { ProductStore } from '../products/product-store.js';
import { EVENT_COLUMNS, type StoredEvent } from '../tracking/tracking-store.js';
import type { WebhookDeliveries } from '../tracking/webhook-deliveries.js';

export interface CreateStatementDeps {
  products: Pick<ProductStore, 'insert'>;
  deliveries: Pick<WebhookDeliveries, 'noneListening'>;
  alerts: Pick<AlertEvaluator, 'noneOnCreated'>;
}

/**
 * The whole statement, around the product store's INSERT (its columns and values) made conditional:
 *
 *   WITH created AS (
 *          INSERT INTO products (…) SELECT $1 … $11
 *           WHERE <no webhook listens to product.created> AND <no enabled alert rule can fire on one>
 *          RETURNING <product columns>),
 *        first_state AS (INSERT INTO price_observations … SELECT … FROM created),
 *        created_event AS (INSERT INTO events … SELECT 'product.created', … FROM created RETURNING <event columns>)
 *   SELECT created.*, <created_event as JSON> FROM created
 *
 * No row back: a webhook or a rule wants the product.created event, and nothing was written; the
 * caller takes the long way (a transaction that also judges the rules and queues the deliveries).
 * The first state and the event are the rows the tracker's `observe` and `append` would write.
 */
function statement(insert: string, params: number): string {
  const [runId, kind, source] = [1, 2, 3].map((n) => `$${params + n}`);
  return `WITH created AS (${insert}),
    first_state AS (
      INSERT INTO price_observations (product_id, price, currency, list_price, availability, first_seen_at, first_run, source)
      SELECT id, price, currency, list_price, availability, now(), ${runId}::text, ${kind}::text FROM created),
    created_event AS (
      INSERT INTO events (type, product_id, source, run_id, data)
      SELECT 'product.created', id, COALESCE(${source}::text, source_url), ${runId}::text,
             jsonb_build_object('price', price, 'currency', currency, 'list_price', list_price, 'availability', availability, 'via', ${kind}::text)
        FROM created
      RETURNING ${EVENT_COLUMNS})
    SELECT created.*, (SELECT row_to_json(created_event) FROM created_event) AS created_event FROM created`;
}

/** A product made through the API in one statement, or undefined when the long way is needed (see `statement`). */
export function createProductAlone(deps: CreateStatementDeps): (input: ProductCreate, db: Queryable) => Promise<{ product: Product; events: StoredEvent[] } | undefined> {
  /** The statement, by the text of the INSERT it wraps: the same text object each time (the driver names prepared statements by their text). */
  const statements = new Map<string, string>();
  const quiet = () => `${deps.deliveries.noneListening(`ARRAY['product.created']`)} AND ${deps.alerts.noneOnCreated()}`;
  return async (input, db) => {
    const insert = deps.products.insert(input);
    const inner = insert.sql(quiet());
    let sql = statements.get(inner);
    if (sql === undefined) {
      sql = statement(inner, insert.params.length);
      statements.set(inner, sql);
    }
    // A product made through the API belongs to no run and no source.
    const [row] = await db.query<Product & { created_event: StoredEvent }>(sql, [...insert.params, null, 'api', null]);
    if (row === undefined) return undefined;
    const { created_event: event, ...product } = row;
    return { product, events: [event] };
  };
}
