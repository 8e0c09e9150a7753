// Telegram: the Bot API's sendMessage (POST JSON to {api}/bot{token}/sendMessage; answers {ok, result} or {ok:false, error_code, description, parameters}).
import type { ConfigOf } from './channel-schema.js';
import { escapeHtml, isolate } from './hostile-text.js';
import { clip, httpNotifier, type AnswerReader, type HttpDeps, type HttpRequestSpec } from './http-delivery.js';
import type { RenderedMessage } from './message-render.js';
import type { Notifier } from './notifier.js';

/**
 * parse_mode HTML, the Bot API mode with the simplest escaping (&, <, > and quotes as entities),
 * link previews off, under the 4096-character limit. The bot token is in the URL path, which is
 * why every error about it is scrubbed.
 */
export function telegramRequest(config: ConfigOf<'telegram'>, message: RenderedMessage): HttpRequestSpec {
  const lines = [
    `<b>${escapeHtml(message.label)}: ${escapeHtml(isolate(message.product_title))}</b>`,
    escapeHtml(message.why),
    '',
    ...message.facts.map((f) => `<b>${escapeHtml(f.label)}:</b> ${escapeHtml(f.value)}`),
  ];
  if (message.sparkline !== '') lines.push(escapeHtml(message.sparkline));
  lines.push('', `<a href="${escapeHtml(message.dashboard_link)}">Open in the dashboard</a>`);
  const base = (config.api_url ?? 'https://api.telegram.org').replace(/\/+$/, '');
  return {
    url: `${base}/bot${config.bot_token}/sendMessage`,
    body: { chat_id: config.chat_id, text: clip(lines.join('\n'), 4000), parse_mode: 'HTML', link_preview_options: { is_disabled: true } },
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
