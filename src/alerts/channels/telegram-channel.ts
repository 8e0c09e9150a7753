// Telegram: the Bot API's sendMessage (POST JSON to {api}/bot{token}/sendMessage; answers {ok, result} or {ok:false, error_code, description, parameters}).
import type { ConfigOf } from './channel-schema.js';
import { escapeHtml } from './hostile-text.js';
import { clipHtml } from './html-clip.js';
import { httpNotifier, type AnswerReader, type HttpDeps, type HttpRequestSpec } from './http-delivery.js';
import type { RenderedMessage } from './message-render.js';
import type { Notifier } from './notifier.js';

/**
 * Telegram takes 1-4096 characters of text after entity parsing. The HTML sent is kept within 4000
 * UTF-16 code units, which its parsed text can only be shorter than.
 */
export const TELEGRAM_MAX = 4000;

/**
 * The message as Telegram HTML: the title in bold, why, the facts, the sparkline and the dashboard
 * link. A long one (a digest) is cut to `max` between tags and entities with its open tags closed
 * (clipHtml): a cut `<b>` or `&#38` is a 400 from Telegram, which would disable the channel. The
 * link is kept past the cut; it leads to the rest.
 */
export function telegramText(message: RenderedMessage, max = TELEGRAM_MAX): string {
  const lines = [`<b>${escapeHtml(message.title)}</b>`, escapeHtml(message.why), '', ...message.facts.map((f) => `<b>${escapeHtml(f.label)}:</b> ${escapeHtml(f.value)}`)];
  if (message.sparkline !== '') lines.push(escapeHtml(message.sparkline));
  const link = `\n\n<a href="${escapeHtml(message.dashboard_link)}">Open in the dashboard</a>`;
  return `${clipHtml(lines.join('\n'), max - link.length)}${link}`;
}

/**
 * parse_mode HTML, the Bot API mode with the simplest escaping (&, <, > and quotes as entities),
 * link previews off. The bot token is in the URL path, which is why every error about it is scrubbed.
 */
export function telegramRequest(config: ConfigOf<'telegram'>, message: RenderedMessage): HttpRequestSpec {
  const base = (config.api_url ?? 'https://api.telegram.org').replace(/\/+$/, '');
  return {
    url: `${base}/bot${config.bot_token}/sendMessage`,
    body: { chat_id: config.chat_id, text: telegramText(message), parse_mode: 'HTML', link_preview_options: { is_disabled: true } },
  };
}

/** The answer's own verdict: ok:false is a failure whatever the status, and flood control says when to retry. */
export const readTelegramAnswer: AnswerReader = (status, body) => {
  const answer = body as { ok?: unknown; error_code?: unknown; description?: unknown; parameters?: { retry_after?: unknown } } | undefined;
  if (answer === undefined || typeof answer.ok !== 'boolean') return undefined;
  if (answer.ok) return { ok: status >= 200 && status < 300 };
  const code = typeof answer.error_code === 'number' ? answer.error_code : status;
  const wait = answer.parameters?.retry_after;
  return {
    ok: false,
    retryable: code === 429 || code >= 500,
    error: typeof answer.description === 'string' ? answer.description : undefined,
    ...(typeof wait === 'number' ? { retry_after_ms: wait * 1000 } : {}),
  };
};

export function createTelegramNotifier(config: ConfigOf<'telegram'>, deps: HttpDeps): Notifier {
  return httpNotifier(config, 'Telegram', telegramRequest, deps, readTelegramAnswer);
}
