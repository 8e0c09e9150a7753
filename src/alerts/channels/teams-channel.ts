// Microsoft Teams: a Workflows webhook ("When a Teams webhook request is received"), POST JSON message with one Adaptive Card; answers 202 Accepted.
import type { ConfigOf } from './channel-schema.js';
import { escapeMarkdown } from './hostile-text.js';
import { clip, httpNotifier, type HttpDeps, type HttpRequestSpec } from './http-delivery.js';
import type { RenderedMessage } from './message-render.js';
import type { Notifier } from './notifier.js';

/**
 * The Office 365 connectors (and their MessageCard format) are retired; a Teams workflow takes
 * {type: "message", attachments: [{contentType: "application/vnd.microsoft.card.adaptive", content}]}
 * and posts the card. TextBlocks and both sides of a Fact render a Markdown subset, so every text
 * that can carry scraped words (a digest's fact titles name products) is cut first, then escaped:
 * a cut never splits an escape. Teams refuses messages over 28 KB; the card stays far below.
 */
export function teamsRequest(config: ConfigOf<'teams'>, message: RenderedMessage): HttpRequestSpec {
  const text = (value: string, max: number) => escapeMarkdown(clip(value, max));
  const body: unknown[] = [
    { type: 'TextBlock', text: text(message.title, 300), weight: 'Bolder', size: 'Medium', wrap: true, style: 'heading' },
    { type: 'TextBlock', text: text(message.why, 2000), wrap: true },
  ];
  if (message.facts.length > 0) body.push({ type: 'FactSet', facts: message.facts.slice(0, 12).map((f) => ({ title: text(f.label, 100), value: text(f.value, 500) })) });
  if (message.sparkline !== '') body.push({ type: 'TextBlock', text: message.sparkline, fontType: 'Monospace' });
  return {
    url: config.workflow_url,
    body: {
      type: 'message',
      attachments: [
        {
          contentType: 'application/vnd.microsoft.card.adaptive',
          contentUrl: null,
          content: {
            $schema: 'http://adaptivecards.io/schemas/adaptive-card.json',
            type: 'AdaptiveCard',
            version: '1.4',
            body,
            actions: [{ type: 'Action.OpenUrl', title: 'Open in the dashboard', url: message.dashboard_link }],
            msteams: { width: 'Full' },
          },
        },
      ],
    },
  };
}

export function createTeamsNotifier(config: ConfigOf<'teams'>, deps: HttpDeps): Notifier {
  return httpNotifier(config, 'Teams', teamsRequest, deps);
}
