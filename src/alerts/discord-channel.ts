// Discord: execute a webhook (POST JSON {content, embeds, allowed_mentions} to /api/webhooks/{id}/{token}; 204 when sent, 429 with retry_after).
import type { ConfigOf } from './channel-schema.js';
import { escapeMarkdown } from './hostile-text.js';
import { clip, httpNotifier, type AnswerReader, type HttpDeps, type HttpRequestSpec } from './http-delivery.js';
import type { RenderedMessage } from './message-render.js';
import type { Notifier } from './notifier.js';

/**
 * One embed (title, description, fields, link) within Discord's limits (256/4096/25 fields of
 * 256+1024). Markdown in scraped text is escaped, and allowed_mentions.parse is empty so no title
 * can ping @everyone or a role.
 */
export function discordRequest(config: ConfigOf<'discord'>, message: RenderedMessage): HttpRequestSpec {
  return {
    url: config.webhook_url,
    body: {
      username: 'Price alerts',
      content: clip(escapeMarkdown(message.short), 2000),
      embeds: [
        {
          title: clip(message.title, 256),
          description: clip(escapeMarkdown(message.why), 4096),
          url: message.dashboard_link,
          color: message.urgent ? 0xdc2626 : 0x1d4ed8,
          fields: message.facts.slice(0, 25).map((f) => ({ name: clip(escapeMarkdown(f.label), 256), value: clip(escapeMarkdown(f.value), 1024), inline: f.value.length < 40 })),
          ...(message.sparkline === '' ? {} : { footer: { text: message.sparkline } }),
        },
      ],
      allowed_mentions: { parse: [] },
    },
  };
}

/** A 429 says how long to wait in its body too (retry_after, seconds, possibly fractional). */
export const readDiscordAnswer: AnswerReader = (status, body) => {
  const seconds = (body as { retry_after?: unknown } | undefined)?.retry_after;
  return status === 429 && typeof seconds === 'number' && seconds >= 0 ? { retry_after_ms: Math.ceil(seconds * 1000) } : undefined;
};

export function createDiscordNotifier(config: ConfigOf<'discord'>, deps: HttpDeps): Notifier {
  return httpNotifier(config, 'Discord', discordRequest, deps, readDiscordAnswer);
}
