// The alerts of one process: stores, evaluator, services, the delivery and digest queues declared, and (where this process works) their handlers and the digest calendar.
import type { Database } from '../db/queryable.js';
import { assertAllowedUrl, createGuardedAgent, createGuardedLookup } from '../egress/address-guard.js';
import type { Queue } from '../queue/queue.js';
import type { WebhookSender } from '../tracking/webhook-sender.js';
import { createAlertDelivery } from './alert-delivery.js';
import { createDigestSender, type DigestSender } from './alert-digests.js';
import { createAlertEvaluator, type AlertEvaluator } from './alert-evaluator.js';
import { ALERT_POLICIES, ALERT_QUEUES, DIGEST_SCHEDULE, type DeliveryMessage } from './alert-queues.js';
import { createChannelService, type ChannelService } from './channel-service.js';
import { createChannelStore } from './channel-store.js';
import { createDeliveryStore } from './delivery-store.js';
import { createFiringStore } from './firing-store.js';
import type { NotifierDeps } from './notifier-factory.js';
import { createRuleService, type RuleService } from './rule-service.js';
import { createRuleStore, type RuleStore } from './rule-store.js';

export interface AlertSettings {
  /** Channel targets pass the scrape URLs' address guard (SCRAPE_ALLOW_PRIVATE_NETWORKS). */
  allowPrivateNetworks: boolean;
  retryDelaysMs: readonly number[];
  timeoutMs: number;
  userAgent: string;
  /** PUBLIC_URL: where messages link to. */
  dashboardUrl: string;
  /** Delivery handlers one working process runs at once. */
  concurrency: number;
}

export interface AlertSystemDeps {
  db: Database;
  queue: Queue;
  webhooks: Pick<WebhookSender, 'sendMessage'>;
  webhookExists(id: string): Promise<boolean>;
  settings: AlertSettings;
  logger?: { warn(details: object, message: string): void };
}

export interface AlertSystem {
  rules: RuleStore;
  evaluator: AlertEvaluator;
  ruleService: RuleService;
  channelService: ChannelService;
  digests: DigestSender;
  /** Handles deliveries and the digest calendar in this process. */
  work(): Promise<void>;
  close(): Promise<void>;
}

/** Declares the alert queues; call before the queue starts. */
export function createAlertSystem(deps: AlertSystemDeps): AlertSystem {
  for (const [name, policy] of Object.entries(ALERT_POLICIES)) deps.queue.define(name, policy);
  const { db, queue, settings } = deps;
  const rules = createRuleStore(db);
  const channels = createChannelStore(db);
  const firings = createFiringStore(db);
  const deliveries = createDeliveryStore(db);
  // Every message leaves through the address guard: HTTP by a dispatcher that checks each connection
  // (rebinding-safe), e-mail by resolving the SMTP host through the same rule.
  const agent = createGuardedAgent({ allowPrivate: settings.allowPrivateNetworks, connectTimeoutMs: Math.min(settings.timeoutMs, 10_000) });
  const notifiers: NotifierDeps = {
    http: {
      dispatcher: agent,
      guard: async (url) => assertAllowedUrl(url, settings.allowPrivateNetworks),
      timeoutMs: settings.timeoutMs,
      userAgent: settings.userAgent,
    },
    email: { lookup: createGuardedLookup({ allowPrivate: settings.allowPrivateNetworks }), timeoutMs: settings.timeoutMs },
  };
  const sender = { notifiers, webhooks: deps.webhooks };
  const delivery = createAlertDelivery({
    ...sender,
    deliveries,
    channels,
    firings,
    queue,
    retryDelaysMs: settings.retryDelaysMs,
    dashboardUrl: settings.dashboardUrl,
    ...(deps.logger ? { logger: deps.logger } : {}),
  });
  const digests = createDigestSender({ db, firings, deliveries, channels, queue });

  return {
    rules,
    evaluator: createAlertEvaluator({ rules, firings, channels, deliveries, queue }),
    ruleService: createRuleService({ db, rules, channels, firings }),
    channelService: createChannelService({
      ...sender,
      db,
      channels,
      rules,
      webhookExists: deps.webhookExists,
      allowPrivateNetworks: settings.allowPrivateNetworks,
      dashboardUrl: settings.dashboardUrl,
    }),
    digests,
    async work() {
      await queue.work<DeliveryMessage>(ALERT_QUEUES.delivery, { concurrency: settings.concurrency }, (message) => delivery.deliver(message));
      await queue.work(ALERT_QUEUES.digest, { concurrency: 1 }, async () => {
        await digests.sendDue(new Date());
      });
      // The queue's calendar fires it once per minute across every process; putting it there again is harmless.
      await queue.schedule(ALERT_QUEUES.digest, DIGEST_SCHEDULE.key, DIGEST_SCHEDULE.cron, DIGEST_SCHEDULE.timezone, {});
    },
    close: () => agent.close(),
  };
}
