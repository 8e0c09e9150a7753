// Shapes of price history, change events and webhooks: validation, serialisation and the OpenAPI document.
import { Type, type Static } from 'typebox';
import { MAX_BIGINT_ID, NO_NUL, Nullable } from '../http/schemas.js';

export const EVENT_TYPES = ['product.created', 'price.changed', 'availability.changed', 'product.gone', 'article.created', 'article.updated'] as const;
export type EventType = (typeof EVENT_TYPES)[number];

const Time = Type.String({ format: 'date-time', examples: ['2026-11-23T07:00:00.000Z'] });

export const HistoryQuery = Type.Object(
  {
    from: Type.Optional(Type.String({ format: 'date-time', description: 'Only states still current at or after this time' })),
    to: Type.Optional(Type.String({ format: 'date-time', description: 'Only states that began at or before this time' })),
    limit: Type.Integer({ minimum: 1, maximum: 1000, default: 100 }),
    offset: Type.Integer({ minimum: 0, maximum: 2_147_483_647, default: 0 }),
  },
  { additionalProperties: false },
);
export type HistoryQuery = Static<typeof HistoryQuery>;

export const HistoryPoint = Type.Object({
  price: Nullable(Type.Number({ examples: [51.77] })),
  currency: Nullable(Type.String({ examples: ['GBP'] })),
  list_price: Nullable(Type.Number()),
  availability: Nullable(Type.String({ examples: ['in_stock'] })),
  first_seen_at: Type.String({ format: 'date-time', description: 'When this state was first seen' }),
  last_seen_at: Type.String({ format: 'date-time', description: 'When it was last seen (the latest sighting, for the current state)' }),
  first_run: Nullable(Type.String({ description: 'The scrape log or job id that first saw it; null for an API write' })),
  last_run: Nullable(Type.String({ description: 'The run that last saw it' })),
  source: Type.Union([Type.Literal('scrape'), Type.Literal('api')], { description: 'Seen by a scrape, or set through the API' }),
});

export const History = Type.Object(
  {
    product_id: Type.Integer(),
    summary: Type.Object(
      {
        points: Type.Integer({ description: 'States in the selected range' }),
        lowest: Nullable(Type.Number()),
        highest: Nullable(Type.Number()),
        first_seen_at: Nullable(Type.String({ format: 'date-time' })),
        last_change_at: Nullable(Type.String({ format: 'date-time', description: 'When the latest state began; null while there was only one' })),
      },
      { description: 'Over the whole selected range, not only this page' },
    ),
    points: Type.Array(HistoryPoint, { description: 'Oldest first' }),
  },
  { $id: 'History' },
);

export const HISTORY_CSV_COLUMNS = ['first_seen_at', 'last_seen_at', 'price', 'currency', 'list_price', 'availability', 'first_run', 'last_run', 'source'] as const;

export const Event = Type.Object(
  {
    id: Type.Integer({ description: 'Identifies the event; the cursor for `after`, `before` and `Last-Event-ID`', examples: [1042] }),
    type: Type.String({ enum: [...EVENT_TYPES], examples: ['price.changed'] }),
    product_id: Nullable(Type.Integer({ description: 'The product of a product event; null for article events, and once the product was deleted' })),
    article_id: Nullable(Type.Integer({ description: 'The article of an article event; null for product events, and once the article was deleted' })),
    source: Nullable(Type.String({ description: 'The URL the run that saw it started from' })),
    run_id: Nullable(Type.String({ description: 'The scrape log or job id; null for an API write' })),
    data: Type.Record(Type.String(), Type.Unknown(), {
      description:
        'product.created: the values; price.changed: old, new, currency, change, change_percent, list_price; ' +
        'availability.changed: old, new, back_in_stock; product.gone: missed_runs, source_url; ' +
        'article.created: title, url, has_body, word_count; article.updated: changed (title and/or body), title, old_title when the title changed, ' +
        'url, word_count, body_filled when a body was read for the first time. Each says `via` (scrape or api).',
      examples: [{ old: 20, new: 15, currency: 'GBP', change: -5, change_percent: -25, list_price: 20, via: 'scrape' }],
    }),
    created_at: Time,
  },
  { $id: 'Event' },
);
export type Event = Static<typeof Event>;

export const EVENT_CSV_COLUMNS = ['id', 'type', 'product_id', 'article_id', 'source', 'run_id', 'created_at', 'data'] as const;

/** Comma-separated event types. */
const TypeList = Type.String({
  pattern: `^(?:${EVENT_TYPES.map((t) => t.replace('.', '\\.')).join('|')})(?:,(?:${EVENT_TYPES.map((t) => t.replace('.', '\\.')).join('|')}))*$`,
  description: `One or more of ${EVENT_TYPES.join(', ')}, comma-separated`,
  examples: ['price.changed,availability.changed'],
});

const EventFilters = {
  type: Type.Optional(TypeList),
  product_id: Type.Optional(Type.Integer({ minimum: 1, maximum: 2_147_483_647 })),
  article_id: Type.Optional(Type.Integer({ minimum: 1, maximum: 2_147_483_647, description: "One article's events" })),
  source: Type.Optional(
    Type.String({ maxLength: 2048, pattern: NO_NUL, description: 'The URL a run started from (compared in canonical form: no fragment, no trailing slash, sorted query)' }),
  ),
};

export const EventListQuery = Type.Object(
  {
    ...EventFilters,
    after: Type.Optional(Type.Integer({ minimum: 0, maximum: MAX_BIGINT_ID, description: 'Events after this one in the feed (the cursor: the last id you read)' })),
    before: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_BIGINT_ID, description: 'Events before this one in the feed (the cursor when reading newest first)' })),
    order: Type.Optional(
      Type.Unsafe<'asc' | 'desc'>({ type: 'string', enum: ['asc', 'desc'], default: 'asc', description: 'asc: oldest first (consumers); desc: newest first (a feed)' }),
    ),
    since: Type.Optional(Type.String({ format: 'date-time', description: 'Events at or after this time' })),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000, description: 'Page size (default 100); an export without it streams every match' })),
  },
  { additionalProperties: false },
);
export type EventListQuery = Static<typeof EventListQuery>;

export const EventStreamQuery = Type.Object(
  {
    ...EventFilters,
    after: Type.Optional(Type.Integer({ minimum: 0, maximum: MAX_BIGINT_ID, description: 'Start after this id; `Last-Event-ID` wins when both are sent' })),
  },
  { additionalProperties: false },
);
export type EventStreamQuery = Static<typeof EventStreamQuery>;

const HookUrl = Type.String({ format: 'uri', pattern: '^https?://', maxLength: 2048, examples: ['https://example.com/hooks/prices'] });
const HookEvents = Type.Array(Type.String({ enum: ['*', ...EVENT_TYPES] }), {
  minItems: 1,
  maxItems: EVENT_TYPES.length + 1,
  uniqueItems: true,
  description: 'Event types to deliver; `*` for all',
  examples: [['price.changed', 'availability.changed']],
});
/** A Standard Webhooks secret: `whsec_` and base64 of 24 to 64 random bytes. */
const Secret = Type.String({
  pattern: '^whsec_[A-Za-z0-9+/]{32,88}={0,2}$',
  description: '`whsec_` followed by base64 of 24-64 random bytes; generated when absent',
  examples: ['whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw'],
});
const Filter = Type.Object(
  {
    product_ids: Type.Optional(Type.Array(Type.Integer({ minimum: 1, maximum: 2_147_483_647 }), { minItems: 1, maxItems: 1000, uniqueItems: true })),
    source: Type.Optional(Type.String({ minLength: 1, maxLength: 2048, pattern: NO_NUL, description: 'Only events of runs started from this URL' })),
  },
  { additionalProperties: false, description: 'Only events of these products and/or this source' },
);

export const WebhookCreate = Type.Object(
  { url: HookUrl, events: HookEvents, secret: Type.Optional(Secret), filter: Type.Optional(Nullable(Filter)) },
  { additionalProperties: false, examples: [{ url: 'https://example.com/hooks/prices', events: ['price.changed'] }] },
);
export type WebhookCreate = Static<typeof WebhookCreate>;

export const WebhookPatch = Type.Object(
  {
    url: Type.Optional(HookUrl),
    events: Type.Optional(HookEvents),
    secret: Type.Optional(Secret),
    filter: Type.Optional(Nullable(Filter)),
    enabled: Type.Optional(Type.Boolean({ description: '`true` re-enables a webhook disabled after failing deliveries' })),
  },
  { additionalProperties: false, minProperties: 1 },
);
export type WebhookPatch = Static<typeof WebhookPatch>;

const WebhookFields = {
  id: Type.String({ format: 'uuid' }),
  url: Type.String(),
  events: Type.Array(Type.String()),
  filter: Nullable(Type.Object({ product_ids: Type.Optional(Type.Array(Type.Integer())), source: Type.Optional(Type.String()) })),
  enabled: Type.Boolean(),
  disabled_reason: Nullable(Type.String({ description: 'Why deliveries stopped, when they did' })),
  created_at: Time,
  updated_at: Time,
};
export const Webhook = Type.Object(WebhookFields, { $id: 'Webhook' });
export const WebhookWithSecret = Type.Object(
  { ...WebhookFields, secret: Type.String({ description: 'Shown only here, when it is set: keep it to verify signatures' }) },
  { $id: 'WebhookWithSecret' },
);

export const WebhookId = Type.Object({
  id: Type.String({ pattern: '^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$', description: 'UUID of the webhook' }),
});
export const DeliveryPath = Type.Object({
  id: WebhookId.properties.id,
  delivery_id: Type.String({ pattern: '^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$', description: 'UUID of the delivery attempt' }),
});

export const PageQuery = Type.Object(
  { limit: Type.Integer({ minimum: 1, maximum: 500, default: 50 }), offset: Type.Integer({ minimum: 0, maximum: 2_147_483_647, default: 0 }) },
  { additionalProperties: false },
);

export const Delivery = Type.Object(
  {
    id: Type.String({ format: 'uuid' }),
    webhook_id: Type.String({ format: 'uuid' }),
    event_id: Type.Integer({ description: 'Also the `webhook-id` header (evt_<id>) receivers deduplicate on' }),
    attempt: Type.Integer({ minimum: 1 }),
    status: Type.Union([Type.Literal('succeeded'), Type.Literal('failed')]),
    response_status: Nullable(Type.Integer()),
    error: Nullable(Type.String()),
    duration_ms: Nullable(Type.Number()),
    next_attempt_at: Nullable(Type.String({ format: 'date-time', description: 'When the next attempt is due after a failure; null when none follows' })),
    created_at: Time,
  },
  { $id: 'Delivery' },
);

export const Redelivery = Type.Object({
  webhook_id: Type.String({ format: 'uuid' }),
  event_id: Type.Integer(),
  queued: Type.Literal(true),
});

export const WebhookDeleted = Type.Object({ id: Type.String(), deleted: Type.Literal(true) });
