// Price history as time spans, pure: which price held when, and the lowest and highest of a period.
import type { HistoryPoint } from '../../tracking/tracking-store.js';

export const DAY_MS = 86_400_000;

/** One recorded state with the time it was in force. */
export interface PriceSpan {
  price: number | null;
  currency: string | null;
  list_price: number | null;
  availability: string | null;
  /** ms since the epoch: when the state began. */
  from: number;
  /** When the next state began (or the end asked for). */
  to: number;
  point: HistoryPoint;
}

/**
 * The states before `at`, each lasting until the next one began and the last until `at`. The tracker
 * stores change-only states, so a state is in force from its first sighting until a different one
 * is seen; the gap between its last sighting and the next state is counted as its own, since a
 * price nobody saw change did not change as far as anyone can say.
 */
export function spansBefore(history: readonly HistoryPoint[], at: number): PriceSpan[] {
  const prior = sortedPoints(history).filter((p) => time(p.first_seen_at) < at);
  return prior.map((point, index) => {
    const next = prior[index + 1];
    return {
      price: point.price,
      currency: point.currency,
      list_price: point.list_price,
      availability: point.availability,
      from: time(point.first_seen_at),
      to: next === undefined ? at : time(next.first_seen_at),
      point,
    };
  });
}

/** The spans that overlap the period [from, to), with a price in `currency`. */
export function pricedIn(spans: readonly PriceSpan[], from: number, to: number, currency: string | null): Array<PriceSpan & { price: number }> {
  return spans.filter((s): s is PriceSpan & { price: number } => s.price !== null && s.currency === currency && s.from < to && s.to > from);
}

/** The span with the lowest (or highest) price; the earliest one on a tie. */
export function extreme<T extends { price: number }>(spans: readonly T[], which: 'lowest' | 'highest'): T | undefined {
  let best: T | undefined;
  for (const span of spans) {
    if (best === undefined || (which === 'lowest' ? span.price < best.price : span.price > best.price)) best = span;
  }
  return best;
}

/** True when the history began at or before `from`: a period it covers whole. */
export function covers(spans: readonly PriceSpan[], from: number): boolean {
  const first = spans[0];
  return first !== undefined && first.from <= from;
}

/** Money compared in cents: 99.99 and 99.990000001 (float noise from NUMERIC -> float8) are the same price. */
export function sameOrAbove(a: number, b: number): boolean {
  return a - b > -0.005;
}

export function time(iso: string): number {
  const ms = Date.parse(iso);
  if (Number.isNaN(ms)) throw new RangeError(`Not a timestamp: ${iso}`);
  return ms;
}

export function iso(ms: number): string {
  return new Date(ms).toISOString();
}

/** Oldest first, as the tracker answers; sorted again so a caller's order cannot change a verdict. */
export function sortedPoints(history: readonly HistoryPoint[]): HistoryPoint[] {
  return [...history].sort((a, b) => time(a.first_seen_at) - time(b.first_seen_at));
}
