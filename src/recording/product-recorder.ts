// The write path of products, top to bottom: the product store, its tags, then history and change detection, the events, the alert rules, then the webhook deliveries.
import type { AlertEvaluator } from '../alerts/rules/alert-evaluator.js';
import type { Database, Queryable } from '../db/queryable.js';
import type { Product, ProductCreate, ProductUpdate } from '../products/product-schema.js';
import type { ProductStore } from '../products/product-store.js';
import { type ProductSighting, type ScrapedProduct, stateOf } from '../products/product-upsert.js';
import type { TagStore } from '../tags/tag-store.js';
import type { LiveEvents } from '../tracking/live-events.js';
import type { RunRef, StoredEvent, Tracker } from '../tracking/tracking-store.js';
import type { WebhookDeliveries } from '../tracking/webhook-deliveries.js';
import { createProductAlone } from './product-create-statement.js';

export interface RecordedProducts {
  products: Product[];
  created: number;
  updated: number;
  /** The events the write appended: published once the transaction has committed (run-writer.ts). */
  events: StoredEvent[];
}

export interface ProductRecorder {
  /**
   * In `tx` (the caller's: a run's or a crawl page's): stores what `run` saw, the history and events
   * the changes make, and a webhook delivery per listening webhook. With `complete` the run read its
   * source to the end, so the source's products it did not see have missed a run.
   */
  recordScraped(items: readonly ScrapedProduct[], run: RunRef, tx: Queryable, options?: { complete?: boolean }): Promise<RecordedProducts>;
  /** In `tx`: a run that ended well without writing products; its source's unseen products missed it. */
  finishRun(run: RunRef, tx: Queryable): Promise<StoredEvent[]>;
  /** A product made through the API: its first state and product.created event with it. */
  create(input: ProductCreate): Promise<Product>;
  /** A change through the API; a changed price or stock is history and an event like any other. */
  update(id: number, patch: ProductUpdate): Promise<Product | undefined>;
}

export interface ProductRecorderDeps {
  db: Database;
  products: ProductStore;
  tracker: Tracker;
  deliveries: Pick<WebhookDeliveries, 'fanOut' | 'noneListening'>;
  /** Every product a run saw gets the run's tags and its source's. */
  tags: Pick<TagStore, 'runTagging'>;
  /** Judges the alert rules on the events, in their transaction. */
  alerts: Pick<AlertEvaluator, 'evaluate' | 'noneOnCreated'>;
  live: Pick<LiveEvents, 'published'>;
}

const API_RUN: RunRef = { id: null, source: null, kind: 'api' };

export function createProductRecorder(deps: ProductRecorderDeps): ProductRecorder {
  const { db, products, tracker, deliveries } = deps;

  /** History, change detection and events of what a write saw, then their deliveries: all in `tx`. */
  const record = async (sightings: readonly ProductSighting[], run: RunRef, tx: Queryable, complete = false): Promise<StoredEvent[]> => {
    // Every row lock first (observations, then the missed products), the events last.
    const pending = await tracker.observe(sightings, run, tx);
    if (complete) for (const event of await tracker.missed(run, tx)) pending.push(event);
    if (pending.length === 0) return [];
    const events = await tracker.append(pending, tx);
    await deps.alerts.evaluate(events, tx);
    await deliveries.fanOut(events, tx);
    return events;
  };

  const createAlone = createProductAlone({ products, deliveries, alerts: deps.alerts });

  return {
    async recordScraped(items, run, tx, options = {}) {
      // Tags with the rows, in the upsert's statement: a rule scoped to a tag judges this run's changes
      // with the tags the run gives.
      const tagging = await deps.tags.runTagging('product', run, tx);
      const stored = await products.upsertScraped(items, { runId: run.id, source: run.source }, tx, tagging);
      const events = await record(stored.sightings, run, tx, options.complete === true);
      return { products: stored.products, created: stored.created, updated: stored.updated, events };
    },

    finishRun: (run, tx) => record([], run, tx, true),

    async create(input) {
      const { product, events } =
        (await createAlone(input, db)) ??
        (await db.transaction(async (tx) => {
          const created = await products.create(input, tx);
          return { product: created, events: await record([{ product_id: created.id, source_url: created.source_url, before: null, seen: stateOf(created) }], API_RUN, tx) };
        }));
      deps.live.published(events);
      return product;
    },

    async update(id, patch) {
      if (!products.changesState(patch)) return products.update(id, patch);
      const { product, events } = await db.transaction(async (tx) => {
        const before = await products.lockState(id, tx);
        const updated = await products.update(id, patch, tx);
        if (before === undefined || before === null || updated === undefined) return { product: updated, events: [] };
        return { product: updated, events: await record([{ product_id: id, source_url: updated.source_url, before, seen: stateOf(updated) }], API_RUN, tx) };
      });
      deps.live.published(events);
      return product;
    },
  };
}
