// ntfy: publish as JSON to the server's root URL (docs.ntfy.sh/publish, "Publish as JSON"), with Bearer or Basic auth.
import type { ConfigOf } from './channel-schema.js';
import { basicCredentials } from './channel-secrets.js';
import { clip, httpNotifier, type HttpDeps, type HttpRequestSpec } from './http-delivery.js';
import type { RenderedMessage } from './message-render.js';
import type { Notifier } from './notifier.js';

/**
 * POST {server}/ with {topic, title, message, tags, priority, click}. ntfy takes JSON only at the
 * root URL, not at /{topic}; the topic travels in the body, so it never shows in a URL or a log.
 * Messages over 4096 bytes become attachments there, so the text is kept well below that.
 */
export function ntfyRequest(config: ConfigOf<'ntfy'>, message: RenderedMessage): HttpRequestSpec {
  const headers: Record<string, string> = {};
  if (config.token !== undefined) headers.authorization = `Bearer ${config.token}`;
  else if (config.username !== undefined && config.password !== undefined) {
    headers.authorization = `Basic ${basicCredentials(config.username, config.password)}`;
  }
  return {
    url: rootOf(config.server_url),
    headers,
    body: {
      topic: config.topic,
      title: clip(message.title, 250),
      message: clip(message.text, 3000),
      tags: [message.urgent ? 'warning' : 'chart_with_downwards_trend'],
      priority: message.urgent ? Math.max(config.priority ?? 3, 4) : (config.priority ?? 3),
      click: message.dashboard_link,
    },
  };
}

export function createNtfyNotifier(config: ConfigOf<'ntfy'>, deps: HttpDeps): Notifier {
  return httpNotifier(config, 'ntfy', ntfyRequest, deps);
}

/** The server URL with one trailing slash: a path prefix (a reverse proxy's /ntfy) is kept. */
function rootOf(serverUrl: string): string {
  const url = new URL(serverUrl);
  url.search = '';
  url.hash = '';
  if (!url.pathname.endsWith('/')) url.pathname += '/';
  return url.href;
}
