// Webhook subscriptions and the record of every delivery attempt, in the relational database.
import { pagedList } from '../db/paged-list.js';
import type { Database, Queryable } from '../db/database.js';
import { LimitReached } from '../problems.js';
import { redactUrl } from '../redact.js';

export interface WebhookFilter {
  /** Only events of these products. */
  product_ids?: number[];
  /** Only events of this source (the URL a scrape or crawl started from). */
  source?: string;
}

export interface Webhook {
  id: string;
  url: string;
  events: string[];
  filter: WebhookFilter | null;
  enabled: boolean;
  disabled_reason: string | null;
  created_at: string;
  updated_at: string;
}

export interface WebhookWithSecret extends Webhook {
  secret: string;
}

export interface Delivery {
  id: string;
  webhook_id: string;
  event_id: number;
  attempt: number;
  status: 'succeeded' | 'failed';
  response_status: number | null;
  error: string | null;
  duration_ms: number | null;
  next_attempt_at: string | null;
  created_at: string;
}

/** How many subscriptions may exist in all and to one target URL (WEBHOOKS_MAX, WEBHOOKS_PER_URL). */
export interface WebhookLimits {
  total: number;
  perUrl: number;
}

export interface WebhookStore {
  /** Refuses (LimitReached, nothing stored) a subscription beyond the limits. */
  create(id: string, fields: { url: string; events: string[]; secret: string; filter: WebhookFilter | null }): Promise<Webhook>;
  get(id: string): Promise<WebhookWithSecret | undefined>;
  list(query: { limit: number; offset: number }): Promise<{ items: Webhook[]; total: number }>;
  update(id: string, fields: { url?: string; events?: string[]; secret?: string; filter?: WebhookFilter | null; enabled?: boolean }): Promise<Webhook | undefined>;
  delete(id: string): Promise<boolean>;
  /** Where deliveries go: the URL as given, a password in it included (Webhook.url shows it masked). */
  deliveryUrl(id: string): Promise<string | undefined>;
  /** Enabled webhooks listening for any of `types`, inside `tx` (the events' own transaction), oldest first, each with where it delivers. */
  listening(types: readonly string[], tx: Queryable): Promise<Array<Pick<Webhook, 'id' | 'events' | 'filter'> & { target: string }>>;
  disable(id: string, reason: string): Promise<void>;
  recordDelivery(delivery: Omit<Delivery, 'created_at'>): Promise<void>;
  deliveries(webhookId: string, query: { limit: number; offset: number }): Promise<{ items: Delivery[]; total: number }>;
  delivery(webhookId: string, deliveryId: string): Promise<Delivery | undefined>;
}

/** The URL as given when it holds a password (kept apart, never served), else null. */
const privateUrl = (url: string): string | null => (redactUrl(url) === url ? null : url);

const isoTime = (column: string) => `to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;
const COLUMNS = `id, url, events, filter, enabled, disabled_reason, ${isoTime('created_at')} AS created_at, ${isoTime('updated_at')} AS updated_at`;
const DELIVERY_COLUMNS = `id, webhook_id, event_id::float8 AS event_id, attempt, status, response_status, error, duration_ms,
  ${isoTime('next_attempt_at')} AS next_attempt_at, ${isoTime('created_at')} AS created_at`;

/** node-postgres parses text[]; PGlite may hand back "{a,b}". */
function textArray(value: string[] | string): string[] {
  if (Array.isArray(value)) return value;
  const inner = value.replace(/^\{|\}$/g, '');
  return inner === '' ? [] : inner.split(',').map((v) => v.replace(/^"|"$/g, ''));
}

function toWebhook<T extends Webhook>(row: T): T {
  return { ...row, events: textArray(row.events) };
}

/** The webhooks that want any of `types` (an SQL text[] expression): enabled, and subscribed to one of them or to all. */
export function listeningTo(types: string): string {
  return `enabled AND (events && ${types} OR '*' = ANY (events))`;
}

/** Where a webhook delivers: the URL as given, a password in it included. */
const TARGET = 'COALESCE(url_private, url)';

/**
 * Refuses a subscription to `url` (other than `except`) beyond the limits. Run in the writing
 * transaction after locking the table against other writers, so two requests cannot both pass.
 */
async function assertRoom(tx: Queryable, limits: WebhookLimits, url: string, options: { counted: boolean; except?: string }): Promise<void> {
  await tx.exec('LOCK TABLE webhooks IN SHARE ROW EXCLUSIVE MODE');
  const [row] = await tx.query<{ total: number; same: number }>(
    `SELECT count(*)::int AS total, (count(*) FILTER (WHERE ${TARGET} = $1 AND id IS DISTINCT FROM $2))::int AS same FROM webhooks`,
    [url, options.except ?? null],
  );
  if (options.counted && row!.total >= limits.total) {
    throw new LimitReached(`There are ${row!.total} webhooks, the most WEBHOOKS_MAX allows (${limits.total}); delete one first.`);
  }
  if (row!.same >= limits.perUrl) {
    throw new LimitReached(`${row!.same} webhooks already deliver to this URL, the most WEBHOOKS_PER_URL allows (${limits.perUrl}); one subscription can list several events.`);
  }
}

export function createWebhookStore(db: Database, limits: WebhookLimits = { total: Number.POSITIVE_INFINITY, perUrl: Number.POSITIVE_INFINITY }): WebhookStore {
  return {
    async create(id, f) {
      return db.transaction(async (tx) => {
        await assertRoom(tx, limits, f.url, { counted: true });
        const rows = await tx.query<Webhook>(`INSERT INTO webhooks (id, url, url_private, events, secret, filter) VALUES ($1, $2, $3, $4, $5, $6) RETURNING ${COLUMNS}`, [
          id,
          redactUrl(f.url),
          privateUrl(f.url),
          f.events,
          f.secret,
          f.filter === null ? null : JSON.stringify(f.filter),
        ]);
        return toWebhook(rows[0]!);
      });
    },

    async get(id) {
      const rows = await db.query<WebhookWithSecret>(`SELECT ${COLUMNS}, secret FROM webhooks WHERE id = $1`, [id]);
      return rows[0] === undefined ? undefined : toWebhook(rows[0]);
    },

    async list(query) {
      const page = await pagedList<Webhook>(db, {
        columns: COLUMNS,
        from: 'FROM webhooks',
        orderBy: 'webhooks.created_at DESC, id DESC',
        limit: query.limit,
        offset: query.offset,
      });
      return { items: page.items.map(toWebhook), total: page.total };
    },

    async update(id, f) {
      const sets: string[] = [];
      const params: unknown[] = [id];
      const set = (column: string, value: unknown) => {
        params.push(value);
        sets.push(`${column} = $${params.length}`);
      };
      if (f.url !== undefined) {
        set('url', redactUrl(f.url));
        set('url_private', privateUrl(f.url));
      }
      if (f.events !== undefined) set('events', f.events);
      if (f.secret !== undefined) set('secret', f.secret);
      if (f.filter !== undefined) set('filter', f.filter === null ? null : JSON.stringify(f.filter));
      if (f.enabled !== undefined) {
        set('enabled', f.enabled);
        if (f.enabled) sets.push('disabled_reason = NULL');
      }
      const rows = await db.transaction(async (tx) => {
        if (f.url !== undefined) await assertRoom(tx, limits, f.url, { counted: false, except: id });
        return tx.query<Webhook>(`UPDATE webhooks SET ${[...sets, 'updated_at = now()'].join(', ')} WHERE id = $1 RETURNING ${COLUMNS}`, params);
      });
      return rows[0] === undefined ? undefined : toWebhook(rows[0]);
    },

    async deliveryUrl(id) {
      const [row] = await db.query<{ url: string }>('SELECT COALESCE(url_private, url) AS url FROM webhooks WHERE id = $1', [id]);
      return row?.url;
    },

    async delete(id) {
      return (await db.query('DELETE FROM webhooks WHERE id = $1 RETURNING id', [id])).length > 0;
    },

    async listening(types, tx) {
      const rows = await tx.query<Pick<Webhook, 'id' | 'events' | 'filter'> & { target: string }>(
        `SELECT id, events, filter, ${TARGET} AS target FROM webhooks WHERE ${listeningTo('$1::text[]')} ORDER BY created_at, id`,
        [types],
      );
      return rows.map((row) => ({ ...row, events: textArray(row.events) }));
    },

    async disable(id, reason) {
      await db.query('UPDATE webhooks SET enabled = false, disabled_reason = $2, updated_at = now() WHERE id = $1', [id, reason]);
    },

    async recordDelivery(d) {
      await db.query(
        `INSERT INTO webhook_deliveries (id, webhook_id, event_id, attempt, status, response_status, error, duration_ms, next_attempt_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
        [d.id, d.webhook_id, d.event_id, d.attempt, d.status, d.response_status, d.error, d.duration_ms, d.next_attempt_at],
      );
    },

    async deliveries(webhookId, query) {
      return pagedList<Delivery>(db, {
        columns: DELIVERY_COLUMNS,
        from: 'FROM webhook_deliveries WHERE webhook_id = $1',
        params: [webhookId],
        orderBy: 'webhook_deliveries.created_at DESC, id DESC',
        limit: query.limit,
        offset: query.offset,
      });
    },

    async delivery(webhookId, deliveryId) {
      const rows = await db.query<Delivery>(`SELECT ${DELIVERY_COLUMNS} FROM webhook_deliveries WHERE webhook_id = $1 AND id = $2`, [webhookId, deliveryId]);
      return rows[0];
    },
  };
}
