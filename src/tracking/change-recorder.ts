// What every product write does besides writing products: history, events, their webhook deliveries, and word to live streams.
import { EventEmitter } from 'node:events';
import type { Queryable } from '../db/database.js';
import type { JobQueue } from '../jobs/job-queue.js';
import type { PendingEvent, RunRef, Sighting, StoredEvent, Tracker } from './tracking-store.js';
import type { Webhook, WebhookStore } from './webhook-store.js';

export interface ChangeRecorder {
  /**
   * Observations and events of one write, and a queued delivery per listening webhook: all inside
   * `tx`. With `complete` the run ended successfully with this write, and the products of its
   * source it did not see have missed a run.
   */
  record(sightings: readonly Sighting[], run: RunRef, tx: Queryable, options?: { complete?: boolean }): Promise<StoredEvent[]>;
  /** A successful run of a source ended: the products it keeps missing are gone (inside `tx`). */
  finishRun(run: RunRef, tx: Queryable): Promise<StoredEvent[]>;
  /** After commit: live event streams of this process look at once. */
  published(events: readonly StoredEvent[]): void;
  onPublished(listener: () => void): () => void;
}

export function createChangeRecorder(deps: { tracker: Tracker; webhooks: WebhookStore; queue: Pick<JobQueue, 'enqueueDeliveries'> }): ChangeRecorder {
  const emitter = new EventEmitter();
  emitter.setMaxListeners(0);

  /**
   * Appends the events and queues a delivery per listening webhook. The webhooks are asked first, so
   * that the commit-order lock `append` takes is held only by its own statement and the commit.
   */
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
