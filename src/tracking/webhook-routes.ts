// /webhooks: subscriptions to change events, their delivery record, and redelivery.
import { randomBytes, randomUUID } from 'node:crypto';
import { Type } from 'typebox';
import type { App } from '../http/base-app.js';
import { pagedAnswer } from '../http/paging.js';
import { problemResponses } from '../http/schemas.js';
import { HttpProblem, NotFound } from '../problems.js';
import { assertPublicUrl } from '../egress/address-guard.js';
import { canonicalUrl } from '../url-identity/url-key.js';
import { Delivery, DeliveryPath, PageQuery, Redelivery, Webhook, WebhookCreate, WebhookDeleted, WebhookId, WebhookPatch, WebhookWithSecret } from './tracking-schema.js';
import type { WebhookDeliveries } from './webhook-deliveries.js';
import type { WebhookFilter, WebhookStore } from './webhook-store.js';

export interface WebhookRoutesDeps {
  webhooks: WebhookStore;
  deliveries: Pick<WebhookDeliveries, 'redeliver'>;
  /** Webhook targets pass the scrape URLs' address guard (SCRAPE_ALLOW_PRIVATE_NETWORKS). */
  allowPrivateNetworks: boolean;
}

class WebhookDisabled extends HttpProblem {
  constructor(id: string) {
    super(409, 'webhook-disabled', 'Conflict', `Webhook ${id} is disabled; enable it (PATCH {"enabled": true}) before redelivering.`);
  }
}

/** A filter as events are matched against it: the source in the canonical form runs name it in. */
function normalised(filter: WebhookFilter | null | undefined): WebhookFilter | null | undefined {
  if (filter?.source === undefined) return filter;
  return { ...filter, source: canonicalUrl(filter.source) ?? filter.source };
}

const notFound = (id: string) => new NotFound(`Webhook ${id} does not exist.`);

/** A Standard Webhooks secret: 32 random bytes, base64, with the `whsec_` prefix. */
const newSecret = () => `whsec_${randomBytes(32).toString('base64')}`;

export function webhookRoutes(app: App, deps: WebhookRoutesDeps): void {
  const { webhooks } = deps;
  const guard = (url: string) => assertPublicUrl(url, deps.allowPrivateNetworks);

  app.post(
    '/webhooks',
    {
      schema: {
        tags: ['webhooks'],
        summary: 'Subscribe a URL to change events',
        description:
          'Each matching event is POSTed as JSON following the Standard Webhooks specification: `webhook-id` (evt_<event id>, ' +
          'the same for every attempt, to deduplicate on), `webhook-timestamp` and `webhook-signature` (v1, HMAC-SHA256 with the ' +
          'secret). A failed delivery is retried (WEBHOOK_RETRY_DELAYS_MS, about a day by default); after the last attempt the ' +
          'webhook is disabled with the reason. The secret is generated when not given and shown only in this answer. The URL ' +
          'passes the same address guard as scrape targets.',
        body: WebhookCreate,
        response: { 201: WebhookWithSecret },
      },
    },
    async (request, reply) => {
      const { url, events, secret } = request.body;
      const filter = normalised(request.body.filter);
      await guard(url);
      const created = await webhooks.create(randomUUID(), { url, events, secret: secret ?? newSecret(), filter: filter ?? null });
      const stored = (await webhooks.get(created.id))!;
      return reply.code(201).header('location', `/webhooks/${created.id}`).send(stored);
    },
  );

  app.get(
    '/webhooks',
    {
      schema: {
        tags: ['webhooks'],
        summary: 'List webhooks, newest first',
        querystring: PageQuery,
        response: { 200: Type.Array(Webhook) },
      },
    },
    async (request, reply) => {
      return pagedAnswer(reply, '/webhooks', request, await webhooks.list(request.query));
    },
  );

  app.get(
    '/webhooks/:id',
    {
      schema: { tags: ['webhooks'], summary: 'One webhook (without its secret)', params: WebhookId, response: { 200: Webhook } },
    },
    async (request) => {
      const webhook = await webhooks.get(request.params.id);
      if (webhook === undefined) throw notFound(request.params.id);
      const { secret: _secret, ...shown } = webhook;
      return shown;
    },
  );

  app.patch(
    '/webhooks/:id',
    {
      schema: {
        tags: ['webhooks'],
        summary: 'Change a webhook; `enabled: true` re-enables one disabled after failures',
        description: 'A new `secret` takes effect for the next delivery.',
        params: WebhookId,
        body: WebhookPatch,
        response: { 200: Webhook },
      },
    },
    async (request) => {
      const { url, events, secret, enabled } = request.body;
      const filter = normalised(request.body.filter);
      if (url !== undefined) await guard(url);
      const updated = await webhooks.update(request.params.id, {
        ...(url === undefined ? {} : { url }),
        ...(events === undefined ? {} : { events }),
        ...(secret === undefined ? {} : { secret }),
        ...(filter === undefined ? {} : { filter }),
        ...(enabled === undefined ? {} : { enabled }),
      });
      if (updated === undefined) throw notFound(request.params.id);
      return updated;
    },
  );

  app.delete(
    '/webhooks/:id',
    {
      schema: {
        tags: ['webhooks'],
        summary: 'Delete a webhook and its delivery record; queued attempts are dropped',
        params: WebhookId,
        response: { 200: WebhookDeleted },
      },
    },
    async (request) => {
      if (!(await webhooks.delete(request.params.id))) throw notFound(request.params.id);
      return { id: request.params.id, deleted: true as const };
    },
  );

  app.get(
    '/webhooks/:id/deliveries',
    {
      schema: {
        tags: ['webhooks'],
        summary: 'Every delivery attempt of a webhook, newest first',
        params: WebhookId,
        querystring: PageQuery,
        response: { 200: Type.Array(Delivery) },
      },
    },
    async (request, reply) => {
      if ((await webhooks.get(request.params.id)) === undefined) throw notFound(request.params.id);
      return pagedAnswer(reply, `/webhooks/${request.params.id}/deliveries`, request, await webhooks.deliveries(request.params.id, request.query));
    },
  );

  app.post(
    '/webhooks/:id/deliveries/:delivery_id/redeliver',
    {
      schema: {
        tags: ['webhooks'],
        summary: "Send a delivery's event again, with a fresh retry schedule",
        description: 'Answers 202 once queued; the new attempts appear under the deliveries. The `webhook-id` stays the same, so receivers can deduplicate.',
        params: DeliveryPath,
        response: { 202: Redelivery, ...problemResponses(409) },
      },
    },
    async (request, reply) => {
      const { id, delivery_id: deliveryId } = request.params;
      const webhook = await webhooks.get(id);
      if (webhook === undefined) throw notFound(id);
      const delivery = await webhooks.delivery(id, deliveryId);
      if (delivery === undefined) throw new NotFound(`Webhook ${id} has no delivery ${deliveryId}.`);
      if (!webhook.enabled) throw new WebhookDisabled(id);
      await deps.deliveries.redeliver(id, delivery.event_id);
      return reply.code(202).send({ webhook_id: id, event_id: delivery.event_id, queued: true as const });
    },
  );
}
