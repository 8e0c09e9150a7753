// Where a channel's messages end up (its target) and which server they are sent to (its host): what deliveries are deduplicated, capped and isolated by.
import { createHash } from 'node:crypto';
import type { ChannelConfig } from './channel-schema.js';

export interface ChannelTarget {
  /**
   * The destination: two channels with the same key reach the same people (the same SMTP server and
   * recipients, the same URL and topic or chat). A digest of it, so it can be logged and compared
   * without carrying the secrets a destination holds (webhook URLs, tokens).
   */
  key: string;
  /** The server a delivery connects to (`smtp://host:port`, an URL's origin): slow ones are isolated by it. */
  host: string;
}

const digest = (parts: readonly string[]) => createHash('sha256').update(parts.join('\u0000')).digest('hex').slice(0, 32);

/** The origin of an URL as written in a config (validated by the schema); the text itself if it does not parse. */
function originOf(url: string): string {
  try {
    return new URL(url).origin;
  } catch {
    return url;
  }
}

/** A URL with its trailing slashes and the case of its scheme and host made the same. */
function sameUrl(url: string): string {
  try {
    const parsed = new URL(url);
    return `${parsed.origin}${parsed.pathname.replace(/\/+$/, '')}${parsed.search}`;
  } catch {
    return url;
  }
}

export function channelTarget(config: ChannelConfig): ChannelTarget {
  switch (config.kind) {
    case 'email': {
      const host = `smtp://${config.host.toLowerCase()}:${config.port}`;
      return { key: digest(['email', host, ...config.to.map((to) => to.toLowerCase()).sort()]), host };
    }
    case 'ntfy':
      return { key: digest(['ntfy', sameUrl(config.server_url), config.topic]), host: originOf(config.server_url) };
    case 'slack':
    case 'discord':
      return { key: digest([config.kind, sameUrl(config.webhook_url)]), host: originOf(config.webhook_url) };
    case 'teams':
      return { key: digest(['teams', sameUrl(config.workflow_url)]), host: originOf(config.workflow_url) };
    case 'telegram': {
      const api = config.api_url ?? 'https://api.telegram.org';
      return { key: digest(['telegram', sameUrl(api), config.bot_token, config.chat_id]), host: originOf(api) };
    }
    case 'gotify':
      return { key: digest(['gotify', sameUrl(config.server_url), config.token]), host: originOf(config.server_url) };
    case 'webhook':
      // A registered webhook: its URL is capped and deduplicated by the webhooks themselves (WEBHOOKS_PER_URL).
      return { key: digest(['webhook', config.webhook_id]), host: `webhook:${config.webhook_id}` };
  }
}
