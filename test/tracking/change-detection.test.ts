// Change detection: what a difference between two sightings means, as a table.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { detectChanges, isChange, type Snapshot } from '../../src/tracking/change-detection.js';

const at = (price: number | null, availability: string | null = 'in_stock', more: Partial<Snapshot> = {}): Snapshot => ({
  price,
  currency: 'GBP',
  list_price: null,
  availability,
  ...more,
});

test('a new product is one product.created event with its values', () => {
  assert.deepEqual(detectChanges(null, at(20)), [{ type: 'product.created', data: at(20) }]);
  assert.equal(isChange(null, at(20)), true);
});

test('the same values again are no event and no change', () => {
  assert.deepEqual(detectChanges(at(20), at(20)), []);
  assert.equal(isChange(at(20), at(20)), false);
});

const priceCases: Array<[string, Snapshot, Snapshot, Record<string, unknown>]> = [
  ['a drop', at(20), at(15), { old: 20, new: 15, change: -5, change_percent: -25 }],
  ['a rise', at(15), at(18.75), { old: 15, new: 18.75, change: 3.75, change_percent: 25 }],
  ['cents stay exact', at(0.3), at(0.1), { old: 0.3, new: 0.1, change: -0.2, change_percent: -66.67 }],
  ['from zero: no percent', at(0), at(5), { old: 0, new: 5, change: 5, change_percent: null }],
  ['a price that disappears', at(9.99), at(null), { old: 9.99, new: null, change: null, change_percent: null }],
  ['a price that appears', at(null), at(9.99), { old: null, new: 9.99, change: null, change_percent: null }],
];
for (const [name, before, seen, expected] of priceCases) {
  test(`price.changed: ${name}`, () => {
    const [event, ...rest] = detectChanges(before, seen);
    assert.equal(rest.length, 0);
    assert.equal(event?.type, 'price.changed');
    assert.deepEqual({ ...event!.data, currency: undefined, list_price: undefined }, { ...expected, currency: undefined, list_price: undefined });
  });
}

test('price.changed carries the currency and the list price seen', () => {
  const [event] = detectChanges(at(20, 'in_stock', { list_price: 20 }), at(15, 'in_stock', { list_price: 20 }));
  assert.equal(event?.type, 'price.changed');
  assert.equal((event!.data as { currency: string }).currency, 'GBP');
  assert.equal((event!.data as { list_price: number }).list_price, 20);
});

test('a change of currency at the same amount is a price change', () => {
  const [event] = detectChanges(at(20), at(20, 'in_stock', { currency: 'EUR' }));
  assert.equal(event?.type, 'price.changed');
  assert.equal((event!.data as { currency: string }).currency, 'EUR');
});

test('a list price alone changing is history but no event', () => {
  const before = at(15, 'in_stock', { list_price: 20 });
  const seen = at(15, 'in_stock', { list_price: null });
  assert.deepEqual(detectChanges(before, seen), []);
  assert.equal(isChange(before, seen), true);
});

const stockCases: Array<[string | null, string | null, boolean]> = [
  ['in_stock', 'out_of_stock', false],
  ['out_of_stock', 'in_stock', true],
  ['out_of_stock', 'limited', true],
  ['discontinued', 'preorder', true],
  ['out_of_stock', 'backorder', true],
  ['in_stock', 'limited', false],
  [null, 'in_stock', false],
  ['out_of_stock', null, false],
];
for (const [old, now, backInStock] of stockCases) {
  test(`availability.changed ${old} -> ${now}: back_in_stock ${backInStock}`, () => {
    assert.deepEqual(detectChanges(at(10, old), at(10, now)), [{ type: 'availability.changed', data: { old, new: now, back_in_stock: backInStock } }]);
  });
}

test('price and stock changing together are two events, price first', () => {
  const events = detectChanges(at(10, 'out_of_stock'), at(8, 'in_stock'));
  assert.deepEqual(
    events.map((e) => e.type),
    ['price.changed', 'availability.changed'],
  );
});
