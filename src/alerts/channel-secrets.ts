// Channel secrets, pure: which config fields are secret, the masked public view of a channel, and scrubbing them out of any text.
import { redactUrlsIn } from '../redact.js';
import type { Channel, ChannelConfig, ChannelKind } from './channel-schema.js';

export const MASK = '***';

/** Per kind, the fields that hold a password, a token or a URL whose path or query is the credential. */
const SECRET_FIELDS: { [K in ChannelKind]: ReadonlyArray<keyof Extract<ChannelConfig, { kind: K }>> } = {
  email: ['password'],
  ntfy: ['topic', 'token', 'password'],
  slack: ['webhook_url'],
  discord: ['webhook_url'],
  telegram: ['bot_token'],
  teams: ['workflow_url'],
  gotify: ['token'],
  webhook: [],
};

/** A config as it may be shown: each secret masked; a secret URL keeps its origin, so one can still see where it points. */
export type PublicConfig = { [key: string]: unknown; kind: ChannelKind };

/**
 * The channel as an API answer, a log line or the dashboard may show it. Every route and log that
 * mentions a channel goes through this; the stored config never leaves the service.
 */
export function publicView(channel: Channel): Omit<Channel, 'config'> & { config: PublicConfig } {
  const config: Record<string, unknown> = { ...channel.config };
  for (const field of SECRET_FIELDS[channel.config.kind] as readonly string[]) {
    const value = config[field];
    if (typeof value !== 'string') continue;
    config[field] = field.endsWith('_url') ? maskUrl(value) : MASK;
  }
  return { id: channel.id, name: channel.name, enabled: channel.enabled, config: config as PublicConfig };
}

/**
 * Every secret of a config, and the pieces of it a message could quote: a secret URL's path
 * segments and query values, plain and percent-encoded. Short pieces ("api", "v1") are no secret.
 */
export function secretsOf(config: ChannelConfig): string[] {
  const found = new Set<string>();
  for (const field of SECRET_FIELDS[config.kind] as readonly string[]) {
    const value = (config as unknown as Record<string, unknown>)[field];
    if (typeof value !== 'string' || value === '') continue;
    found.add(value);
    if (field.endsWith('_url')) {
      for (const piece of urlPieces(value)) found.add(piece);
    }
  }
  for (const value of [...found]) {
    found.add(encodeURIComponent(value));
    found.add(encodeURI(value));
  }
  // Longest first, so a whole URL is masked before a segment of it.
  return [...found].filter((s) => s.length >= 6).sort((a, b) => b.length - a.length);
}

/** `text` with every secret of `config` (and any URL password) replaced by ***. */
export function scrubSecrets(text: string, secrets: readonly string[]): string {
  let out = text;
  for (const secret of secrets) out = out.split(secret).join(MASK);
  return redactUrlsIn(out);
}

function maskUrl(url: string): string {
  try {
    return `${new URL(url).origin}/${MASK}`;
  } catch {
    return MASK;
  }
}

function urlPieces(url: string): string[] {
  try {
    const parsed = new URL(url);
    const segments = parsed.pathname.split('/').filter((s) => s !== '');
    const pieces = [...segments, ...segments.map(safeDecode), ...[...parsed.searchParams.values()]];
    if (parsed.password !== '') pieces.push(parsed.password, safeDecode(parsed.password));
    if (parsed.search !== '') pieces.push(parsed.search.slice(1));
    // The path from the first segment that looks like a credential on: /services/T0/B0/XXXX.
    pieces.push(parsed.pathname + parsed.search);
    return pieces.filter((p) => p.length >= 6 && !/^(?:api|webhooks?|services|workflows|triggers|manual|paths|invoke)$/i.test(p));
  } catch {
    return [];
  }
}

function safeDecode(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}
