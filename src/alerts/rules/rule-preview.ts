// Rule preview, pure: replays stored histories and events through a rule -> "would have fired N times in the last D days", with those firings.
import type { HistoryPoint } from '../../tracking/tracking-store.js';
import type { AlertRule } from './alert-rule-schema.js';
import type { AlertEvent, Firing, ProductContext } from './firing.js';
import { DAY_MS, iso, time } from './price-history.js';
import { evaluateRule } from './rule-evaluation.js';

/** One product's stored history and its events (any order; other products' events are skipped). */
export interface PreviewItem {
  product: ProductContext;
  history: readonly HistoryPoint[];
  events: readonly AlertEvent[];
}

export interface RulePreview {
  from: string;
  to: string;
  days: number;
  count: number;
  /** Oldest first. */
  firings: Firing[];
  /** Products that would have fired, with how often. */
  products: Array<{ product_id: number; count: number }>;
}

/**
 * What `rule` would have done over the last `days` days before `now`: each event in that period is
 * evaluated as it would have been when it happened (the history as it stood then, the cool-down
 * from the firings replayed before it). A disabled rule is previewed as if enabled: a preview is
 * how one decides to enable it.
 */
export function previewRule(rule: AlertRule, items: readonly PreviewItem[], options: { now: string; days: number }): RulePreview {
  const to = time(options.now);
  const from = to - options.days * DAY_MS;
  const live: AlertRule = { ...rule, enabled: true };
  const firings: Firing[] = [];
  const products: RulePreview['products'] = [];
  for (const item of items) {
    const events = item.events
      .filter((e) => e.product_id === item.product.id && time(e.created_at) >= from && time(e.created_at) <= to)
      .sort((a, b) => time(a.created_at) - time(b.created_at) || a.id - b.id);
    let lastFiring: { fired_at: string } | null = null;
    let count = 0;
    for (const event of events) {
      // The whole history can be given: evaluateRule reads only the states up to the event's own.
      const firing = evaluateRule(live, { event, product: item.product, history: item.history, lastFiring, now: event.created_at });
      if (firing === null) continue;
      firings.push(firing);
      lastFiring = { fired_at: firing.fired_at };
      count += 1;
    }
    if (count > 0) products.push({ product_id: item.product.id, count });
  }
  firings.sort((a, b) => time(a.event_at) - time(b.event_at) || a.event_id - b.event_id);
  return { from: iso(from), to: iso(to), days: options.days, count: firings.length, firings, products };
}
