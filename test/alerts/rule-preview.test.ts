// Rule preview: replaying stored histories says how often a rule would have fired in the last D days, and which firings.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { previewRule } from '../../src/alerts/rules/rule-preview.js';
import { PRODUCT, day, rule, timeline } from './timeline.js';

// Three drops to or below 200 in the last 30 days (days 10, 20, 25), one before them (day -5), rises between.
const watched = timeline([
  { at: -40, price: 250 },
  { at: -5, price: 199 },
  { at: 0, price: 260 },
  { at: 10, price: 195 },
  { at: 12, price: 195 },
  { at: 15, price: 240 },
  { at: 20, price: 180 },
  { at: 25, price: 170 },
]);
const other = { ...PRODUCT, id: 8, title: 'Grinder' };
const otherTimeline = timeline(
  [
    { at: 0, price: 300 },
    { at: 20, price: 150 },
  ],
  8,
);
const items = [
  { product: PRODUCT, ...watched },
  { product: other, ...otherTimeline },
];
const below200 = rule({ type: 'price_at_or_below', target: 200 });
const now = day(26);

test('preview: "would have fired 4 times in the last 30 days", oldest first, across products', () => {
  const preview = previewRule(below200, items, { now, days: 30 });
  assert.equal(preview.count, 4);
  assert.deepEqual(
    preview.firings.map((f) => [f.product.id, f.event_at, f.after?.price]),
    [
      [7, day(10), 195],
      [7, day(20), 180],
      [8, day(20), 150],
      [7, day(25), 170],
    ],
  );
  assert.deepEqual(preview.products, [
    { product_id: 7, count: 3 },
    { product_id: 8, count: 1 },
  ]);
  assert.deepEqual([preview.from, preview.to, preview.days], [day(-4), now, 30]);
});

test('preview: a longer period reaches the older firing', () => {
  assert.equal(previewRule(below200, items, { now, days: 40 }).count, 5);
});

test('preview: the cool-down applies between replayed firings', () => {
  const weekly = { ...below200, cooldown_minutes: 7 * 24 * 60 };
  const preview = previewRule(weekly, items, { now, days: 30 });
  // Product 7: day 10 fires, day 20 fires (10 days later), day 25 is within a week of day 20.
  assert.deepEqual(
    preview.firings.filter((f) => f.product.id === 7).map((f) => f.event_at),
    [day(10), day(20)],
  );
});

test('preview: each event is judged on the history as it stood then, not on later prices', () => {
  // At day 20 the price 180 was the lowest in 30 days; the later 170 must not take that away.
  const lowest = rule({ type: 'lowest_in_days', days: 30 });
  const preview = previewRule(lowest, [{ product: PRODUCT, ...watched }], { now, days: 30 });
  assert.deepEqual(
    preview.firings.map((f) => [f.event_at, f.after?.price]),
    [
      [day(10), 195],
      [day(20), 180],
      [day(25), 170],
    ],
  );
});

test('preview: a disabled rule is previewed as if enabled; events of other products are ignored', () => {
  const preview = previewRule({ ...below200, enabled: false }, [{ product: PRODUCT, history: watched.history, events: [...watched.events, ...otherTimeline.events] }], {
    now,
    days: 30,
  });
  assert.equal(preview.count, 3);
});

test('preview: nothing in the period is zero firings', () => {
  const preview = previewRule(below200, items, { now: day(200), days: 30 });
  assert.deepEqual([preview.count, preview.firings, preview.products], [0, [], []]);
});
