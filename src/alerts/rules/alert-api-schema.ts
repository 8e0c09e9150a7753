// Request and answer shapes of /alert-rules, /alerts and /channels: validation, serialisation and the OpenAPI document.
import { Type, type Static } from 'typebox';
import { MAX_BIGINT_ID, Nullable } from '../../http/schemas.js';
import { AlertRule, AlertRuleCreate, DIGEST_MODES, type DigestMode } from './alert-rule-schema.js';
import { ChannelConfig } from '../channels/channel-schema.js';

const Uuid = Type.String({ pattern: '^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$', description: 'UUID' });
const Time = Type.String({ format: 'date-time' });
const Open = (description: string) => Type.Object({}, { additionalProperties: true, description });

export const IdPath = Type.Object({ id: Uuid });

export const PageQuery = Type.Object(
  { limit: Type.Integer({ minimum: 1, maximum: 500, default: 50 }), offset: Type.Integer({ minimum: 0, maximum: 2_147_483_647, default: 0 }) },
  { additionalProperties: false },
);

export const RuleListQuery = Type.Object({ ...PageQuery.properties, enabled: Type.Optional(Type.Boolean()) }, { additionalProperties: false });

export const RuleView = Type.Object({ ...AlertRule.properties, created_at: Time, updated_at: Time }, { $id: 'AlertRuleView' });

// Written out rather than Partial(AlertRuleCreate): its defaults would fill an absent field in and so change it.
const { name, scope, condition } = AlertRuleCreate.properties;
export const RulePatch = Type.Object(
  {
    name: Type.Optional(name),
    scope: Type.Optional(scope),
    condition: Type.Optional(condition),
    cooldown_minutes: Type.Optional(Type.Integer({ minimum: 0, maximum: 525_600 })),
    digest: Type.Optional(Type.Unsafe<DigestMode>({ type: 'string', enum: [...DIGEST_MODES] })),
    channel_ids: Type.Optional(Type.Array(Type.String({ format: 'uuid' }), { maxItems: 20, uniqueItems: true })),
    enabled: Type.Optional(Type.Boolean()),
  },
  {
    additionalProperties: false,
    minProperties: 1,
    description: 'Any of the fields; absent ones stay as they are. `scope` and `condition` are replaced whole.',
    examples: [{ enabled: false }],
  },
);
export type RulePatch = Static<typeof RulePatch>;

export const DigestSendQuery = Type.Object(
  {
    period: Type.Optional(Type.Unsafe<'daily' | 'weekly'>({ type: 'string', enum: ['daily', 'weekly'], description: 'Only the daily or only the weekly digests; absent: both' })),
    rule_id: Type.Optional({ ...Uuid, description: "Only this rule's digest" }),
  },
  { additionalProperties: false },
);

export const DigestSendAnswer = Type.Object(
  {
    digests: Type.Integer({ description: 'Digests (one per rule and period) now due and queued to be sent' }),
    alerts: Type.Integer({ description: 'Alerts they carry' }),
  },
  { examples: [{ digests: 2, alerts: 7 }] },
);

export const PreviewQuery = Type.Object(
  { days: Type.Integer({ minimum: 1, maximum: 366, default: 30, description: 'How far back to replay the stored history' }) },
  { additionalProperties: false },
);

const StateValues = Nullable(
  Type.Object({ price: Nullable(Type.Number()), currency: Nullable(Type.String()), list_price: Nullable(Type.Number()), availability: Nullable(Type.String()) }),
);

export const RulePreviewAnswer = Type.Object(
  {
    from: Time,
    to: Time,
    days: Type.Integer(),
    count: Type.Integer({ description: 'How many times the rule would have fired (cool-down included)' }),
    summary: Type.String({ examples: ['This rule would have fired 3 times in the last 30 days, for 2 products.'] }),
    products: Type.Array(Type.Object({ product_id: Type.Integer(), title: Type.String(), count: Type.Integer() })),
    firings: Type.Array(
      Type.Object({
        product_id: Type.Integer(),
        title: Type.String(),
        event_id: Type.Integer(),
        event_type: Type.String(),
        event_at: Time,
        why: Type.String(),
        before: StateValues,
        after: StateValues,
      }),
      { description: 'The firings, oldest first (at most 100)' },
    ),
    events_considered: Type.Integer({ description: 'Stored change events replayed' }),
    truncated: Type.Boolean({ description: 'True when the period held more events than a preview replays (10,000): the count is a lower bound' }),
  },
  { $id: 'AlertRulePreview' },
);

export const AlertQuery = Type.Object(
  {
    limit: Type.Integer({ minimum: 1, maximum: 200, default: 50 }),
    before: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_BIGINT_ID, description: 'The cursor: alerts older than this one (the last id of the previous page)' })),
    rule_id: Type.Optional(Uuid),
    product_id: Type.Optional(Type.Integer({ minimum: 1, maximum: 2_147_483_647 })),
    condition: Type.Optional(Type.String({ maxLength: 40, pattern: '^[a-z_]+$' })),
  },
  { additionalProperties: false },
);
export type AlertQuery = Static<typeof AlertQuery>;

export const AlertDelivery = Type.Object({
  id: Type.String({ format: 'uuid' }),
  channel_id: Nullable(Type.String({ format: 'uuid' })),
  channel_name: Type.String(),
  status: Type.String({ enum: ['pending', 'retrying', 'succeeded', 'failed', 'skipped'] }),
  attempts: Type.Integer(),
  response_status: Nullable(Type.Integer({ description: "The service's HTTP status or the SMTP reply code of the last attempt" })),
  error: Nullable(Type.String({ description: 'Why the last attempt failed, or why there was none (secrets masked)' })),
  next_attempt_at: Nullable(Time),
  delivered_at: Nullable(Time),
  updated_at: Time,
  digest: Type.Boolean({ description: 'Sent as part of a daily or weekly digest' }),
});

export const Alert = Type.Object(
  {
    id: Type.Integer({ description: 'Identifies the alert; the cursor for `before`' }),
    fired_at: Time,
    rule: Type.Object({ id: Nullable(Type.String({ format: 'uuid' })), name: Type.String(), condition: Type.String() }),
    product: Type.Object({ id: Nullable(Type.Integer({ description: 'Null once the product was deleted' })), title: Type.String(), url: Nullable(Type.String()) }),
    event: Type.Object({ id: Type.Integer(), type: Type.String(), created_at: Time }),
    before: StateValues,
    after: StateValues,
    reason: Open('Why it fired, by condition: the target, the baseline of a drop, the previous low, or the Omnibus verdict with its evidence'),
    why: Type.String(),
    digest: Type.String({ enum: ['immediate', 'daily', 'weekly'] }),
    deliveries: Type.Array(AlertDelivery, { description: "Each channel's message and its outcome (a digest's, once the digest is made)" }),
  },
  { $id: 'Alert' },
);
export type Alert = Static<typeof Alert>;

export const AlertPath = Type.Object({ id: Type.Integer({ minimum: 1, maximum: MAX_BIGINT_ID, description: 'Alert id' }) });

export const ChannelView = Type.Object(
  {
    id: Type.String({ format: 'uuid' }),
    name: Type.String(),
    kind: Type.String({ enum: ['email', 'ntfy', 'slack', 'discord', 'telegram', 'teams', 'gotify', 'webhook'] }),
    enabled: Type.Boolean(),
    disabled_reason: Nullable(Type.String({ description: 'Why it was disabled (its deliveries kept failing); PATCH {"enabled": true} enables it again' })),
    disabled_at: Nullable(Time),
    config: Type.Object({ kind: Type.String() }, { additionalProperties: true, description: 'The settings, every secret masked (***; a secret URL keeps its origin)' }),
    created_at: Time,
    updated_at: Time,
  },
  { $id: 'Channel' },
);
export type ChannelView = Static<typeof ChannelView>;

export const ChannelPatch = Type.Object(
  {
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 200, pattern: '^[^\\u0000]*$' })),
    enabled: Type.Optional(Type.Boolean({ description: 'true enables a channel disabled after failures (and clears its reason)' })),
    config: Type.Optional(ChannelConfig),
    url: Type.Optional(Type.String({ minLength: 1, maxLength: 2048, pattern: '^[^\\u0000]*$', description: 'Instead of `config`: an Apprise-style URL' })),
  },
  {
    additionalProperties: false,
    minProperties: 1,
    description: 'A new `config` (or `url`) replaces the whole configuration, secrets included: stored secrets are never sent back to be edited.',
    examples: [{ enabled: true }],
  },
);
export type ChannelPatch = Static<typeof ChannelPatch>;

export const TestOutcome = Type.Object(
  {
    ok: Type.Boolean(),
    status: Type.Optional(Type.Integer({ description: "The service's HTTP status, or the SMTP reply code" })),
    error: Type.Optional(Type.String({ description: 'What went wrong (secrets masked)' })),
    retryable: Type.Boolean({ description: 'Whether the same failure may pass by trying again later' }),
  },
  { $id: 'ChannelTestOutcome' },
);

export const Deleted = Type.Object({ id: Type.String(), deleted: Type.Literal(true) });
