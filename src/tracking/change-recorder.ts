// What every product write does besides writing products: history, events, their webhook deliveries, and word to live streams.
import { EventEmitter } from 'node:events';
import type { Queryable } from '../db/database.js';
import type { JobQueue } from '../jobs/job-queue.js';
import type { PendingEvent, RunRef, Sighting, StoredEvent, Tracker } from './tracking-store.js';
import { listeningTo, type Webhook, type WebhookStore } from './webhook-store.js';

export interface ChangeRecorder {
  /**
   * Observations and events of one write, and a queued delivery per listening webhook: all inside
   * `tx`. With `complete` the run ended successfully with this write, and the products of its
   * source it did not see have missed a run.
   */
  record(sightings: readonly Sighting[], run: RunRef, tx: Queryable, options?: { complete?: boolean }): Promise<StoredEvent[]>;
  /**
   * A new product, its first state and its product.created event in one statement on `db` (one round
   * trip, its own transaction), when no webhook listens to product.created; undefined when one does
   * (nothing is written then: use `record` in a transaction, which queues the deliveries).
   * `insert(condition)` is the products INSERT, written as `INSERT ... SELECT ... WHERE condition
   * RETURNING` the product columns, its parameters first.
   */
  createAlone<Row>(
    db: Queryable,
    insert: (condition: string) => { sql: string; params: unknown[] },
    run: RunRef,
  ): Promise<{ row: Row; events: StoredEvent[] } | undefined>;
  /** A successful run of a source ended: the products it keeps missing are gone (inside `tx`). */
  finishRun(run: RunRef, tx: Queryable): Promise<StoredEvent[]>;
  /** After commit: live event streams of this process look at once. */
  published(events: readonly StoredEvent[]): void;
  onPublished(listener: () => void): () => void;
}

/** No enabled webhook listens to product.created (the condition of createAlone's INSERT). */
const NO_CREATED_WEBHOOK = `NOT EXISTS (SELECT 1 FROM webhooks WHERE ${listeningTo(`ARRAY['product.created']`)})`;

export function createChangeRecorder(deps: { tracker: Tracker; webhooks: WebhookStore; queue: Pick<JobQueue, 'enqueueDeliveries'> }): ChangeRecorder {
  const emitter = new EventEmitter();
  emitter.setMaxListeners(0);
  /** createAlone's whole statement, by the text of the INSERT it wraps. */
  const aloneStatements = new Map<string, string>();

  /** Appends the events and queues a delivery per listening webhook. */
  const appendAndFanOut = async (pending: readonly PendingEvent[], tx: Queryable): Promise<StoredEvent[]> => {
    if (pending.length === 0) return [];
    const listening = await deps.webhooks.listening([...new Set(pending.map((e) => e.type))], tx);
    const events = await deps.tracker.append(pending, tx);
    const deliveries = listening.flatMap((webhook) =>
      events.filter((event) => wants(webhook, event)).map((event) => ({ webhook_id: webhook.id, event_id: event.id, attempt: 1 })),
    );
    await deps.queue.enqueueDeliveries(deliveries, { tx });
    return events;
  };

  return {
    async record(sightings, run, tx, options = {}) {
      // Every row lock first (observations, then the missed products), the events last.
      const pending = await deps.tracker.observe(sightings, run, tx);
      if (options.complete === true) pending.push(...(await deps.tracker.missed(run, tx)));
      return appendAndFanOut(pending, tx);
    },
    finishRun: async (run, tx) => appendAndFanOut(await deps.tracker.missed(run, tx), tx),

    async createAlone<Row>(db: Queryable, insert: (condition: string) => { sql: string; params: unknown[] }, run: RunRef) {
      // The webhooks are read in the statement's own snapshot, as `record` reads them in its transaction.
      const product = insert(NO_CREATED_WEBHOOK);
      const followUp = deps.tracker.createdFollowUp(run, product.params.length);
      // The same text object for the same INSERT: the driver names prepared statements by their text.
      let sql = aloneStatements.get(product.sql);
      if (sql === undefined) {
        sql = `WITH created AS (${product.sql}), ${followUp.ctes}
         SELECT created.*, (SELECT row_to_json(created_event) FROM created_event) AS created_event FROM created`;
        aloneStatements.set(product.sql, sql);
      }
      const [row] = await db.query<Row & { created_event: StoredEvent }>(sql, [...product.params, ...followUp.params]);
      if (row === undefined) return undefined;
      const { created_event: event, ...created } = row;
      return { row: created as Row, events: [event] };
    },
    published(events) {
      if (events.length > 0) emitter.emit('events');
    },
    onPublished(listener) {
      emitter.on('events', listener);
      return () => emitter.off('events', listener);
    },
  };
}

function wants(webhook: Pick<Webhook, 'events' | 'filter'>, event: StoredEvent): boolean {
  if (!webhook.events.includes('*') && !webhook.events.includes(event.type)) return false;
  const filter = webhook.filter;
  if (filter === null) return true;
  if (filter.product_ids !== undefined && (event.product_id === null || !filter.product_ids.includes(event.product_id))) return false;
  if (filter.source !== undefined && event.source !== filter.source) return false;
  return true;
}
