// Channels as the API drives them: created from a config or an Apprise URL behind the address guard, shown masked, tested, deleted with the rules' references.
import { randomUUID } from 'node:crypto';
import type { Database } from '../../db/queryable.js';
import { NotFound, ValidationFailed } from '../../problems.js';
import type { ChannelPatch, ChannelView } from '../rules/alert-api-schema.js';
import { sendThrough, type AlertSenderDeps } from '../delivery/alert-delivery.js';
import { parseAppriseUrl } from './apprise-url.js';
import type { ChannelConfig, ChannelCreate } from './channel-schema.js';
import { publicView } from './channel-secrets.js';
import type { ChannelStore, StoredChannel } from './channel-store.js';
import { assertChannelTargets, assertValidConfig } from './config-check.js';
import type { NotifyOutcome } from './notifier.js';
import type { RuleStore } from '../rules/rule-store.js';
import { testMessage } from './test-message.js';

export interface ChannelServiceDeps extends AlertSenderDeps {
  db: Database;
  channels: ChannelStore;
  rules: Pick<RuleStore, 'forgetChannel'>;
  /** Whether a registered webhook exists (a channel of kind webhook names one). */
  webhookExists(id: string): Promise<boolean>;
  allowPrivateNetworks: boolean;
  dashboardUrl: string;
  /** Channels to one destination (ALERT_CHANNELS_PER_TARGET). */
  perTarget: number;
}

export interface ChannelService {
  create(body: ChannelCreate): Promise<ChannelView>;
  get(id: string): Promise<ChannelView>;
  list(query: { limit: number; offset: number }): Promise<{ items: ChannelView[]; total: number }>;
  update(id: string, patch: ChannelPatch): Promise<ChannelView>;
  delete(id: string): Promise<void>;
  /** Sends a test message now; the outcome, never thrown. */
  test(id: string): Promise<NotifyOutcome>;
}

/** A stored channel as every answer shows it: secrets masked. */
export function channelView(channel: StoredChannel): ChannelView {
  const shown = publicView(channel);
  return {
    id: channel.id,
    name: channel.name,
    kind: channel.kind,
    enabled: channel.enabled,
    disabled_reason: channel.disabled_reason,
    disabled_at: channel.disabled_at,
    config: shown.config,
    created_at: channel.created_at,
    updated_at: channel.updated_at,
  };
}

export function createChannelService(deps: ChannelServiceDeps): ChannelService {
  const { channels } = deps;
  const notFound = (id: string) => new NotFound(`Channel ${id} does not exist.`);

  /** Exactly one of config and url; either way the same schema and the same guard. */
  const configOf = async (body: { config?: ChannelConfig | undefined; url?: string | undefined }): Promise<ChannelConfig> => {
    if ((body.config === undefined) === (body.url === undefined)) {
      throw new ValidationFailed([{ path: '/body/config', message: 'give exactly one of config and url' }]);
    }
    let config: ChannelConfig;
    let path = '/body/config';
    if (body.url !== undefined) {
      path = '/body/url';
      const parsed = parseAppriseUrl(body.url);
      assertValidConfig(parsed, path);
      config = parsed;
    } else {
      config = body.config as ChannelConfig;
    }
    assertChannelTargets(config, deps.allowPrivateNetworks, path);
    if (config.kind === 'webhook' && !(await deps.webhookExists(config.webhook_id))) {
      throw new ValidationFailed([{ path: `${path}/webhook_id`, message: 'names no registered webhook (see /webhooks)' }]);
    }
    return config;
  };

  return {
    async create(body) {
      const config = await configOf(body);
      return channelView(await channels.create(randomUUID(), { name: body.name, enabled: body.enabled ?? true, config }, deps.perTarget));
    },

    async get(id) {
      const channel = await channels.get(id);
      if (channel === undefined) throw notFound(id);
      return channelView(channel);
    },

    async list(query) {
      const { items, total } = await channels.list(query);
      return { items: items.map(channelView), total };
    },

    async update(id, patch) {
      if ((await channels.get(id)) === undefined) throw notFound(id);
      const config = patch.config === undefined && patch.url === undefined ? undefined : await configOf(patch);
      const updated = await channels.update(
        id,
        {
          ...(patch.name === undefined ? {} : { name: patch.name }),
          ...(patch.enabled === undefined ? {} : { enabled: patch.enabled }),
          ...(config === undefined ? {} : { config }),
        },
        deps.perTarget,
      );
      if (updated === undefined) throw notFound(id);
      return channelView(updated);
    },

    async delete(id) {
      const deleted = await deps.db.transaction(async (tx) => {
        const gone = await channels.delete(id, tx);
        if (gone) await deps.rules.forgetChannel(id, tx);
        return gone;
      });
      if (!deleted) throw notFound(id);
    },

    async test(id) {
      const channel = await channels.get(id);
      if (channel === undefined) throw notFound(id);
      return sendThrough(channel.config, testMessage(deps.dashboardUrl), deps);
    },
  };
}
