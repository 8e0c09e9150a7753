// The alerts of one process: stores, evaluator, services, the delivery and digest queues declared, and (where this process works) their handlers and the digest calendar.
import type { Database } from '../db/queryable.js';
import { assertAllowedUrl, createGuardedAgent, createGuardedLookup } from '../egress/address-guard.js';
import type { Queue } from '../queue/queue.js';
import type { WebhookSender } from '../tracking/webhook-sender.js';
import { createAlertDelivery } from './delivery/alert-delivery.js';
import { createDigestSender, type DigestSender } from './delivery/alert-digests.js';
import { createAlertEvaluator, type AlertEvaluator } from './rules/alert-evaluator.js';
import { ALERT_POLICIES, ALERT_QUEUES, DIGEST_SCHEDULE, type DeliveryMessage, type DigestMessage } from './delivery/alert-queues.js';
import { createChannelService, type ChannelService } from './channels/channel-service.js';
import { createChannelStore } from './channels/channel-store.js';
import { createDeliveryStore } from './delivery/delivery-store.js';
import { createFiringStore } from './rules/firing-store.js';
import type { NotifierDeps } from './channels/notifier-factory.js';
import { createRuleService, type RuleService } from './rules/rule-service.js';
import { createRuleStore, type RuleStore } from './rules/rule-store.js';

export interface AlertSettings {
  /** Channel targets pass the scrape URLs' address guard (SCRAPE_ALLOW_PRIVATE_NETWORKS). */
  allowPrivateNetworks: boolean;
  retryDelaysMs: readonly number[];
  timeoutMs: number;
  /** Alert rules in all (ALERT_RULES_MAX). */
  rulesMax: number;
  /** Channels to one destination (ALERT_CHANNELS_PER_TARGET). */
  channelsPerTarget: number;
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
  const { db, queue, settings } = deps;
  for (const [name, policy] of Object.entries(ALERT_POLICIES)) {
    // A delivery is taken back from a worker only well after its send must have ended (ALERT_TIMEOUT_MS):
    // never handed out again while the first attempt still runs.
    const expireInSeconds = name === ALERT_QUEUES.delivery ? Math.max(policy.expireInSeconds, Math.ceil(settings.timeoutMs / 1000) + 60) : policy.expireInSeconds;
    queue.define(name, { ...policy, expireInSeconds });
  }
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
    ruleService: createRuleService({ db, rules, channels, firings, rulesMax: settings.rulesMax }),
    channelService: createChannelService({
      ...sender,
      db,
      channels,
      rules,
      webhookExists: deps.webhookExists,
      allowPrivateNetworks: settings.allowPrivateNetworks,
      dashboardUrl: settings.dashboardUrl,
      perTarget: settings.channelsPerTarget,
    }),
    digests,
    async work() {
      // A destination server that hangs holds at most half the handlers (across every process); the
      // other servers' deliveries go on beside it.
      const perGroup = Math.max(1, Math.floor(settings.concurrency / 2));
      await queue.work<DeliveryMessage>(ALERT_QUEUES.delivery, { concurrency: settings.concurrency, perGroup }, (message) => delivery.deliver(message));
      await queue.work<DigestMessage>(ALERT_QUEUES.digest, { concurrency: 1 }, async ({ until }) => {
        const asked = until === undefined ? Number.NaN : Date.parse(until);
        await digests.sendDue(new Date(Number.isNaN(asked) ? Date.now() : Math.max(Date.now(), asked)));
      });
      // The queue's calendar fires it once per minute across every process; putting it there again is harmless.
      await queue.schedule(ALERT_QUEUES.digest, DIGEST_SCHEDULE.key, DIGEST_SCHEDULE.cron, DIGEST_SCHEDULE.timezone, {});
    },
    close: () => agent.close(),
  };
}
