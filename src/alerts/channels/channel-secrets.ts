// Channel secrets, pure: which config fields are secret, the masked public view of a channel, and scrubbing them out of any text.
import { redactUrlsIn } from '../../redact.js';
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
 * Every secret of a config, and the forms a message could quote it in: a secret URL's path segments
 * and query values, the base64 credentials derived from a user and password (HTTP Basic, SMTP AUTH),
 * each plain and percent-encoded; longest first. Pieces of a URL shorter than 6 characters ("api",
 * "v1") are no secret; a secret itself is one at any length (see scrubSecrets for how a short one is
 * matched).
 */
export function secretsOf(config: ChannelConfig): string[] {
  const found = new Set<string>();
  const fields = config as unknown as Record<string, unknown>;
  for (const field of SECRET_FIELDS[config.kind] as readonly string[]) {
    const value = fields[field];
    if (typeof value !== 'string' || value === '') continue;
    found.add(value);
    if (field.endsWith('_url')) {
      for (const piece of urlPieces(value)) found.add(piece);
    }
  }
  for (const derived of derivedCredentials(config)) found.add(derived);
  for (const value of [...found]) {
    found.add(encodeURIComponent(value));
    found.add(encodeURI(value));
  }
  found.delete('');
  return [...found].sort((a, b) => b.length - a.length);
}

/** The `Authorization: Basic` value of a user and password, as the ntfy adapter sends it (and secretsOf scrubs it). */
export function basicCredentials(username: string, password: string): string {
  return Buffer.from(`${username}:${password}`, 'utf8').toString('base64');
}

/** A secret this long or longer is scrubbed wherever it appears; a shorter one only as a whole token. */
const SUBSTRING_SAFE = 6;

/**
 * `text` with every secret of `config` (and any URL password) replaced by ***, in one pass, so a mask
 * is never scrubbed again. A secret of 6 characters or more is masked wherever it appears. A shorter
 * one (a 4-character ntfy topic, a 3-letter password) would also match inside ordinary words, so it is
 * masked only where it stands as a whole token: not touching a letter, digit, `_` or `-` on either
 * side (`"topic":"abc"`, `key=abc`, `/abc/`, `abc` alone, but not the `abc` of `abcdef`).
 */
export function scrubSecrets(text: string, secrets: readonly string[]): string {
  const pattern = secretPattern(secrets);
  return redactUrlsIn(pattern === null ? text : text.replace(pattern, MASK));
}

/**
 * `text` without the first part of a secret it may end in. For a text cut off at a bound (a service's
 * answer read only so far): scrubSecrets knows a secret only whole, so the part before the cut would
 * stay. Takes off the longest end of `text` that begins any secret; at worst a few ordinary
 * characters that happen to begin one go with it.
 */
export function withoutSecretStartAtEnd(text: string, secrets: readonly string[]): string {
  let end = text.length;
  for (const secret of secrets) {
    for (let length = Math.min(secret.length - 1, text.length); length > text.length - end; length--) {
      if (text.endsWith(secret.slice(0, length))) {
        end = text.length - length;
        break;
      }
    }
  }
  return text.slice(0, end);
}

function secretPattern(secrets: readonly string[]): RegExp | null {
  const alternatives = [...secrets]
    .filter((s) => s !== '')
    .sort((a, b) => b.length - a.length)
    .map((s) => ([...s].length >= SUBSTRING_SAFE ? escapeRegExp(s) : `(?<![\\p{L}\\p{N}_-])${escapeRegExp(s)}(?![\\p{L}\\p{N}_-])`));
  return alternatives.length === 0 ? null : new RegExp(alternatives.join('|'), 'gu');
}

function escapeRegExp(text: string): string {
  return text.replace(/[\\^$.*+?()[\]{}|/]/g, '\\$&');
}

/**
 * What a user and password turn into on the wire: HTTP Basic for ntfy (and any channel URL with a
 * password in it), SMTP AUTH LOGIN (the password alone) and AUTH PLAIN (NUL user NUL password).
 */
function derivedCredentials(config: ChannelConfig): string[] {
  const base64 = (text: string) => Buffer.from(text, 'utf8').toString('base64');
  const derived: string[] = [];
  if (config.kind === 'ntfy' && config.username !== undefined && config.password !== undefined) derived.push(basicCredentials(config.username, config.password));
  if (config.kind === 'email' && config.password !== undefined) {
    derived.push(base64(config.password));
    if (config.username !== undefined) derived.push(base64(`\0${config.username}\0${config.password}`));
  }
  for (const [field, value] of Object.entries(config)) {
    if (!field.endsWith('_url') || typeof value !== 'string') continue;
    const userinfo = passwordOf(value);
    if (userinfo !== undefined) derived.push(userinfo.password, basicCredentials(userinfo.username, userinfo.password));
  }
  return derived;
}

function passwordOf(url: string): { username: string; password: string } | undefined {
  try {
    const parsed = new URL(url);
    return parsed.password === '' ? undefined : { username: safeDecode(parsed.username), password: safeDecode(parsed.password) };
  } catch {
    return undefined;
  }
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
