// Tracking of one process: history and events, webhooks, the recorder product writes go through, the webhook sender.
import type { Config } from '../config.js';
import type { Database } from '../db/database.js';
import type { JobQueue } from '../jobs/job-queue.js';
import { createChangeRecorder, type ChangeRecorder } from './change-recorder.js';
import { createTracker, type Tracker } from './tracking-store.js';
import { createWebhookSender, type WebhookSender } from './webhook-sender.js';
import { createWebhookStore, type WebhookStore } from './webhook-store.js';

export interface Tracking {
  tracker: Tracker;
  webhooks: WebhookStore;
  recorder: ChangeRecorder;
  sender: WebhookSender;
}

export function createTracking(
  db: Database,
  queue: Pick<JobQueue, 'enqueueDeliveries'>,
  config: Pick<Config, 'tracking' | 'scrapeAllowPrivateNetworks'> & { scrape: Pick<Config['scrape'], 'userAgent'> },
  logger?: { warn(details: object, message: string): void },
): Tracking {
  const tracker = createTracker(db, { goneAfterRuns: config.tracking.goneAfterRuns });
  const webhooks = createWebhookStore(db);
  const recorder = createChangeRecorder({ tracker, webhooks, queue });
  const sender = createWebhookSender({
    db,
    webhooks,
    queue,
    retryDelaysMs: config.tracking.webhookRetryDelaysMs,
    timeoutMs: config.tracking.webhookTimeoutMs,
    allowPrivateNetworks: config.scrapeAllowPrivateNetworks,
    userAgent: config.scrape.userAgent,
    ...(logger ? { logger } : {}),
  });
  return { tracker, webhooks, recorder, sender };
}
