// Webhook deliveries as queued messages: which webhooks an event goes to (fan-out), and the queue they wait in.
import type { Queryable } from '../db/queryable.js';
import type { Queue, QueuePolicy } from '../queue/queue.js';
import type { StoredEvent } from './tracking-store.js';
import { listeningTo, type Webhook, type WebhookStore } from './webhook-store.js';

/** One attempt to deliver one event to one webhook. */
export interface QueuedDelivery {
  webhook_id: string;
  event_id: number;
  attempt: number;
}

export const DELIVERY_QUEUE = 'webhook-delivery';
/** A webhook follows its own schedule of attempts (each one recorded), so the queue does not retry. */
export const DELIVERY_POLICY: QueuePolicy = { retryLimit: 0, expireInSeconds: 120 };

export interface WebhookDeliveries {
  /** In the events' own transaction: a delivery for each target URL that an enabled webhook wants each event at. */
  fanOut(events: readonly StoredEvent[], tx: Queryable): Promise<void>;
  /** An SQL condition true when no enabled webhook wants any of `types` (an SQL text[] expression). */
  noneListening(types: string): string;
  /** The first attempt of a delivery asked for again (a redelivery). */
  redeliver(webhookId: string, eventId: number): Promise<void>;
  /** The next attempt after a failed one, after `delayMs`. */
  retry(delivery: QueuedDelivery, delayMs: number): Promise<void>;
}

export function createWebhookDeliveries(deps: { webhooks: Pick<WebhookStore, 'listening'>; queue: Pick<Queue, 'enqueue'> }): WebhookDeliveries {
  const enqueue = (deliveries: readonly QueuedDelivery[], options: { tx?: Queryable; delayMs?: number } = {}) =>
    deps.queue.enqueue(
      DELIVERY_QUEUE,
      deliveries.map((data) => ({ data })),
      options,
    );
  return {
    async fanOut(events, tx) {
      if (events.length === 0) return;
      const listening = await deps.webhooks.listening([...new Set(events.map((e) => e.type))], tx);
      // One delivery per target URL and event, by the oldest webhook that wants it: subscribing one
      // URL many times does not multiply what it receives.
      const sent = new Set<string>();
      const deliveries = listening.flatMap((webhook) =>
        events
          .filter((event) => wants(webhook, event))
          .filter((event) => {
            const key = JSON.stringify([webhook.target, event.id]);
            if (sent.has(key)) return false;
            sent.add(key);
            return true;
          })
          .map((event) => ({ webhook_id: webhook.id, event_id: event.id, attempt: 1 })),
      );
      await enqueue(deliveries, { tx });
    },
    noneListening: (types) => `NOT EXISTS (SELECT 1 FROM webhooks WHERE ${listeningTo(types)})`,
    redeliver: (webhookId, eventId) => enqueue([{ webhook_id: webhookId, event_id: eventId, attempt: 1 }]),
    retry: (delivery, delayMs) => enqueue([{ ...delivery, attempt: delivery.attempt + 1 }], { delayMs }),
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
