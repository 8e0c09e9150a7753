// What a rule evaluation reads (event, product, history) and what a firing records: the shapes shared by evaluation, preview and rendering.
import type { HistoryPoint, StoredEvent } from '../../tracking/tracking-store.js';
import type { ConditionType, DigestMode } from './alert-rule-schema.js';
import type { OmnibusVerdict } from './omnibus-check.js';

/** The product an event is about, as far as scope and messages need it. */
export interface ProductContext {
  id: number;
  title: string;
  /** The product page (source_url); its host is what a `site` scope matches. */
  url: string | null;
  tags: readonly string[];
}

/** One change event from the feed (a StoredEvent; `run_id` is not needed). */
export type AlertEvent = Pick<StoredEvent, 'id' | 'type' | 'product_id' | 'source' | 'data' | 'created_at'>;

export interface EvaluationInput {
  event: AlertEvent;
  product: ProductContext;
  /**
   * The product's recorded states, oldest first (Tracker.history). It may include the state the
   * event made and later ones: only states that began before the event count as "before".
   */
  history: readonly HistoryPoint[];
  /** The last firing of this rule for this product, for the cool-down. */
  lastFiring?: { fired_at: string } | null;
  /** The evaluation time (ISO); the cool-down is measured to it. Passed in so evaluation is pure. */
  now: string;
}

/** The values a message shows before and after a change. */
export interface StateValues {
  price: number | null;
  currency: string | null;
  list_price: number | null;
  availability: string | null;
}

export type FiringReason =
  | { type: 'price_at_or_below'; target: number; currency: string | null }
  | {
      type: 'price_drop';
      baseline: 'previous' | 'highest';
      /** The price compared with, and when it began. */
      baseline_price: number;
      baseline_at: string;
      days: number | null;
      drop: number;
      drop_percent: number;
    }
  | { type: 'lowest_in_days'; days: number; previous_low: number; previous_low_at: string; history_since: string }
  | { type: 'back_in_stock' | 'out_of_stock' | 'availability_changed' | 'price_changed' | 'product_gone' }
  | { type: 'suspicious_discount'; verdict: OmnibusVerdict };

export interface ChartPoint {
  at: string;
  price: number;
}

export interface Firing {
  /**
   * `rule:product:event`: one firing per rule, product and change. A unique index on it is what
   * keeps two workers evaluating the same event from both recording (and sending) it.
   */
  dedupe_key: string;
  rule_id: string;
  rule_name: string;
  condition: ConditionType;
  product: ProductContext;
  event_id: number;
  event_type: string;
  event_at: string;
  fired_at: string;
  before: StateValues | null;
  after: StateValues | null;
  reason: FiringReason;
  /** One sentence on why it fired, without the product's title (plain text). */
  why: string;
  /** Prices in the current currency up to the change, oldest first: the message's chart. */
  chart: ChartPoint[];
  digest: DigestMode;
  channel_ids: string[];
}
