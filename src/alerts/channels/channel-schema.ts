// Shapes of notification channels (e-mail, ntfy, Slack, Discord, Telegram, Teams, Gotify, webhook): validation, serialisation and the OpenAPI document.
import { Type, type Static } from 'typebox';
import { NO_NUL } from '../../http/schemas.js';

const HttpUrl = (description: string) => Type.String({ format: 'uri', pattern: '^https?://', maxLength: 2048, description });
const Secret = (description: string, pattern = '^[^\\s\\u0000]+$') =>
  Type.String({ minLength: 1, maxLength: 512, pattern, description: `${description} (secret: stored, never shown)` });
const Email = Type.String({ format: 'email', maxLength: 254 });
const Host = Type.String({ minLength: 1, maxLength: 253, pattern: '^[A-Za-z0-9.:\\[\\]-]+$', description: 'Host name or IP address' });

export const EmailChannel = Type.Object(
  {
    kind: Type.Literal('email'),
    host: Host,
    port: Type.Integer({ minimum: 1, maximum: 65535, examples: [587] }),
    security: Type.Union([Type.Literal('starttls'), Type.Literal('tls'), Type.Literal('none')], {
      description: 'starttls: upgrade a plain connection (port 587), required; tls: implicit TLS (port 465); none: plain, upgraded only if the server offers it',
    }),
    username: Type.Optional(Type.String({ minLength: 1, maxLength: 254, pattern: NO_NUL })),
    password: Type.Optional(Secret('SMTP password', NO_NUL)),
    from: Email,
    from_name: Type.Optional(Type.String({ maxLength: 100, pattern: NO_NUL })),
    to: Type.Array(Email, { minItems: 1, maxItems: 20, uniqueItems: true }),
  },
  { additionalProperties: false },
);

export const NtfyChannel = Type.Object(
  {
    kind: Type.Literal('ntfy'),
    server_url: HttpUrl('The ntfy server, e.g. https://ntfy.sh'),
    topic: Secret('The topic; on a public server it is the only thing keeping others from reading', '^[-_A-Za-z0-9]{1,64}$'),
    token: Type.Optional(Secret('Access token (Authorization: Bearer)')),
    username: Type.Optional(Type.String({ minLength: 1, maxLength: 100, pattern: '^[^:\\s]+$' })),
    password: Type.Optional(Secret('Password (Authorization: Basic)')),
    priority: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: 5,
        description:
          'ntfy priority for ordinary alerts (default 3); urgent ones (back_in_stock, price_at_or_below, suspicious_discount: stock back, a target price reached, a dishonest "was" price) use at least 4',
      }),
    ),
  },
  { additionalProperties: false },
);

export const SlackChannel = Type.Object(
  { kind: Type.Literal('slack'), webhook_url: Secret('Incoming webhook URL, https://hooks.slack.com/services/T.../B.../...', '^https?://[^\\s]+$') },
  { additionalProperties: false },
);

export const DiscordChannel = Type.Object(
  { kind: Type.Literal('discord'), webhook_url: Secret('Webhook URL, https://discord.com/api/webhooks/{id}/{token}', '^https?://[^\\s]+$') },
  { additionalProperties: false },
);

export const TelegramChannel = Type.Object(
  {
    kind: Type.Literal('telegram'),
    bot_token: Secret('Bot token from @BotFather', '^[0-9]{1,20}:[A-Za-z0-9_-]{10,100}$'),
    chat_id: Type.String({ pattern: '^(?:-?[0-9]{1,20}|@[A-Za-z0-9_]{5,32})$', description: 'Chat id, or @channelusername' }),
    api_url: Type.Optional(HttpUrl('Bot API server (default https://api.telegram.org)')),
  },
  { additionalProperties: false },
);

export const TeamsChannel = Type.Object(
  {
    kind: Type.Literal('teams'),
    workflow_url: Secret(
      'The URL of a Teams workflow ("When a Teams webhook request is received" / "Send webhook alerts to a channel"); it carries its signature',
      '^https?://[^\\s]+$',
    ),
  },
  { additionalProperties: false },
);

export const GotifyChannel = Type.Object(
  {
    kind: Type.Literal('gotify'),
    server_url: HttpUrl('The Gotify server (a path prefix is kept)'),
    token: Secret('Application token (X-Gotify-Key)'),
    priority: Type.Optional(
      Type.Integer({
        minimum: 0,
        maximum: 10,
        description:
          'Gotify priority for ordinary alerts (default 5); urgent ones (back_in_stock, price_at_or_below, suspicious_discount: stock back, a target price reached, a dishonest "was" price) use at least 8',
      }),
    ),
  },
  { additionalProperties: false },
);

export const WebhookChannel = Type.Object(
  {
    kind: Type.Literal('webhook'),
    webhook_id: Type.String({
      format: 'uuid',
      description: 'A webhook registered at /webhooks: firings go out through it as `alert.fired` messages, signed with its secret (retried on the alert schedule)',
    }),
  },
  { additionalProperties: false },
);

export const ChannelConfig = Type.Union([EmailChannel, NtfyChannel, SlackChannel, DiscordChannel, TelegramChannel, TeamsChannel, GotifyChannel, WebhookChannel]);
export type ChannelConfig = Static<typeof ChannelConfig>;
export type ChannelKind = ChannelConfig['kind'];
export type ConfigOf<K extends ChannelKind> = Extract<ChannelConfig, { kind: K }>;

const ChannelFields = {
  name: Type.String({ minLength: 1, maxLength: 200, pattern: NO_NUL, examples: ['My phone (ntfy)'] }),
  enabled: Type.Boolean({ default: true }),
};

export const ChannelCreate = Type.Object(
  {
    ...ChannelFields,
    config: Type.Optional(ChannelConfig),
    url: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 2048,
        pattern: NO_NUL,
        description:
          'Instead of `config`: an Apprise-style URL (mailto://, mailtos://, ntfy://, ntfys://, discord://, tgram://, slack://, workflows://, gotify://, gotifys://) or a service webhook URL',
        examples: ['ntfys://ntfy.sh/my-price-alerts'],
      }),
    ),
  },
  { additionalProperties: false, minProperties: 2 },
);
export type ChannelCreate = Static<typeof ChannelCreate>;

/** A stored channel. Its config holds the secrets: serve it only through publicView. */
export interface Channel {
  id: string;
  name: string;
  enabled: boolean;
  config: ChannelConfig;
}
