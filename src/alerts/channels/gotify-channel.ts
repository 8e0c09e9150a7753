// Gotify: POST JSON {title, message, priority, extras} to {server}/message with the application token in X-Gotify-Key.
import type { ConfigOf } from './channel-schema.js';
import { clip, httpNotifier, type HttpDeps, type HttpRequestSpec } from './http-delivery.js';
import type { RenderedMessage } from './message-render.js';
import type { Notifier } from './notifier.js';

/**
 * The token goes in the X-Gotify-Key header rather than ?token=, so it stays out of access logs.
 * Plain text (client::display) so nothing in a scraped title is rendered as Markdown; a tap opens
 * the dashboard (client::notification click).
 */
export function gotifyRequest(config: ConfigOf<'gotify'>, message: RenderedMessage): HttpRequestSpec {
  const url = new URL(config.server_url);
  url.search = '';
  url.hash = '';
  url.pathname = `${url.pathname.replace(/\/+$/, '')}/message`;
  return {
    url: url.href,
    headers: { 'x-gotify-key': config.token },
    body: {
      title: clip(message.title, 250),
      message: clip(message.text, 8000),
      priority: message.urgent ? Math.max(config.priority ?? 5, 8) : (config.priority ?? 5),
      extras: { 'client::display': { contentType: 'text/plain' }, 'client::notification': { click: { url: message.dashboard_link } } },
    },
  };
}

export function createGotifyNotifier(config: ConfigOf<'gotify'>, deps: HttpDeps): Notifier {
  return httpNotifier(config, 'Gotify', gotifyRequest, deps);
}
