// Slack: an incoming webhook (POST JSON {text, blocks} to the webhook URL; it answers 200 "ok", or 400/403/404/410 with an error word).
import type { ConfigOf } from './channel-schema.js';
import { escapeSlack } from './hostile-text.js';
import { clip, clipEscaped, httpNotifier, type HttpDeps, type HttpRequestSpec } from './http-delivery.js';
import type { RenderedMessage } from './message-render.js';
import type { Notifier } from './notifier.js';

/**
 * `text` is the notification and fallback line; the blocks carry the message: a plain-text header
 * (never parsed), the reason and the facts as mrkdwn with &, < and > escaped (so a product title
 * cannot make a link or an @channel), and the dashboard link. Slack's limits (3000 for a text, 2000
 * for a field, 150 for the header) count the escaped text, so each mrkdwn text is cut on it, between
 * two escapes: a cut never leaves half an `&amp;`.
 */
export function slackRequest(config: ConfigOf<'slack'>, message: RenderedMessage): HttpRequestSpec {
  const link = `<${message.dashboard_link.replace(/[|>]/g, encodeURIComponent)}|Open in the dashboard>`;
  const mrkdwn = (value: string, max: number) => clipEscaped(value, max, escapeSlack);
  const fields = message.facts.slice(0, 10).map((f) => {
    // "*label*\n" takes three characters besides the label; the value has the rest of the 2000.
    const label = mrkdwn(f.label, 300);
    return { type: 'mrkdwn', text: `*${label}*\n${mrkdwn(f.value, 2000 - 3 - [...label].length)}` };
  });
  return {
    url: config.webhook_url,
    body: {
      text: mrkdwn(message.short, 3000),
      blocks: [
        { type: 'header', text: { type: 'plain_text', text: clip(message.title, 150), emoji: false } },
        { type: 'section', text: { type: 'mrkdwn', text: mrkdwn(message.why, 3000) }, ...(fields.length > 0 ? { fields } : {}) },
        { type: 'context', elements: [{ type: 'mrkdwn', text: message.sparkline === '' ? link : `${message.sparkline}  ${link}` }] },
      ],
      unfurl_links: false,
    },
  };
}

export function createSlackNotifier(config: ConfigOf<'slack'>, deps: HttpDeps): Notifier {
  return httpNotifier(config, 'Slack', slackRequest, deps);
}
