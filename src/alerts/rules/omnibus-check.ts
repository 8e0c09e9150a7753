// The honest-discount check, pure: does a shown "was" price stand up against the product's own history (EU Omnibus Directive)?
import type { HistoryPoint } from '../../tracking/tracking-store.js';
import { DAY_MS, covers, extreme, iso, pricedIn, sameOrAbove, type PriceSpan } from './price-history.js';

/**
 * Directive 98/6/EC art. 6a (added by the Omnibus Directive 2019/2161): an announced reduction must
 * refer to the lowest price applied in a period of at least 30 days before the reduction. We test
 * the two ways a "was" price fails that: it was never charged in the period, or it is above the
 * period's lowest price before the reduction (the "raised just before the sale" trick).
 */
export type OmnibusTest = 'list_price_never_charged' | 'was_price_above_prior_low';

export interface OmnibusFailure {
  test: OmnibusTest;
  /** The period the test looked at. */
  window_from: string;
  window_to: string;
  /** never charged: the highest price charged in the period; above prior low: the lowest. */
  reference_price: number;
  /** When the reference price began (the history point behind it). */
  reference_at: string;
  explanation: string;
}

export interface OmnibusVerdict {
  price: number;
  list_price: number;
  currency: string | null;
  /** When the current run of prices below the "was" price began. */
  reduction_started_at: string;
  failed: OmnibusFailure[];
  /** Tests that could not be decided because the history does not reach back far enough. */
  inconclusive: OmnibusTest[];
  /** The recorded states the verdict rests on, oldest first. */
  evidence: HistoryPoint[];
}

export interface ShownPrice {
  price: number | null;
  list_price: number | null;
  currency: string | null;
}

/**
 * Judges the state `shown`, which began at `at`, against the states before it (`prior`, as
 * spansBefore answers). Null when the page announces no reduction (no list price, or a price not
 * below it). Only prices in the shown currency count.
 */
export function checkOmnibus(shown: ShownPrice, prior: readonly PriceSpan[], at: number, days = 30): OmnibusVerdict | null {
  const { price, list_price: listPrice, currency } = shown;
  if (price === null || listPrice === null || sameOrAbove(price, listPrice)) return null;
  const period = days * DAY_MS;
  const reductionStart = reductionStartedAt(prior, listPrice, currency, at);
  const failed: OmnibusFailure[] = [];
  const inconclusive: OmnibusTest[] = [];

  // Test 1: was the "was" price (or more) ever charged in the period before now?
  const recentFrom = at - period;
  if (!covers(prior, recentFrom)) {
    inconclusive.push('list_price_never_charged');
  } else {
    const charged = pricedIn(prior, recentFrom, at, currency);
    const highest = extreme(charged, 'highest');
    if (highest === undefined || !sameOrAbove(highest.price, listPrice)) {
      failed.push({
        test: 'list_price_never_charged',
        window_from: iso(recentFrom),
        window_to: iso(at),
        reference_price: highest?.price ?? price,
        reference_at: highest === undefined ? iso(at) : highest.point.first_seen_at,
        explanation:
          highest === undefined
            ? `No price was recorded in the ${days} days before; the "was" price ${listPrice} was never charged.`
            : `The highest price charged in the last ${days} days was ${highest.price}; the "was" price ${listPrice} was never charged.`,
      });
    }
  }

  // Test 2: is the "was" price above the lowest price of the period before the reduction began?
  const priorFrom = reductionStart - period;
  if (!covers(prior, priorFrom)) {
    inconclusive.push('was_price_above_prior_low');
  } else {
    const lowest = extreme(pricedIn(prior, priorFrom, reductionStart, currency), 'lowest');
    if (lowest !== undefined && !sameOrAbove(lowest.price, listPrice)) {
      failed.push({
        test: 'was_price_above_prior_low',
        window_from: iso(priorFrom),
        window_to: iso(reductionStart),
        reference_price: lowest.price,
        reference_at: lowest.point.first_seen_at,
        explanation: `The lowest price in the ${days} days before the reduction (from ${iso(reductionStart).slice(0, 10)}) was ${lowest.price}, below the "was" price ${listPrice}.`,
      });
    }
  }

  const evidenceFrom = Math.min(recentFrom, priorFrom);
  return {
    price,
    list_price: listPrice,
    currency,
    reduction_started_at: iso(reductionStart),
    failed,
    inconclusive,
    evidence: prior.filter((s) => s.to > evidenceFrom).map((s) => s.point),
  };
}

/**
 * The reduction began where the unbroken run of states priced below the "was" price (with a list
 * price shown) that ends with the current state began; `at` when the current state starts it.
 */
function reductionStartedAt(prior: readonly PriceSpan[], listPrice: number, currency: string | null, at: number): number {
  let start = at;
  for (let i = prior.length - 1; i >= 0; i--) {
    const span = prior[i] as PriceSpan;
    const discounted = span.price !== null && span.list_price !== null && span.currency === currency && !sameOrAbove(span.price, listPrice);
    if (!discounted) break;
    start = span.from;
  }
  return start;
}
