// The tracking of one process: history and events, article revisions, webhooks and their deliveries (queue declared), word to live streams; and, where this process works, the delivery handlers.
import type { TrackingSettings } from '../config/config.js';
import type { Database } from '../db/queryable.js';
import type { Queue } from '../queue/queue.js';
import { createArticleRevisions, type ArticleRevisions } from './article-revisions.js';
import { createLiveEvents, type LiveEvents } from './live-events.js';
import { createLiveFeed, type LiveFeed } from './live-feed.js';
import { createTracker, type Tracker } from './tracking-store.js';
import { createWebhookDeliveries, DELIVERY_POLICY, DELIVERY_QUEUE, type QueuedDelivery, type WebhookDeliveries } from './webhook-deliveries.js';
import { createWebhookSender, type WebhookSender } from './webhook-sender.js';
import { createWebhookStore, type WebhookStore } from './webhook-store.js';

export interface TrackingSystemDeps {
  db: Database;
  queue: Queue;
  settings: TrackingSettings & {
    /** Webhook targets pass the scrape URLs' address guard (SCRAPE_ALLOW_PRIVATE_NETWORKS). */
    allowPrivateNetworks: boolean;
    userAgent: string;
    /** Delivery handlers one working process runs at once. */
    concurrency: number;
  };
  logger?: { warn(details: object, message: string): void };
}

export interface TrackingSystem {
  tracker: Tracker;
  revisions: ArticleRevisions;
  webhooks: WebhookStore;
  deliveries: WebhookDeliveries;
  live: LiveEvents;
  feed: LiveFeed;
  sender: WebhookSender;
  /** Handles webhook deliveries in this process. */
  work(): Promise<void>;
  close(): Promise<void>;
}

/** Declares the webhook delivery queue; call before the queue starts. */
export function createTrackingSystem(deps: TrackingSystemDeps): TrackingSystem {
  const { db, queue, settings } = deps;
  const tracker = createTracker(db, { goneAfterRuns: settings.goneAfterRuns });
  const webhooks = createWebhookStore(db, { total: settings.webhooksMax, perUrl: settings.webhooksPerUrl });
  queue.define(DELIVERY_QUEUE, DELIVERY_POLICY);
  const deliveries = createWebhookDeliveries({ webhooks, queue });
  const live = createLiveEvents();
  const sender = createWebhookSender({
    db,
    webhooks,
    deliveries,
    retryDelaysMs: settings.webhookRetryDelaysMs,
    timeoutMs: settings.webhookTimeoutMs,
    allowPrivateNetworks: settings.allowPrivateNetworks,
    userAgent: settings.userAgent,
    ...(deps.logger ? { logger: deps.logger } : {}),
  });
  return {
    tracker,
    revisions: createArticleRevisions(db),
    webhooks,
    deliveries,
    live,
    feed: createLiveFeed(tracker, live),
    sender,
    async work() {
      await queue.work<QueuedDelivery>(DELIVERY_QUEUE, { concurrency: settings.concurrency }, (delivery) => sender.deliver(delivery));
    },
    close: () => sender.close(),
  };
}
