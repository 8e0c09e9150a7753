// Delivers one event to one webhook (Standard Webhooks: signed with the library), records the attempt, schedules the next or gives up.
import { randomUUID } from 'node:crypto';
import { Webhook as Signer } from 'standardwebhooks';
import { request, type Dispatcher } from 'undici';
import type { Database } from '../db/database.js';
import { basicAuthorization, redactUrlsIn, withoutCredentials } from '../redact.js';
import type { QueuedDelivery, WebhookDeliveries } from './webhook-deliveries.js';
import { assertAllowedUrl, createGuardedAgent } from '../egress/address-guard.js';
import { retryAfter } from '../egress/retry-after.js';
import type { StoredEvent } from './tracking-store.js';
import type { WebhookStore } from './webhook-store.js';

export interface WebhookSenderDeps {
  db: Database;
  webhooks: WebhookStore;
  deliveries: Pick<WebhookDeliveries, 'retry'>;
  /** Delays before each retry after the first, immediate attempt (config: WEBHOOK_RETRY_DELAYS_MS). */
  retryDelaysMs: readonly number[];
  /** Webhook targets pass the same address guard as scrape URLs. */
  allowPrivateNetworks: boolean;
  userAgent: string;
  timeoutMs?: number;
  logger?: { warn(details: object, message: string): void };
}

/** A signed message of another kind than a change event (an alert), sent once: its outcome, retries being the caller's. */
export interface WebhookMessage {
  /** The `webhook-id`: the same for every attempt of one message, so receivers deduplicate on it. */
  id: string;
  type: string;
  data: Record<string, unknown>;
}

export interface WebhookMessageOutcome {
  ok: boolean;
  status: number | null;
  error: string | null;
  /** The webhook is gone or disabled: trying again will not help. */
  unavailable: boolean;
  /** How long the receiver asked to be left alone (its Retry-After), in ms. */
  retry_after_ms?: number;
}

export interface WebhookSender {
  deliver(delivery: QueuedDelivery): Promise<void>;
  /** One attempt at `message` to a registered webhook, signed with its secret, through the same guard. */
  sendMessage(webhookId: string, message: WebhookMessage): Promise<WebhookMessageOutcome>;
  close(): Promise<void>;
}

interface EventWithProduct extends StoredEvent {
  product: { id: number; title: string; price: number | null; currency: string | null; availability: string | null; source_url: string | null } | null;
  article: { id: number; title: string; url: string; published_at: string | null; site_name: string | null; word_count: number | null } | null;
}

export function createWebhookSender(deps: WebhookSenderDeps): WebhookSender {
  const agent: Dispatcher = createGuardedAgent({ allowPrivate: deps.allowPrivateNetworks, connectTimeoutMs: deps.timeoutMs ?? 10_000 });
  const timeoutMs = deps.timeoutMs ?? 10_000;

  const loadEvent = async (id: number): Promise<EventWithProduct | undefined> => {
    const [row] = await deps.db.query<EventWithProduct>(
      `SELECT e.id::float8 AS id, e.type, e.product_id, e.article_id, e.source, e.run_id, e.data,
              to_char(e.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS created_at,
              CASE WHEN p.id IS NULL THEN NULL ELSE json_build_object('id', p.id, 'title', p.title, 'price', p.price::float8, 'currency', p.currency,
                     'availability', p.availability, 'source_url', p.source_url) END AS product,
              CASE WHEN a.id IS NULL THEN NULL ELSE json_build_object('id', a.id, 'title', a.title, 'url', a.url, 'published_at', a.published_at,
                     'site_name', a.site_name, 'word_count', a.word_count) END AS article
         FROM events e LEFT JOIN products p ON p.id = e.product_id LEFT JOIN articles a ON a.id = e.article_id WHERE e.id = $1`,
      [id],
    );
    return row;
  };

  /** One POST; the answer's status, or why there was none. Never throws. */
  const post = async (url: string, body: string, headers: Record<string, string>): Promise<{ status: number | null; error: string | null; retryAfterMs?: number }> => {
    try {
      const target = assertAllowedUrl(url, deps.allowPrivateNetworks);
      // A user and password in the URL are sent as HTTP basic auth, as a browser would.
      const authorization = basicAuthorization(target);
      const response = await request(withoutCredentials(target), {
        method: 'POST',
        body,
        headers: authorization === undefined ? headers : { ...headers, authorization },
        dispatcher: agent,
        signal: AbortSignal.timeout(timeoutMs),
        headersTimeout: timeoutMs,
        bodyTimeout: timeoutMs,
      });
      await response.body.dump({ limit: 64 * 1024 }).catch(() => undefined);
      if (response.statusCode >= 200 && response.statusCode < 300) return { status: response.statusCode, error: null };
      const retryAfterMs = retryAfter(response.headers['retry-after'], Date.now());
      return { status: response.statusCode, error: `the endpoint answered HTTP ${response.statusCode}`, ...(retryAfterMs === undefined ? {} : { retryAfterMs }) };
    } catch (error) {
      const name = (error as { name?: string }).name;
      return { status: null, error: name === 'TimeoutError' || name === 'AbortError' ? `no answer within ${timeoutMs} ms` : redactUrlsIn((error as Error).message) };
    }
  };

  /** The Standard Webhooks headers of one attempt at `payload`. */
  const signed = (secret: string, messageId: string, payload: string): Record<string, string> => {
    const sentAt = new Date();
    return {
      'content-type': 'application/json',
      'user-agent': deps.userAgent,
      'webhook-id': messageId,
      'webhook-timestamp': String(Math.floor(sentAt.getTime() / 1000)),
      'webhook-signature': new Signer(secret).sign(messageId, sentAt, payload),
    };
  };

  return {
    async sendMessage(webhookId, message) {
      const webhook = await deps.webhooks.get(webhookId);
      if (webhook === undefined) return { ok: false, status: null, error: `Webhook ${webhookId} does not exist any more.`, unavailable: true };
      if (!webhook.enabled) return { ok: false, status: null, error: `Webhook ${webhookId} is disabled.`, unavailable: true };
      const payload = JSON.stringify({ type: message.type, timestamp: new Date().toISOString(), data: message.data });
      const outcome = await post((await deps.webhooks.deliveryUrl(webhook.id)) ?? webhook.url, payload, signed(webhook.secret, message.id, payload));
      return {
        ok: outcome.error === null,
        status: outcome.status,
        error: outcome.error,
        unavailable: false,
        ...(outcome.retryAfterMs === undefined ? {} : { retry_after_ms: outcome.retryAfterMs }),
      };
    },

    async deliver(delivery) {
      const webhook = await deps.webhooks.get(delivery.webhook_id);
      if (webhook === undefined || !webhook.enabled) return;
      const event = await loadEvent(delivery.event_id);
      if (event === undefined) return;
      const { product, article, data, ...meta } = event;
      // A product event names its product, an article event its article: each payload says what it is about.
      const aboutArticle = event.type.startsWith('article.');
      const subject = aboutArticle ? { article_id: meta.article_id } : { product_id: meta.product_id };
      const payload = JSON.stringify({
        type: event.type,
        timestamp: event.created_at,
        data: { event_id: meta.id, ...subject, source: meta.source, run_id: meta.run_id, ...data, ...(aboutArticle ? { article } : { product }) },
      });
      // The id stays the same for every attempt and redelivery of one event: receivers deduplicate on it.
      const headers = signed(webhook.secret, `evt_${event.id}`, payload);
      const started = performance.now();
      const outcome = await post((await deps.webhooks.deliveryUrl(webhook.id)) ?? webhook.url, payload, headers);
      const durationMs = Math.round((performance.now() - started) * 10) / 10;
      const failed = outcome.error !== null;
      const nextDelay = failed ? deps.retryDelaysMs[delivery.attempt - 1] : undefined;
      await deps.webhooks.recordDelivery({
        id: randomUUID(),
        webhook_id: webhook.id,
        event_id: event.id,
        attempt: delivery.attempt,
        status: failed ? 'failed' : 'succeeded',
        response_status: outcome.status,
        error: outcome.error,
        duration_ms: durationMs,
        next_attempt_at: nextDelay === undefined ? null : new Date(Date.now() + nextDelay).toISOString(),
      });
      if (!failed) return;
      if (nextDelay !== undefined) {
        await deps.deliveries.retry(delivery, nextDelay);
        return;
      }
      const reason = `Event ${event.id} (${event.type}) could not be delivered in ${delivery.attempt} attempts; the last one: ${outcome.error}.`;
      await deps.webhooks.disable(webhook.id, reason);
      deps.logger?.warn({ webhook: webhook.id, url: webhook.url }, `webhook disabled: ${reason}`);
    },
    async close() {
      await agent.close();
    },
  };
}
