// Discord: execute a webhook (POST JSON {content, embeds, allowed_mentions} to /api/webhooks/{id}/{token}; 204 when sent, 429 with retry_after).
import type { ConfigOf } from './channel-schema.js';
import { escapeMarkdown } from './hostile-text.js';
import { clipEscaped, httpNotifier, type AnswerReader, type HttpDeps, type HttpRequestSpec } from './http-delivery.js';
import type { RenderedMessage } from './message-render.js';
import type { Notifier } from './notifier.js';

/** All of an embed's texts together (title, description, field names and values, footer) stay within this. */
const EMBED_MAX = 6000;

/**
 * One embed (title, description, fields, link) within Discord's limits (256/4096/25 fields of
 * 256+1024, 6000 in all: the fields that do not fit are left out). Every text but the footer's
 * sparkline renders Markdown, the title included, so each is escaped, and cut on the escaped text
 * (Discord counts that) between two escapes. allowed_mentions.parse is empty, so even a mention the
 * escaping missed cannot ping @everyone, @here or a role.
 */
export function discordRequest(config: ConfigOf<'discord'>, message: RenderedMessage): HttpRequestSpec {
  const text = (value: string, max: number) => clipEscaped(value, max, escapeMarkdown);
  const title = text(message.title, 256);
  const description = text(message.why, 4096);
  let room = EMBED_MAX - length(title) - length(description) - length(message.sparkline);
  const fields: Array<{ name: string; value: string; inline: boolean }> = [];
  for (const fact of message.facts.slice(0, 25)) {
    const field = { name: text(fact.label, 256), value: text(fact.value, 1024), inline: fact.value.length < 40 };
    room -= length(field.name) + length(field.value);
    if (room < 0) break;
    fields.push(field);
  }
  return {
    url: config.webhook_url,
    body: {
      username: 'Price alerts',
      content: text(message.short, 2000),
      embeds: [
        {
          title,
          description,
          url: message.dashboard_link,
          color: message.urgent ? 0xdc2626 : 0x1d4ed8,
          fields,
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

function length(text: string): number {
  return [...text].length;
}
