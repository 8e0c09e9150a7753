// Test helper: a product's price timeline -> the history points and change events the tracker would have recorded for it.
import type { AlertRule, RuleCondition } from '../../src/alerts/rules/alert-rule-schema.js';
import type { AlertEvent, ProductContext } from '../../src/alerts/rules/firing.js';
import { detectChanges, isChange, type Snapshot } from '../../src/tracking/change-detection.js';
import type { HistoryPoint } from '../../src/tracking/tracking-store.js';

export const DAY = 86_400_000;
/** Day 0 of every timeline; "now" in the tests is some day after it. */
export const T0 = Date.parse('2026-03-01T12:00:00.000Z');
export const day = (n: number): string => new Date(T0 + n * DAY).toISOString();

/** One sighting: on day `at`, the page showed these values (currency EUR and in stock unless said). */
export interface Sighting {
  at: number;
  price: number | null;
  list_price?: number | null;
  availability?: string | null;
  currency?: string | null;
}

export interface Timeline {
  history: HistoryPoint[];
  events: AlertEvent[];
}

export const PRODUCT: ProductContext = { id: 7, title: 'Espresso machine', url: 'https://shop.example/p/7', tags: ['kitchen'] };

/**
 * Runs the sightings through the tracker's own change detection: a sighting that changes nothing
 * only extends the current state (no point, no event), as in production.
 */
export function timeline(sightings: readonly Sighting[], productId = PRODUCT.id): Timeline {
  const history: HistoryPoint[] = [];
  const events: AlertEvent[] = [];
  let before: Snapshot | null = null;
  // Ids unique across products, as in the feed.
  let nextId = productId * 1000 + 1;
  for (const s of sightings) {
    const seen: Snapshot = {
      price: s.price,
      currency: s.currency === undefined ? 'EUR' : s.currency,
      list_price: s.list_price ?? null,
      availability: s.availability === undefined ? 'in_stock' : s.availability,
    };
    const at = day(s.at);
    const current = history.at(-1);
    if (!isChange(before, seen) && current !== undefined) {
      current.last_seen_at = at;
      continue;
    }
    for (const change of detectChanges(before, seen)) {
      events.push({ id: nextId++, type: change.type, product_id: productId, source: 'https://shop.example/list', data: { ...change.data, via: 'scrape' }, created_at: at });
    }
    history.push({ ...seen, first_seen_at: at, last_seen_at: at, first_run: null, last_run: null, source: 'scrape' });
    before = seen;
  }
  return { history, events };
}

/** A product.gone event on day `at`. */
export function goneEvent(at: number, id = 999): AlertEvent {
  return { id, type: 'product.gone', product_id: PRODUCT.id, source: 'https://shop.example/list', data: { missed_runs: 3, source_url: PRODUCT.url }, created_at: day(at) };
}

export function rule(condition: RuleCondition, more: Partial<AlertRule> = {}): AlertRule {
  return {
    id: '6f1c2b9e-8d4a-4b7e-9c3d-2a1b0c9d8e7f',
    name: 'test rule',
    scope: { type: 'all' },
    condition,
    cooldown_minutes: 0,
    digest: 'immediate',
    channel_ids: [],
    enabled: true,
    ...more,
  };
}
