// Each rule condition as a pure test of one change event against the history before it: met (with its reason) or not.
import type { RuleCondition } from './alert-rule-schema.js';
import type { AlertEvent, FiringReason, StateValues } from './firing.js';
import { formatMoney, formatPercent } from '../channels/money-format.js';
import { checkOmnibus } from './omnibus-check.js';
import { DAY_MS, extreme, iso, pricedIn, sameOrAbove, type PriceSpan } from './price-history.js';

/** What a condition sees of one change. */
export interface ChangeContext {
  event: AlertEvent;
  /** The event's time, ms. */
  at: number;
  /** The states before the change (spansBefore). */
  prior: PriceSpan[];
  before: StateValues | null;
  after: StateValues | null;
}

export interface ConditionMet {
  reason: FiringReason;
  why: string;
}

// back_in_stock is the tracker's own verdict (event data); out_of_stock is its mirror image.
const UNAVAILABLE: ReadonlySet<string> = new Set(['out_of_stock', 'discontinued']);

export function checkCondition(condition: RuleCondition, change: ChangeContext): ConditionMet | null {
  const { event, before, after } = change;
  switch (condition.type) {
    case 'price_changed':
      return event.type === 'price.changed' ? { reason: { type: 'price_changed' }, why: `The price changed from ${money(before)} to ${money(after)}.` } : null;
    case 'product_gone':
      return event.type === 'product.gone' ? { reason: { type: 'product_gone' }, why: 'The product is no longer found at its source.' } : null;
    case 'availability_changed':
      return event.type === 'availability.changed' ? { reason: { type: 'availability_changed' }, why: `Availability changed from ${stock(before)} to ${stock(after)}.` } : null;
    case 'back_in_stock':
      return event.type === 'availability.changed' && event.data.back_in_stock === true
        ? { reason: { type: 'back_in_stock' }, why: `Back in stock (${stock(after)}, was ${stock(before)}).` }
        : null;
    case 'out_of_stock': {
      if (event.type !== 'availability.changed') return null;
      const wentAway = after?.availability != null && UNAVAILABLE.has(after.availability) && !UNAVAILABLE.has(before?.availability ?? '');
      return wentAway ? { reason: { type: 'out_of_stock' }, why: `Now ${stock(after)} (was ${stock(before)}).` } : null;
    }
    case 'price_at_or_below':
      return priceAtOrBelow(condition, change);
    case 'price_drop':
      return priceDrop(condition, change);
    case 'lowest_in_days':
      return lowestInDays(condition.days, change);
    case 'suspicious_discount':
      return suspiciousDiscount(condition.days ?? 30, change);
  }
}

/** The price (in the currency of the change) fell to or below the target: on a drop, or when first seen there. */
function priceAtOrBelow(condition: Extract<RuleCondition, { type: 'price_at_or_below' }>, { event, before, after }: ChangeContext): ConditionMet | null {
  if (event.type !== 'price.changed' && event.type !== 'product.created') return null;
  const price = after?.price ?? null;
  if (price === null || !sameOrAbove(condition.target, price)) return null;
  if (condition.currency !== undefined && after?.currency !== condition.currency) return null;
  // A rise that stays under the target is no news; a drop (or a first sighting, or a price after none) is.
  const previous = comparable(before, after);
  if (event.type === 'price.changed' && previous !== null && previous <= price) return null;
  return {
    reason: { type: 'price_at_or_below', target: condition.target, currency: after?.currency ?? null },
    why: `The price ${money(after)} is at or below the target ${formatMoney(condition.target, after?.currency ?? null)}.`,
  };
}

function priceDrop(condition: Extract<RuleCondition, { type: 'price_drop' }>, change: ChangeContext): ConditionMet | null {
  const { event, before, after, prior, at } = change;
  if (event.type !== 'price.changed') return null;
  const price = after?.price ?? null;
  const previous = comparable(before, after);
  // Only a drop is news for this rule, whatever the baseline: a rise never fires it.
  if (price === null || previous === null || previous <= price) return null;
  let baseline: { price: number; at: string };
  let days: number | null = null;
  if (condition.baseline === 'previous') {
    baseline = { price: previous, at: prior.at(-1)?.point.first_seen_at ?? event.created_at };
  } else {
    days = condition.days ?? 30;
    const highest = extreme(pricedIn(prior, at - days * DAY_MS, at, after?.currency ?? null), 'highest');
    if (highest === undefined) return null;
    baseline = { price: highest.price, at: highest.point.first_seen_at };
  }
  const drop = round(baseline.price - price);
  const dropPercent = baseline.price > 0 ? round((drop / baseline.price) * 100) : 0;
  const byAmount = condition.min_amount !== undefined && sameOrAbove(drop, condition.min_amount);
  const byPercent = condition.min_percent !== undefined && dropPercent >= condition.min_percent - 1e-9;
  if (drop <= 0 || !(byAmount || byPercent)) return null;
  const from = condition.baseline === 'previous' ? 'the previous price' : `the highest price of the last ${days} days`;
  return {
    reason: { type: 'price_drop', baseline: condition.baseline, baseline_price: baseline.price, baseline_at: baseline.at, days, drop, drop_percent: dropPercent },
    why: `The price dropped by ${formatMoney(drop, after?.currency ?? null)} (${formatPercent(dropPercent)}) from ${from}, ${formatMoney(baseline.price, after?.currency ?? null)}, to ${money(after)}.`,
  };
}

function lowestInDays(days: number, { event, after, prior, at }: ChangeContext): ConditionMet | null {
  if (event.type !== 'price.changed') return null;
  const price = after?.price ?? null;
  if (price === null) return null;
  const window = pricedIn(prior, at - days * DAY_MS, at, after?.currency ?? null);
  const lowest = extreme(window, 'lowest');
  // Strictly below: equalling the old low is not a new low, and a re-sighting of it is no change.
  if (lowest === undefined || sameOrAbove(price, lowest.price)) return null;
  const since = Math.max(at - days * DAY_MS, (window[0] as PriceSpan).from);
  const partial = since > at - days * DAY_MS ? ` (the history begins ${iso(since).slice(0, 10)})` : '';
  return {
    reason: { type: 'lowest_in_days', days, previous_low: lowest.price, previous_low_at: lowest.point.first_seen_at, history_since: iso(since) },
    why: `The lowest price in ${days} days${partial}: ${money(after)}, below the previous low of ${formatMoney(lowest.price, after?.currency ?? null)}.`,
  };
}

function suspiciousDiscount(days: number, { event, after, prior, at }: ChangeContext): ConditionMet | null {
  if (event.type !== 'price.changed' || after === null) return null;
  const verdict = checkOmnibus(after, prior, at, days);
  if (verdict === null || verdict.failed.length === 0) return null;
  return {
    reason: { type: 'suspicious_discount', verdict },
    why: `The "was" price ${formatMoney(verdict.list_price, verdict.currency)} is not supported by the history: ${verdict.failed.map((f) => f.explanation).join(' ')}`,
  };
}

/** The price before, when it is in the currency of the price after (else no comparison can be made). */
function comparable(before: StateValues | null, after: StateValues | null): number | null {
  if (before === null || before.price === null || before.currency !== (after?.currency ?? null)) return null;
  return before.price;
}

function money(state: StateValues | null): string {
  return formatMoney(state?.price ?? null, state?.currency ?? null);
}

function stock(state: StateValues | null): string {
  return (state?.availability ?? 'unknown').replaceAll('_', ' ');
}

function round(value: number): number {
  return Math.round(value * 100) / 100;
}
