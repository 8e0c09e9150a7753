// Rule evaluation, pure and deterministic: (rule, one change event, the history before it, the last firing, now) -> a firing or null.
import type { AlertRule, RuleScope } from './alert-rule-schema.js';
import type { ChartPoint, EvaluationInput, Firing, ProductContext, StateValues } from './firing.js';
import { DAY_MS, iso, sortedPoints, spansBefore, time, type PriceSpan } from './price-history.js';
import { checkCondition } from './rule-conditions.js';

/** How far back a firing's chart reaches (or further, when the rule itself looks further). */
const CHART_DAYS = 90;

/**
 * Evaluates `rule` for one change event. A firing comes only from an event, so an unchanged
 * re-scrape (which makes none) never fires; the same event evaluated twice gives the same firing
 * with the same dedupe_key, which the store keeps once. Null when the rule is disabled, the product
 * is out of its scope, the condition is not met, or the rule is cooling down for this product.
 */
export function evaluateRule(rule: AlertRule, input: EvaluationInput): Firing | null {
  const { event, product, history } = input;
  if (!rule.enabled || event.product_id !== product.id || !inScope(rule.scope, product, event.source)) return null;
  if (coolingDown(rule, input)) return null;
  const at = time(event.created_at);
  const prior = spansBefore(history, at);
  const { before, after } = statesAround(input, prior, at);
  const met = checkCondition(rule.condition, { event, at, prior, before, after });
  if (met === null) return null;
  const lookBack = 'days' in rule.condition && rule.condition.days !== undefined ? rule.condition.days : 30;
  return {
    dedupe_key: `${rule.id}:${product.id}:${event.id}`,
    rule_id: rule.id,
    rule_name: rule.name,
    condition: rule.condition.type,
    product: { id: product.id, title: product.title, url: product.url, tags: [...product.tags] },
    event_id: event.id,
    event_type: event.type,
    event_at: event.created_at,
    fired_at: new Date(time(input.now)).toISOString(),
    before,
    after,
    reason: met.reason,
    why: met.why,
    chart: chartPoints(prior, after, at, Math.max(CHART_DAYS, lookBack)),
    digest: rule.digest,
    channel_ids: [...rule.channel_ids],
  };
}

/** Whether the product (or the run that saw it) is among those the scope watches. */
export function inScope(scope: RuleScope, product: ProductContext, eventSource: string | null): boolean {
  switch (scope.type) {
    case 'all':
      return true;
    case 'product':
      return product.id === scope.product_id;
    case 'tag':
      return product.tags.includes(scope.tag);
    case 'source':
      // Both sides are canonical URLs (the feed stores them so; routes canonicalise a rule's on write).
      return eventSource === scope.source;
    case 'site': {
      const host = hostOf(product.url) ?? hostOf(eventSource);
      return host !== null && (host === scope.site || host.endsWith(`.${scope.site}`));
    }
  }
}

/** The cool-down runs from the last firing; a firing "from the future" (clock skew) holds back too. */
function coolingDown(rule: AlertRule, input: EvaluationInput): boolean {
  if (input.lastFiring == null || rule.cooldown_minutes === 0) return false;
  return time(input.now) - time(input.lastFiring.fired_at) < rule.cooldown_minutes * 60_000;
}

/**
 * The values before and after the change: the recorded state before it and the one it made, with
 * the event's own old and new values winning (they are what the change was, even when the history
 * given is a page that does not reach the change).
 */
function statesAround(input: EvaluationInput, prior: readonly PriceSpan[], at: number): { before: StateValues | null; after: StateValues | null } {
  const { event } = input;
  const last = prior.at(-1);
  const before: StateValues | null = last === undefined ? null : values(last);
  const made = sortedPoints(input.history).find((p) => time(p.first_seen_at) >= at);
  const base: StateValues | null = made !== undefined ? values(made) : before;
  const data = event.data;
  switch (event.type) {
    case 'product.created':
      return { before: null, after: { ...emptyState(), ...base, ...pick(data, ['price', 'currency', 'list_price', 'availability']) } };
    case 'price.changed':
      return {
        before: { ...emptyState(), ...before, price: num(data.old) },
        after: { ...emptyState(), ...base, price: num(data.new), currency: str(data.currency), list_price: num(data.list_price) },
      };
    case 'availability.changed':
      return {
        before: { ...emptyState(), ...before, availability: str(data.old) },
        after: { ...emptyState(), ...base, availability: str(data.new) },
      };
    default:
      return { before, after: base };
  }
}

/** Prices in the current currency over the last `days` days up to the change, and the change itself. */
function chartPoints(prior: readonly PriceSpan[], after: StateValues | null, at: number, days: number): ChartPoint[] {
  const from = at - days * DAY_MS;
  const currency = after?.currency ?? null;
  const points = prior.filter((s) => s.to > from && s.price !== null && s.currency === currency).map((s) => ({ at: iso(Math.max(s.from, from)), price: s.price as number }));
  if (after?.price != null) points.push({ at: iso(at), price: after.price });
  return points;
}

function values(state: StateValues): StateValues {
  return { price: state.price, currency: state.currency, list_price: state.list_price, availability: state.availability };
}

function emptyState(): StateValues {
  return { price: null, currency: null, list_price: null, availability: null };
}

function pick(data: Record<string, unknown>, keys: ReadonlyArray<keyof StateValues>): Partial<StateValues> {
  const picked: Partial<StateValues> = {};
  for (const key of keys) {
    if (!(key in data)) continue;
    if (key === 'price' || key === 'list_price') picked[key] = num(data[key]);
    else picked[key] = str(data[key]);
  }
  return picked;
}

function num(value: unknown): number | null {
  return typeof value === 'number' && Number.isFinite(value) ? value : null;
}

function str(value: unknown): string | null {
  return typeof value === 'string' ? value : null;
}

function hostOf(url: string | null): string | null {
  if (url === null) return null;
  try {
    return new URL(url).hostname.toLowerCase().replace(/\.$/, '');
  } catch {
    return null;
  }
}
