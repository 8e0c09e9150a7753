// The delivery job: one attempt at one alert (or digest) to one channel; the outcome recorded, the next attempt queued, or the channel disabled.
import type { Queue } from '../../queue/queue.js';
import type { WebhookMessage, WebhookMessageOutcome } from '../../tracking/webhook-sender.js';
import { ALERT_QUEUES, type DeliveryMessage } from './alert-queues.js';
import type { ChannelConfig } from '../channels/channel-schema.js';
import type { ChannelStore } from '../channels/channel-store.js';
import { channelTarget } from '../channels/channel-target.js';
import { FINAL_DELIVERY, type DeliveryStore } from './delivery-store.js';
import type { Firing } from '../rules/firing.js';
import type { FiringStore } from '../rules/firing-store.js';
import { renderDigest, renderFiring, type RenderedMessage } from '../channels/message-render.js';
import { createNotifier, isDirect, type NotifierDeps } from '../channels/notifier-factory.js';
import type { NotifyOutcome } from '../channels/notifier.js';
import { ALERT_FIRED, alertWebhookData } from '../channels/webhook-channel.js';
import { dashboardLinkFor } from '../channels/message-render.js';

/** A message ready for any channel: rendered for the direct ones, as webhook data for a webhook channel. */
export interface Outgoing {
  message: RenderedMessage;
  webhook: WebhookMessage;
}

export interface AlertSenderDeps {
  notifiers: NotifierDeps;
  /** The signed-webhook sender, for channels of kind webhook. */
  webhooks: { sendMessage(webhookId: string, message: WebhookMessage): Promise<WebhookMessageOutcome> };
}

/** Sends one message through one channel's config, never throwing: the Notifier port's outcome for every kind. */
export async function sendThrough(config: ChannelConfig, outgoing: Outgoing, deps: AlertSenderDeps): Promise<NotifyOutcome> {
  if (isDirect(config)) return createNotifier(config, deps.notifiers).send(outgoing.message);
  const sent = await deps.webhooks.sendMessage(config.webhook_id, outgoing.webhook);
  if (sent.ok) return { ok: true, ...(sent.status === null ? {} : { status: sent.status }), retryable: false };
  const status = sent.status;
  return {
    ok: false,
    ...(status === null ? {} : { status }),
    error: sent.error ?? 'the webhook failed',
    retryable: !sent.unavailable && (status === null || status === 408 || status === 429 || status >= 500),
    ...(sent.retry_after_ms === undefined ? {} : { retry_after_ms: sent.retry_after_ms }),
  };
}

/** A firing as one message. */
export function firingMessage(firing: Firing, dashboardUrl: string): Outgoing {
  return {
    message: renderFiring(firing, { dashboardUrl }),
    webhook: { id: `alert_${firing.dedupe_key}`, type: ALERT_FIRED, data: alertWebhookData(firing, dashboardLinkFor(dashboardUrl, firing.product.id)) },
  };
}

/** A digest's firings as one message. */
export function digestMessage(digestId: string, label: string, firings: readonly Firing[], dashboardUrl: string): Outgoing {
  return {
    message: renderDigest(firings, label, { dashboardUrl }),
    webhook: {
      id: `digest_${digestId}`,
      type: 'alert.digest',
      data: { digest_id: digestId, period: label, alerts: firings.map((f) => alertWebhookData(f, dashboardLinkFor(dashboardUrl, f.product.id))) },
    },
  };
}

export interface AlertDeliveryDeps extends AlertSenderDeps {
  deliveries: DeliveryStore;
  channels: Pick<ChannelStore, 'get' | 'disable'>;
  firings: Pick<FiringStore, 'firing' | 'digestFirings'>;
  queue: Pick<Queue, 'enqueue'>;
  /** Delays before each retry after the first attempt (ALERT_RETRY_DELAYS_MS). */
  retryDelaysMs: readonly number[];
  /** Where the dashboard is served (PUBLIC_URL): messages link to it. */
  dashboardUrl: string;
  logger?: { warn(details: object, message: string): void };
}

/** The longest a service's own Retry-After is honoured; past it the schedule's delay applies. */
const MAX_RETRY_AFTER_MS = 86_400_000;

export function createAlertDelivery(deps: AlertDeliveryDeps): { deliver(message: DeliveryMessage): Promise<void> } {
  const outgoingOf = async (delivery: { firing_id: number | null; digest_id: string | null }): Promise<Outgoing | undefined> => {
    if (delivery.firing_id !== null) {
      const firing = await deps.firings.firing(delivery.firing_id);
      return firing === undefined ? undefined : firingMessage(firing, deps.dashboardUrl);
    }
    const digestId = delivery.digest_id as string;
    const [label, firings] = await Promise.all([deps.deliveries.digestLabel(digestId), deps.firings.digestFirings(digestId)]);
    return label === undefined || firings.length === 0 ? undefined : digestMessage(digestId, label, firings, deps.dashboardUrl);
  };

  const giveUp = async (id: string, error: string): Promise<void> => {
    await deps.deliveries.record(id, { status: 'skipped', response_status: null, error, retry_in_ms: null, attempted: false });
  };

  return {
    async deliver({ delivery_id: id }) {
      const delivery = await deps.deliveries.get(id);
      // Already settled: a message the queue handed out again after its worker died having finished it.
      if (delivery === undefined || FINAL_DELIVERY.has(delivery.status)) return;
      const channel = delivery.channel_id === null ? undefined : await deps.channels.get(delivery.channel_id);
      if (channel === undefined) return giveUp(id, 'The channel was deleted.');
      if (!channel.enabled) return giveUp(id, `The channel is disabled${channel.disabled_reason === null ? '' : `: ${channel.disabled_reason}`}`);
      const outgoing = await outgoingOf(delivery);
      if (outgoing === undefined) return giveUp(id, 'The alert was deleted.');

      const outcome = await sendThrough(channel.config, outgoing, deps);
      const attempt = delivery.attempts + 1;
      if (outcome.ok) {
        await deps.deliveries.record(id, { status: 'succeeded', response_status: outcome.status ?? null, error: null, retry_in_ms: null, attempted: true });
        return;
      }
      const scheduled = outcome.retryable ? deps.retryDelaysMs[attempt - 1] : undefined;
      const delay = scheduled === undefined ? undefined : Math.max(scheduled, Math.min(outcome.retry_after_ms ?? 0, MAX_RETRY_AFTER_MS));
      const error = outcome.error ?? 'the channel refused the message';
      const next = await deps.deliveries.record(id, {
        status: delay === undefined ? 'failed' : 'retrying',
        response_status: outcome.status ?? null,
        error,
        retry_in_ms: delay ?? null,
        attempted: true,
      });
      if (next !== null) {
        // Queued for the time the record shows, which is `delay` (a longer Retry-After included) after the attempt.
        await deps.queue.enqueue<DeliveryMessage>(ALERT_QUEUES.delivery, [{ data: { delivery_id: id }, group: channelTarget(channel.config).host }], { at: new Date(next) });
        return;
      }
      // Retries ran out, or the failure will not pass by itself (a refused address, a 4xx, a login that fails).
      const reason = outcome.retryable ? `Delivery failed ${attempt} times in a row; the last attempt: ${error}` : `Delivery failed and will not succeed by trying again: ${error}`;
      if (await deps.channels.disable(channel.id, reason)) deps.logger?.warn({ channel: channel.id, name: channel.name, kind: channel.kind }, `alert channel disabled: ${reason}`);
    },
  };
}
