// Apprise-style channel URLs (mailtos://, ntfys://, discord://, tgram://, slack://, workflows://, gotifys:// and the services' own webhook URLs) -> channel configs, pure.
import { HttpProblem } from '../../problems.js';
import type { ChannelConfig, ConfigOf } from './channel-schema.js';

/** A channel URL that cannot be read. The detail names the scheme and the expected form, never the URL (it holds secrets). */
export class InvalidChannelUrl extends HttpProblem {
  constructor(detail: string) {
    // Always the request's `url`: the 422 names it, as a validation problem names its field.
    super(422, 'invalid-channel-url', 'Invalid Channel URL', detail, {
      errors: [{ path: '/body/url', message: 'is not a channel URL this service can read (the detail says why)' }],
    });
  }
}

interface Parts {
  scheme: string;
  user: string | null;
  password: string | null;
  /** The authority without user info, as written (a Telegram bot token has a colon in it). */
  authority: string;
  host: string;
  port: number | null;
  path: string[];
  query: URLSearchParams;
}

const FORMS: Record<string, string> = {
  mailto: 'mailto://user:password@domain[:port][/to@example.com]?to=&from=&name=&smtp=',
  mailtos: 'mailtos://user:password@domain[:port][/to@example.com]?to=&from=&name=&smtp=&mode=starttls|ssl',
  ntfy: 'ntfy://topic, ntfy://[user:password@|token@]host[:port]/topic',
  discord: 'discord://webhook_id/webhook_token',
  tgram: 'tgram://bot_token/chat_id',
  slack: 'slack://TokenA/TokenB/TokenC',
  workflows: 'workflows://host[:port]/workflow/signature',
  gotify: 'gotify://host[:port][/path]/token',
};

/**
 * Reads an Apprise URL (the forms of Apprise's documentation for these services) or a service's
 * own webhook URL into a channel config. Throws InvalidChannelUrl, whose detail never quotes the URL.
 */
export function parseAppriseUrl(input: string): ChannelConfig {
  const text = input.trim();
  if (/^https?:\/\//i.test(text)) return fromServiceUrl(text);
  const parts = split(text);
  switch (parts.scheme) {
    case 'mailto':
    case 'mailtos':
      return email(parts);
    case 'ntfy':
    case 'ntfys':
      return ntfy(parts);
    case 'discord':
      return discord(parts.authority, parts.path[0]);
    case 'tgram':
      return telegram(parts);
    case 'slack':
      return slack([parts.authority, ...parts.path.filter((p) => !p.startsWith('#'))], 'slack');
    case 'workflow':
    case 'workflows':
      return workflow(parts);
    case 'msteams':
      throw new InvalidChannelUrl(
        'msteams:// URLs are for Office 365 connector webhooks, which Microsoft has retired. Create a Teams workflow ("Send webhook alerts to a channel") and use its URL, or workflows://host/workflow/signature.',
      );
    case 'gotify':
    case 'gotifys':
      return gotify(parts);
    default:
      throw new InvalidChannelUrl(
        `Unsupported channel URL scheme "${parts.scheme}". Supported: ${Object.values(FORMS).join('; ')}; or a Slack, Discord or Teams workflow https URL.`,
      );
  }
}

function split(text: string): Parts {
  const match = /^([a-z][a-z0-9+.-]*):\/\/([^?#]*)(?:\?([^#]*))?(?:#(.*))?$/i.exec(text);
  if (match === null) throw new InvalidChannelUrl('A channel URL looks like scheme://..., e.g. ntfys://ntfy.sh/my-topic.');
  const scheme = (match[1] as string).toLowerCase();
  const [authorityWithUser = '', ...path] = (match[2] as string).split('/');
  const at = authorityWithUser.lastIndexOf('@');
  const userInfo = at === -1 ? null : authorityWithUser.slice(0, at);
  const authority = at === -1 ? authorityWithUser : authorityWithUser.slice(at + 1);
  const colon = userInfo?.indexOf(':') ?? -1;
  const hostPort = /^(\[[^\]]+\]|[^:]*)(?::(\d{1,5}))?$/.exec(authority);
  const segments = path.filter((p) => p !== '').map(decode);
  if (match[4] !== undefined && match[4] !== '') segments.push(`#${decode(match[4])}`);
  return {
    scheme,
    user: userInfo === null ? null : decode(colon === -1 ? userInfo : userInfo.slice(0, colon)),
    password: userInfo === null || colon === -1 ? null : decode(userInfo.slice(colon + 1)),
    authority: decode(authority),
    host: hostPort === null ? '' : decode(hostPort[1] as string).toLowerCase(),
    port: hostPort?.[2] === undefined ? null : Number(hostPort[2]),
    path: segments,
    query: new URLSearchParams(match[3] ?? ''),
  };
}

function email(parts: Parts): ConfigOf<'email'> {
  const secure = parts.scheme === 'mailtos';
  const mode = (parts.query.get('mode') ?? (secure ? 'starttls' : 'insecure')).toLowerCase();
  if (!['ssl', 'starttls', 'insecure'].includes(mode)) throw new InvalidChannelUrl('mode must be ssl, starttls or insecure.');
  const security = !secure || mode === 'insecure' ? 'none' : mode === 'ssl' ? 'tls' : 'starttls';
  const host = parts.query.get('smtp') ?? parts.host;
  if (host === '') throw new InvalidChannelUrl(`An e-mail URL needs a domain or smtp=: ${FORMS[parts.scheme]}.`);
  const user = parts.query.get('user') ?? parts.user;
  const password = parts.query.get('pass') ?? parts.password;
  const from = parts.query.get('from') ?? (user === null ? null : user.includes('@') ? user : `${user}@${parts.host}`);
  if (from === null || !isEmail(from)) throw new InvalidChannelUrl(`An e-mail URL needs a sender: a user (user@domain) or from=: ${FORMS[parts.scheme]}.`);
  const to = [...parts.path, ...parts.query.getAll('to').flatMap((t) => t.split(/[\s,;]+/))].filter((t) => t !== '');
  const bad = to.find((t) => !isEmail(t));
  if (bad !== undefined) throw new InvalidChannelUrl(`"${bad}" is not an e-mail address.`);
  const name = parts.query.get('name');
  return {
    kind: 'email',
    host,
    port: parts.port ?? (security === 'tls' ? 465 : security === 'starttls' ? 587 : 25),
    security,
    ...(user === null ? {} : { username: user }),
    ...(password === null ? {} : { password }),
    from,
    ...(name === null || name === '' ? {} : { from_name: name }),
    to: to.length === 0 ? [from] : [...new Set(to)],
  };
}

function ntfy(parts: Parts): ConfigOf<'ntfy'> {
  // ntfy://{topic} is the public server; otherwise the host is the server and the path the topic.
  const cloud = parts.path.length === 0;
  const topic = cloud ? parts.host : parts.path[0];
  if (topic === undefined || !/^[-_A-Za-z0-9]{1,64}$/.test(topic)) throw new InvalidChannelUrl(`An ntfy URL needs one topic (letters, digits, - and _): ${FORMS.ntfy}.`);
  if (parts.path.length > 1) throw new InvalidChannelUrl('One ntfy topic per channel: make a channel for each topic.');
  const https = parts.scheme === 'ntfys' || cloud || parts.host === 'ntfy.sh';
  const server = cloud ? 'https://ntfy.sh/' : `${https ? 'https' : 'http'}://${parts.host}${parts.port === null ? '' : `:${parts.port}`}/`;
  const token =
    parts.query.get('token') ?? (parts.password === null && parts.user !== null && (/^tk_/i.test(parts.user) || parts.query.get('auth') === 'token') ? parts.user : null);
  const priority = ntfyPriority(parts.query.get('priority'));
  return {
    kind: 'ntfy',
    server_url: server,
    topic,
    ...(token !== null ? { token } : parts.user !== null && parts.password !== null ? { username: parts.user, password: parts.password } : {}),
    ...(priority === undefined ? {} : { priority }),
  };
}

function ntfyPriority(value: string | null): number | undefined {
  if (value === null) return undefined;
  const named: Record<string, number> = { min: 1, low: 2, default: 3, normal: 3, high: 4, max: 5, emergency: 5, urgent: 5 };
  const priority = named[value.toLowerCase()] ?? Number(value);
  if (!Number.isInteger(priority) || priority < 1 || priority > 5) throw new InvalidChannelUrl('ntfy priority must be min, low, default, high, max or 1-5.');
  return priority;
}

function discord(id: string | undefined, token: string | undefined): ConfigOf<'discord'> {
  if (id === undefined || token === undefined || !/^[0-9]{5,25}$/.test(id) || !/^[A-Za-z0-9_-]{20,100}$/.test(token)) {
    throw new InvalidChannelUrl(`A Discord URL needs the webhook's id (digits) and token: ${FORMS.discord}.`);
  }
  return { kind: 'discord', webhook_url: `https://discord.com/api/webhooks/${id}/${token}` };
}

function telegram(parts: Parts): ConfigOf<'telegram'> {
  // The bot token ("123456:ABC-...") has a colon, so it is the authority as written, not host:port.
  const token = parts.authority.replace(/^bot/i, '');
  const [chat, ...more] = parts.path;
  if (!/^[0-9]{1,20}:[A-Za-z0-9_-]{10,100}$/.test(token)) throw new InvalidChannelUrl(`A Telegram URL needs a bot token (digits:letters): ${FORMS.tgram}.`);
  if (chat === undefined || !/^(?:-?[0-9]{1,20}|@[A-Za-z0-9_]{5,32})$/.test(chat))
    throw new InvalidChannelUrl(`A Telegram URL needs a chat id (a number or @channel): ${FORMS.tgram}.`);
  if (more.length > 0) throw new InvalidChannelUrl('One Telegram chat per channel: make a channel for each chat.');
  return { kind: 'telegram', bot_token: token, chat_id: chat };
}

function slack(tokens: Array<string | undefined>, form: 'slack' | 'https'): ConfigOf<'slack'> {
  const [a, b, c] = tokens;
  if (a?.startsWith('xox')) throw new InvalidChannelUrl('Slack bot tokens (xoxb-/xoxp-) are not supported: use an incoming webhook, slack://TokenA/TokenB/TokenC.');
  if (a === undefined || b === undefined || c === undefined || !/^[A-Z0-9]{5,20}$/i.test(a) || !/^[A-Z0-9]{5,20}$/i.test(b) || !/^[A-Za-z0-9]{10,40}$/.test(c)) {
    throw new InvalidChannelUrl(
      form === 'slack'
        ? `A Slack URL needs the three tokens of an incoming webhook: ${FORMS.slack}.`
        : 'A Slack webhook URL looks like https://hooks.slack.com/services/T.../B.../....',
    );
  }
  return { kind: 'slack', webhook_url: `https://hooks.slack.com/services/${a}/${b}/${c}` };
}

function workflow(parts: Parts): ConfigOf<'teams'> {
  const [id = parts.query.get('id') ?? parts.query.get('workflow'), signature = parts.query.get('signature') ?? parts.query.get('sig')] = parts.path;
  if (parts.host === '' || id == null || signature == null || !/^[A-Z0-9_-]+$/i.test(id) || !/^[A-Z0-9_-]+$/i.test(signature)) {
    throw new InvalidChannelUrl(`A Teams workflow URL needs a host, the workflow id and its signature: ${FORMS.workflows}.`);
  }
  const query = new URLSearchParams({
    'api-version': parts.query.get('api-version') ?? parts.query.get('ver') ?? '2016-06-01',
    sp: '/triggers/manual/run',
    sv: '1.0',
    sig: signature,
  });
  // As WHATWG URLs write it: the workflow URL Teams shows has :443, which is the https default.
  const port = parts.port === null || parts.port === 443 ? '' : `:${parts.port}`;
  return { kind: 'teams', workflow_url: `https://${parts.host}${port}/workflows/${id}/triggers/manual/paths/invoke?${query}` };
}

function gotify(parts: Parts): ConfigOf<'gotify'> {
  const token = parts.path.at(-1);
  if (parts.host === '' || token === undefined || !/^[A-Za-z0-9._-]{5,128}$/.test(token))
    throw new InvalidChannelUrl(`A Gotify URL needs a host and an application token: ${FORMS.gotify}.`);
  const prefix = parts.path.slice(0, -1).map(encodeURIComponent).join('/');
  const server = `${parts.scheme === 'gotifys' ? 'https' : 'http'}://${parts.host}${parts.port === null ? '' : `:${parts.port}`}/${prefix}`;
  const priority = gotifyPriority(parts.query.get('priority'));
  return { kind: 'gotify', server_url: server, token, ...(priority === undefined ? {} : { priority }) };
}

function gotifyPriority(value: string | null): number | undefined {
  if (value === null) return undefined;
  // Apprise's names for Gotify's 0-10 scale.
  const named: Record<string, number> = { low: 0, moderate: 3, normal: 5, high: 8, emergency: 10 };
  const priority = named[value.toLowerCase()] ?? Number(value);
  if (!Number.isInteger(priority) || priority < 0 || priority > 10) throw new InvalidChannelUrl('Gotify priority must be low, moderate, normal, high, emergency or 0-10.');
  return priority;
}

/** The services' own webhook URLs, pasted as they are shown. */
function fromServiceUrl(text: string): ChannelConfig {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new InvalidChannelUrl('The URL is not valid.');
  }
  const segments = url.pathname.split('/').filter((s) => s !== '');
  if (url.hostname === 'hooks.slack.com' && segments[0] === 'services') return slack(segments.slice(1), 'https');
  if (/^(?:ptb\.|canary\.)?discord(?:app)?\.com$/.test(url.hostname) && segments[0] === 'api' && segments.includes('webhooks')) {
    const at = segments.indexOf('webhooks');
    return discord(segments[at + 1], segments[at + 2]);
  }
  if (url.protocol === 'https:' && segments.includes('workflows') && url.pathname.includes('/triggers/') && url.searchParams.has('sig')) {
    return { kind: 'teams', workflow_url: url.href };
  }
  throw new InvalidChannelUrl(
    'This https URL is not a Slack, Discord or Teams workflow webhook; for another service use its Apprise form (ntfys://, gotifys://, tgram://, mailtos://).',
  );
}

function isEmail(text: string): boolean {
  return /^[^\s@<>()",;:]+@[^\s@<>()",;:]+\.[^\s@<>()",;:]+$/.test(text);
}

function decode(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    throw new InvalidChannelUrl('The URL has a malformed %-escape.');
  }
}
