// Shapes of alert rules (scope, condition, cool-down, digest, channels): validation, serialisation and the OpenAPI document.
import { Type, type Static } from 'typebox';
import { NO_NUL } from '../../http/schemas.js';

const ProductId = Type.Integer({ minimum: 1, maximum: 2_147_483_647 });
const Days = (description: string, maximum = 366) => Type.Integer({ minimum: 1, maximum, description });
const Amount = Type.Number({ exclusiveMinimum: 0, maximum: 1e12 });
const Currency = Type.String({ pattern: '^[A-Z]{3}$', description: 'ISO 4217 code', examples: ['EUR'] });

export const RuleScope = Type.Union(
  [
    Type.Object({ type: Type.Literal('product'), product_id: ProductId }, { additionalProperties: false }),
    Type.Object({ type: Type.Literal('tag'), tag: Type.String({ minLength: 1, maxLength: 100, pattern: NO_NUL, examples: ['watch-list'] }) }, { additionalProperties: false }),
    Type.Object(
      {
        type: Type.Literal('source'),
        source: Type.String({ minLength: 1, maxLength: 2048, pattern: '^https?://', description: 'The canonical URL a run started from (a listing, a sitemap)' }),
      },
      { additionalProperties: false },
    ),
    Type.Object(
      {
        type: Type.Literal('site'),
        site: Type.String({
          minLength: 1,
          maxLength: 253,
          pattern: '^[a-z0-9](?:[a-z0-9.-]*[a-z0-9])?$',
          description: 'A host name; its subdomains match too',
          examples: ['shop.example'],
        }),
      },
      { additionalProperties: false },
    ),
    Type.Object({ type: Type.Literal('all') }, { additionalProperties: false }),
  ],
  { description: 'Which products the rule watches: one product, a tag, a source URL, a site, or all' },
);
export type RuleScope = Static<typeof RuleScope>;

const PriceAtOrBelow = Type.Object(
  {
    type: Type.Literal('price_at_or_below'),
    target: Amount,
    currency: Type.Optional(Currency),
  },
  {
    additionalProperties: false,
    description:
      "The price fell to or below `target` (in the product's currency; with `currency`, only for products priced in it). " +
      'Fires on each drop at or below it, and when a product is first seen at or below it; a rise that stays below does not fire.',
  },
);

const PriceDrop = Type.Object(
  {
    type: Type.Literal('price_drop'),
    min_percent: Type.Optional(Type.Number({ exclusiveMinimum: 0, maximum: 100 })),
    min_amount: Type.Optional(Amount),
    baseline: Type.Union([Type.Literal('previous'), Type.Literal('highest')], {
      description: 'Compare with the previous price, or with the highest price of the last `days` days',
    }),
    days: Type.Optional(Days('For baseline `highest`: how far back to look (default 30)')),
  },
  { additionalProperties: false, description: 'The price dropped by at least `min_percent` % or `min_amount` (either is enough; one is required).' },
);

const LowestInDays = Type.Object(
  { type: Type.Literal('lowest_in_days'), days: Days('The window; a new price strictly below every price in it fires', 3660) },
  { additionalProperties: false },
);

const Simple = <T extends string>(type: T, description: string) => Type.Object({ type: Type.Literal(type) }, { additionalProperties: false, description });

const SuspiciousDiscount = Type.Object(
  {
    type: Type.Literal('suspicious_discount'),
    days: Type.Optional(Type.Integer({ minimum: 30, maximum: 366, description: 'The look-back period (EU Omnibus Directive: not shorter than 30 days; default 30)' })),
  },
  {
    additionalProperties: false,
    description:
      'The page shows a "was" price the history does not support: it was never charged in the last `days` days, or it is above the lowest ' +
      'price of the `days` days before the reduction began. Fires only when the history covers the whole period.',
  },
);

export const RuleCondition = Type.Union([
  PriceAtOrBelow,
  PriceDrop,
  LowestInDays,
  Simple('back_in_stock', 'Availability went from out of stock or discontinued to a state one can buy in'),
  Simple('out_of_stock', 'Availability went to out_of_stock or discontinued'),
  Simple('availability_changed', 'Any change of availability'),
  Simple('price_changed', 'Any change of price'),
  Simple('product_gone', 'The product is no longer found at its source'),
  SuspiciousDiscount,
]);
export type RuleCondition = Static<typeof RuleCondition>;
export type ConditionType = RuleCondition['type'];

export const DIGEST_MODES = ['immediate', 'daily', 'weekly'] as const;
export type DigestMode = (typeof DIGEST_MODES)[number];

const RuleFields = {
  name: Type.String({ minLength: 1, maxLength: 200, pattern: NO_NUL, examples: ['Espresso machine under 200 €'] }),
  scope: RuleScope,
  condition: RuleCondition,
  cooldown_minutes: Type.Integer({
    minimum: 0,
    maximum: 525_600,
    default: 60,
    description: 'After a firing for a product, further firings of this rule for it are held back this long',
  }),
  digest: Type.Unsafe<DigestMode>({ type: 'string', enum: [...DIGEST_MODES], default: 'immediate', description: 'Send each firing at once, or group them daily or weekly' }),
  channel_ids: Type.Array(Type.String({ format: 'uuid' }), {
    maxItems: 20,
    uniqueItems: true,
    default: [],
    description: 'The channels it sends to (none: firings are only recorded)',
  }),
  enabled: Type.Boolean({ default: true }),
};

export const AlertRuleCreate = Type.Object(RuleFields, {
  additionalProperties: false,
  examples: [
    {
      name: 'Espresso machine under 200 €',
      scope: { type: 'product', product_id: 42 },
      condition: { type: 'price_at_or_below', target: 200, currency: 'EUR' },
      cooldown_minutes: 60,
      digest: 'immediate',
      channel_ids: ['0b8d7e1c-3f4a-4c39-9d7e-5a6b7c8d9e0f'],
      enabled: true,
    },
  ],
});
export type AlertRuleCreate = Static<typeof AlertRuleCreate>;

export const AlertRule = Type.Object({ id: Type.String({ format: 'uuid' }), ...RuleFields }, { $id: 'AlertRule' });
export type AlertRule = Static<typeof AlertRule>;

/**
 * What the schema cannot say: a drop rule needs a threshold. Answers the problem in words, or null.
 * (JSON Schema could with anyOf-required, but its error message would name neither field.)
 */
export function ruleProblem(rule: Pick<AlertRule, 'condition'>): string | null {
  const condition = rule.condition;
  if (condition.type === 'price_drop') {
    if (condition.min_percent === undefined && condition.min_amount === undefined) return 'A price_drop condition needs min_percent or min_amount.';
    if (condition.baseline === 'previous' && condition.days !== undefined) return 'days applies only to baseline "highest".';
  }
  return null;
}
