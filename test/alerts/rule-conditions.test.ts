// Every rule condition as a table over price histories: the last change fires the rule, or it does not.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { RuleCondition } from '../../src/alerts/rules/alert-rule-schema.js';
import type { Firing } from '../../src/alerts/rules/firing.js';
import { evaluateRule } from '../../src/alerts/rules/rule-evaluation.js';
import { PRODUCT, day, goneEvent, rule, timeline, type Sighting } from './timeline.js';

/** Evaluates the condition on the last event the sightings make. */
function lastChange(condition: RuleCondition, sightings: Sighting[]): Firing | null {
  const { history, events } = timeline(sightings);
  const event = events.at(-1);
  assert.ok(event, 'the timeline makes at least one event');
  return evaluateRule(rule(condition), { event, product: PRODUCT, history, now: event.created_at });
}

const s = (at: number, price: number | null, more: Partial<Sighting> = {}): Sighting => ({ at, price, ...more });
const below200: RuleCondition = { type: 'price_at_or_below', target: 200 };

type Case = [name: string, condition: RuleCondition, sightings: Sighting[], fires: boolean, check?: (f: Firing) => void];

const cases: Case[] = [
  // price at or below a target
  ['target: a drop below it fires', below200, [s(0, 250), s(1, 199)], true, (f) => assert.deepEqual(f.reason, { type: 'price_at_or_below', target: 200, currency: 'EUR' })],
  ['target: landing exactly on it fires', below200, [s(0, 250), s(1, 200)], true],
  ['target: a cent above it does not', below200, [s(0, 250), s(1, 200.01)], false],
  ['target: a further drop below it fires again', below200, [s(0, 190), s(1, 180)], true],
  ['target: a rise that stays below it does not', below200, [s(0, 180), s(1, 190)], false],
  ['target: a product first seen below it fires', below200, [s(0, 150)], true, (f) => assert.equal(f.before, null)],
  ['target: a product first seen above it does not', below200, [s(0, 250)], false],
  ['target: a price that disappears does not', below200, [s(0, 150), s(1, null)], false],
  ['target: in another currency than the rule names, no', { type: 'price_at_or_below', target: 200, currency: 'GBP' }, [s(0, 250), s(1, 150)], false],
  ['target: in the currency the rule names, yes', { type: 'price_at_or_below', target: 200, currency: 'EUR' }, [s(0, 250), s(1, 150)], true],
  ['target: a switch of currency compares nothing across it', below200, [s(0, 150), s(1, 170, { currency: 'GBP' })], true, (f) => assert.equal(f.after?.currency, 'GBP')],
  // price drop from the previous price
  [
    'drop 10 %: exactly 10 % fires',
    { type: 'price_drop', baseline: 'previous', min_percent: 10 },
    [s(0, 100), s(1, 90)],
    true,
    (f) => assert.equal((f.reason as { drop_percent: number }).drop_percent, 10),
  ],
  ['drop 10 %: 9.99 % does not', { type: 'price_drop', baseline: 'previous', min_percent: 10 }, [s(0, 100), s(1, 90.01)], false],
  ['drop 10 %: a rise does not', { type: 'price_drop', baseline: 'previous', min_percent: 10 }, [s(0, 100), s(1, 120)], false],
  ['drop 5 units: exactly 5 fires', { type: 'price_drop', baseline: 'previous', min_amount: 5 }, [s(0, 100), s(1, 95)], true],
  ['drop 5 units: 4.99 does not', { type: 'price_drop', baseline: 'previous', min_amount: 5 }, [s(0, 100), s(1, 95.01)], false],
  ['drop 50 % or 5 units: either threshold is enough', { type: 'price_drop', baseline: 'previous', min_percent: 50, min_amount: 5 }, [s(0, 100), s(1, 94)], true],
  ['drop: not across a change of currency', { type: 'price_drop', baseline: 'previous', min_percent: 10 }, [s(0, 100), s(1, 50, { currency: 'GBP' })], false],
  // price drop from the highest price of the last D days
  [
    'drop from highest: 15 % below the 30-day high does not reach 20 %',
    { type: 'price_drop', baseline: 'highest', days: 30, min_percent: 20 },
    [s(0, 100), s(10, 90), s(20, 85)],
    false,
  ],
  [
    'drop from highest: 20 % below the 30-day high fires',
    { type: 'price_drop', baseline: 'highest', days: 30, min_percent: 20 },
    [s(0, 100), s(10, 90), s(20, 80)],
    true,
    (f) => {
      assert.equal((f.reason as { baseline_price: number }).baseline_price, 100);
      assert.equal((f.reason as { baseline_at: string }).baseline_at, day(0));
    },
  ],
  [
    'drop from highest: a high older than the window does not count',
    { type: 'price_drop', baseline: 'highest', days: 30, min_percent: 50 },
    [s(-40, 200), s(-35, 100), s(0, 80)],
    false,
  ],
  [
    'drop from highest: a longer window reaches it',
    { type: 'price_drop', baseline: 'highest', days: 60, min_percent: 50 },
    [s(-40, 200), s(-35, 100), s(0, 80)],
    true,
    (f) => assert.equal((f.reason as { drop_percent: number }).drop_percent, 60),
  ],
  ['drop from highest: default window is 30 days', { type: 'price_drop', baseline: 'highest', min_percent: 50 }, [s(-40, 200), s(-35, 100), s(0, 80)], false],
  ['drop from highest: a rise never fires even below the high', { type: 'price_drop', baseline: 'highest', days: 30, min_percent: 10 }, [s(0, 100), s(5, 50), s(10, 60)], false],
  // lowest price in D days
  [
    'lowest in 30 days: below the old low fires',
    { type: 'lowest_in_days', days: 30 },
    [s(0, 100), s(10, 90), s(20, 95), s(25, 89)],
    true,
    (f) => {
      assert.equal((f.reason as { previous_low: number }).previous_low, 90);
      assert.equal((f.reason as { previous_low_at: string }).previous_low_at, day(10));
    },
  ],
  ['lowest in 30 days: equalling the old low does not', { type: 'lowest_in_days', days: 30 }, [s(0, 100), s(10, 90), s(20, 95), s(25, 90)], false],
  ['lowest in 30 days: a low older than the window does not count', { type: 'lowest_in_days', days: 30 }, [s(-60, 80), s(-40, 100), s(0, 90)], true],
  ['lowest in 90 days: that older low does', { type: 'lowest_in_days', days: 90 }, [s(-60, 80), s(-40, 100), s(0, 90)], false],
  [
    'lowest in 90 days: a young history says where it begins',
    { type: 'lowest_in_days', days: 90 },
    [s(-5, 100), s(0, 90)],
    true,
    (f) => assert.equal((f.reason as { history_since: string }).history_since, day(-5)),
  ],
  ['lowest: a first sighting is no new low', { type: 'lowest_in_days', days: 30 }, [s(0, 10)], false],
  // availability
  ['back in stock: out of stock -> in stock fires', { type: 'back_in_stock' }, [s(0, 10, { availability: 'out_of_stock' }), s(1, 10)], true],
  ['back in stock: discontinued -> preorder fires', { type: 'back_in_stock' }, [s(0, 10, { availability: 'discontinued' }), s(1, 10, { availability: 'preorder' })], true],
  ['back in stock: in stock -> limited does not', { type: 'back_in_stock' }, [s(0, 10), s(1, 10, { availability: 'limited' })], false],
  [
    'out of stock: in stock -> out of stock fires',
    { type: 'out_of_stock' },
    [s(0, 10), s(1, 10, { availability: 'out_of_stock' })],
    true,
    (f) => {
      assert.equal(f.before?.availability, 'in_stock');
      assert.equal(f.after?.availability, 'out_of_stock');
    },
  ],
  [
    'out of stock: out of stock -> discontinued does not',
    { type: 'out_of_stock' },
    [s(0, 10, { availability: 'out_of_stock' }), s(1, 10, { availability: 'discontinued' })],
    false,
  ],
  ['any availability change: in stock -> limited fires', { type: 'availability_changed' }, [s(0, 10), s(1, 10, { availability: 'limited' })], true],
  ['any availability change: a price change does not', { type: 'availability_changed' }, [s(0, 10), s(1, 11)], false],
  // any price change
  ['any price change: a rise fires', { type: 'price_changed' }, [s(0, 10), s(1, 11)], true, (f) => assert.deepEqual([f.before?.price, f.after?.price], [10, 11])],
  ['any price change: a stock change does not', { type: 'price_changed' }, [s(0, 10), s(1, 10, { availability: 'limited' })], false],
];

for (const [name, condition, sightings, fires, check] of cases) {
  test(`${name}`, () => {
    const firing = lastChange(condition, sightings);
    assert.equal(firing !== null, fires, firing === null ? 'did not fire' : `fired: ${firing.why}`);
    if (firing !== null) {
      assert.equal(firing.condition, condition.type);
      check?.(firing);
    }
  });
}

test('product gone: fires on product.gone, and nothing else fires it', () => {
  const { history, events } = timeline([s(0, 10), s(1, 12)]);
  const gone = rule({ type: 'product_gone' });
  const firing = evaluateRule(gone, { event: goneEvent(5), product: PRODUCT, history, now: day(5) });
  assert.equal(firing?.condition, 'product_gone');
  assert.equal(firing?.after?.price, 12, 'the last known state is shown');
  for (const event of events) assert.equal(evaluateRule(gone, { event, product: PRODUCT, history, now: event.created_at }), null);
});

test('a firing says why in words, with the values before and after', () => {
  const firing = lastChange({ type: 'price_drop', baseline: 'previous', min_percent: 10 }, [s(0, 250), s(1, 180)]);
  assert.equal(firing?.why, 'The price dropped by €70.00 (28 %) from the previous price, €250.00, to €180.00.');
  assert.deepEqual(firing?.before, { price: 250, currency: 'EUR', list_price: null, availability: 'in_stock' });
  assert.deepEqual(firing?.after, { price: 180, currency: 'EUR', list_price: null, availability: 'in_stock' });
});

test("the chart holds 90 days of prices up to the change, in the change's currency", () => {
  const firing = lastChange(below200, [s(-200, 300), s(-50, 99, { currency: 'USD' }), s(-40, 250), s(-10, 220), s(0, 190)]);
  assert.deepEqual(firing?.chart, [
    // In force when the chart's 90 days begin: shown from there.
    { at: day(-90), price: 300 },
    { at: day(-40), price: 250 },
    { at: day(-10), price: 220 },
    { at: day(0), price: 190 },
  ]);
});
