// /channels: notification channels (secrets stored, never shown), Apprise URLs, and a test message on request.
import { Type } from 'typebox';
import type { App } from '../../http/base-app.js';
import { pagedAnswer } from '../../http/paging.js';
import { ChannelPatch, ChannelView, Deleted, IdPath, PageQuery, TestOutcome } from '../rules/alert-api-schema.js';
import type { ChannelService } from './channel-service.js';
import { ChannelCreate } from './channel-schema.js';

const KINDS =
  'Kinds: `email` (SMTP: `starttls` on 587, `tls` on 465, or `none`; AUTH; text and HTML with a price chart), `ntfy`, `slack` (incoming webhook), ' +
  '`discord` (webhook), `telegram` (bot), `teams` (a Workflows webhook), `gotify`, and `webhook` (a webhook registered at /webhooks, ' +
  'sent signed as `alert.fired`). Instead of `config`, `url` takes an Apprise-style URL: `mailto://`, `mailtos://user:pass@domain?to=`, ' +
  '`ntfy://topic`, `ntfys://[token@]host/topic`, `discord://id/token`, `tgram://bot_token/chat_id`, `slack://TokenA/TokenB/TokenC`, ' +
  '`workflows://host/workflow/signature`, `gotify[s]://host/token`, or the Slack, Discord and Teams webhook https URLs themselves.';

export interface ChannelRoutesDeps {
  service: ChannelService;
}

export function channelRoutes(app: App, deps: ChannelRoutesDeps): void {
  const { service } = deps;
  app.post(
    '/channels',
    {
      schema: {
        tags: ['alerts'],
        summary: 'Create a notification channel',
        description:
          `${KINDS} Secrets (passwords, tokens, topics, webhook URLs) are stored and never shown again: answers mask them. ` +
          'Where the channel sends passes the same address guard as scrape URLs (private networks only with SCRAPE_ALLOW_PRIVATE_NETWORKS).',
        body: ChannelCreate,
        response: { 201: ChannelView },
      },
    },
    async (request, reply) => {
      const channel = await service.create(request.body);
      return reply.code(201).header('location', `/channels/${channel.id}`).send(channel);
    },
  );

  app.get(
    '/channels',
    {
      schema: {
        tags: ['alerts'],
        summary: 'List channels, newest first (secrets masked; disabled ones with their reason)',
        querystring: PageQuery,
        response: { 200: Type.Array(ChannelView) },
      },
    },
    async (request, reply) => {
      return pagedAnswer(reply, '/channels', request, await service.list(request.query));
    },
  );

  app.get('/channels/:id', { schema: { tags: ['alerts'], summary: 'One channel (secrets masked)', params: IdPath, response: { 200: ChannelView } } }, async (request) =>
    service.get(request.params.id),
  );

  app.patch(
    '/channels/:id',
    {
      schema: {
        tags: ['alerts'],
        summary: 'Rename, enable or disable a channel, or replace its configuration',
        params: IdPath,
        body: ChannelPatch,
        response: { 200: ChannelView },
      },
    },
    async (request) => service.update(request.params.id, request.body),
  );

  app.delete(
    '/channels/:id',
    {
      schema: {
        tags: ['alerts'],
        summary: 'Delete a channel; rules stop sending to it',
        params: IdPath,
        response: { 200: Deleted },
      },
    },
    async (request) => {
      await service.delete(request.params.id);
      return { id: request.params.id, deleted: true as const };
    },
  );

  app.post(
    '/channels/:id/test',
    {
      schema: {
        tags: ['alerts'],
        summary: 'Send a test message now',
        description:
          "Sends a made-up price alert marked as a test and answers the outcome: `ok`, the service's status, and what went wrong (secrets masked). " +
          'A failed test does not disable the channel; a disabled one can be tested before it is enabled again.',
        params: IdPath,
        response: { 200: TestOutcome },
      },
    },
    async (request) => service.test(request.params.id),
  );
}
