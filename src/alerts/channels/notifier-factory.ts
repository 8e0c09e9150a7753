// A channel's config -> its Notifier adapter, with the egress dependencies (dispatcher, guard, lookup) the caller injects.
import type { ChannelConfig } from './channel-schema.js';
import { createDiscordNotifier } from './discord-channel.js';
import { createEmailNotifier, type EmailDeps } from './email-channel.js';
import { createGotifyNotifier } from './gotify-channel.js';
import type { HttpDeps } from './http-delivery.js';
import type { Notifier } from './notifier.js';
import { createNtfyNotifier } from './ntfy-channel.js';
import { createSlackNotifier } from './slack-channel.js';
import { createTeamsNotifier } from './teams-channel.js';
import { createTelegramNotifier } from './telegram-channel.js';

export interface NotifierDeps {
  http: HttpDeps;
  email: EmailDeps;
}

/** Channels this module delivers itself; a `webhook` channel goes through the signed-webhook sender (see webhook-channel.ts). */
export type DirectChannelConfig = Exclude<ChannelConfig, { kind: 'webhook' }>;

export function isDirect(config: ChannelConfig): config is DirectChannelConfig {
  return config.kind !== 'webhook';
}

export function createNotifier(config: DirectChannelConfig, deps: NotifierDeps): Notifier {
  switch (config.kind) {
    case 'email':
      return createEmailNotifier(config, deps.email);
    case 'ntfy':
      return createNtfyNotifier(config, deps.http);
    case 'slack':
      return createSlackNotifier(config, deps.http);
    case 'discord':
      return createDiscordNotifier(config, deps.http);
    case 'telegram':
      return createTelegramNotifier(config, deps.http);
    case 'teams':
      return createTeamsNotifier(config, deps.http);
    case 'gotify':
      return createGotifyNotifier(config, deps.http);
  }
}
