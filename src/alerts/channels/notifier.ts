// The Notifier port: one small interface every channel adapter implements, and the outcome a delivery job records.
import type { ChannelKind } from './channel-schema.js';
import type { RenderedMessage } from './message-render.js';

/** What one delivery attempt came to; never carries a secret. */
export interface NotifyOutcome {
  ok: boolean;
  /** The service's HTTP status, or the SMTP reply code. */
  status?: number;
  error?: string;
  /** Whether trying again later may succeed (5xx, 429, timeouts, refused connections); a 4xx will not. */
  retryable: boolean;
  /** How long the service asked us to wait (Retry-After, or its own field), when it did. */
  retry_after_ms?: number;
}

export interface Notifier {
  readonly kind: ChannelKind;
  /** Sends one message; never throws (a failure is an outcome). */
  send(message: RenderedMessage): Promise<NotifyOutcome>;
}
