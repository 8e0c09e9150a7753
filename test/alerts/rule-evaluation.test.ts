// Rule evaluation around the condition: scope, cool-down, once per change, determinism, and the rule schema.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Ajv } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { AlertRuleCreate, ruleProblem, type RuleScope } from '../../src/alerts/rules/alert-rule-schema.js';
import type { ProductContext } from '../../src/alerts/rules/firing.js';
import { evaluateRule } from '../../src/alerts/rules/rule-evaluation.js';
import { PRODUCT, day, rule, timeline } from './timeline.js';

const { history, events } = timeline([
  { at: 0, price: 250 },
  { at: 1, price: 190 },
]);
const drop = events.at(-1)!;
const below200 = rule({ type: 'price_at_or_below', target: 200 });

const scopeCases: Array<[string, RuleScope, Partial<ProductContext>, boolean]> = [
  ['all', { type: 'all' }, {}, true],
  ['the product', { type: 'product', product_id: 7 }, {}, true],
  ['another product', { type: 'product', product_id: 8 }, {}, false],
  ['a tag it carries', { type: 'tag', tag: 'kitchen' }, {}, true],
  ['a tag it does not carry', { type: 'tag', tag: 'garden' }, {}, false],
  ['the source its run started from', { type: 'source', source: 'https://shop.example/list' }, {}, true],
  ['another source', { type: 'source', source: 'https://shop.example/other' }, {}, false],
  ['its site', { type: 'site', site: 'shop.example' }, {}, true],
  ['a parent domain of its site', { type: 'site', site: 'example' }, {}, true],
  ['its site, on a subdomain', { type: 'site', site: 'shop.example' }, { url: 'https://www.shop.example/p/7' }, true],
  ['a site that merely ends the same way', { type: 'site', site: 'shop.example' }, { url: 'https://evilshop.example/p/7' }, false],
  ['a site, for a product without a URL: the run source decides', { type: 'site', site: 'shop.example' }, { url: null }, true],
];
for (const [name, scope, product, fires] of scopeCases) {
  test(`scope ${scope.type}: ${name} ${fires ? 'fires' : 'does not'}`, () => {
    const firing = evaluateRule(rule(below200.condition, { scope }), { event: drop, product: { ...PRODUCT, ...product }, history, now: drop.created_at });
    assert.equal(firing !== null, fires);
  });
}

test('an event about another product than the one given never fires', () => {
  assert.equal(evaluateRule(below200, { event: { ...drop, product_id: 8 }, product: PRODUCT, history, now: drop.created_at }), null);
});

test('a disabled rule never fires', () => {
  assert.equal(evaluateRule({ ...below200, enabled: false }, { event: drop, product: PRODUCT, history, now: drop.created_at }), null);
});

test('cool-down: held back until it has passed since the last firing, to the minute', () => {
  const cooled = { ...below200, cooldown_minutes: 60 };
  const at = (minutesAfter: number) => new Date(Date.parse(day(1)) + minutesAfter * 60_000).toISOString();
  const lastFiring = { fired_at: at(0) };
  const evaluate = (now: string) => evaluateRule(cooled, { event: drop, product: PRODUCT, history, lastFiring, now });
  assert.equal(evaluate(at(59)), null, '59 minutes later: still cooling down');
  assert.notEqual(evaluate(at(60)), null, '60 minutes later: fires');
  assert.equal(evaluateRule(cooled, { event: drop, product: PRODUCT, history, lastFiring: { fired_at: at(120) }, now: at(60) }), null, 'a last firing after now holds back');
  assert.notEqual(evaluateRule(below200, { event: drop, product: PRODUCT, history, lastFiring, now: at(0) }), null, 'no cool-down: fires at once');
});

test('the same event evaluated twice gives the same firing and dedupe key; the order of the history does not matter', () => {
  const input = { event: drop, product: PRODUCT, history, now: day(2) };
  const first = evaluateRule(below200, input);
  const again = evaluateRule(below200, { ...input, history: [...history].reverse() });
  assert.deepEqual(again, first);
  assert.equal(first?.dedupe_key, `${below200.id}:7:${drop.id}`);
  assert.equal(first?.fired_at, day(2));
  assert.equal(first?.event_at, day(1));
});

test('a history that already holds later states judges the change as it was', () => {
  const later = timeline([
    { at: 0, price: 250 },
    { at: 1, price: 190 },
    { at: 2, price: 300 },
  ]);
  const firing = evaluateRule(below200, { event: later.events[1]!, product: PRODUCT, history: later.history, now: day(3) });
  assert.deepEqual([firing?.before?.price, firing?.after?.price], [250, 190]);
  assert.equal(firing?.chart.at(-1)?.price, 190);
});

test('an unchanged re-scrape makes no event, so nothing can fire twice for one change', () => {
  const rescraped = timeline([
    { at: 0, price: 250 },
    { at: 1, price: 190 },
    { at: 2, price: 190 },
    { at: 3, price: 190 },
  ]);
  assert.equal(rescraped.events.length, 2);
  assert.equal(rescraped.history.length, 2);
  const firings = rescraped.events.map((event) => evaluateRule(below200, { event, product: PRODUCT, history: rescraped.history, now: day(4) }));
  assert.equal(firings.filter((f) => f !== null).length, 1);
});

const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;
const validate = addFormats(new Ajv({ strict: false, useDefaults: true })).compile(AlertRuleCreate);

test('schema: a rule with the documented fields is valid, and defaults fill cool-down, digest and enabled', () => {
  const body: Record<string, unknown> = {
    name: 'Espresso under 200',
    scope: { type: 'tag', tag: 'kitchen' },
    condition: { type: 'price_at_or_below', target: 200, currency: 'EUR' },
    channel_ids: ['0b8d7e1c-3f4a-4c39-9d7e-5a6b7c8d9e0f'],
  };
  assert.equal(validate(body), true, JSON.stringify(validate.errors));
  assert.deepEqual([body.cooldown_minutes, body.digest, body.enabled], [60, 'immediate', true]);
});

const invalid: Array<[string, Record<string, unknown>]> = [
  ['an unknown condition', { type: 'price_exploded' }],
  ['a target of 0', { type: 'price_at_or_below', target: 0 }],
  ['a currency in lower case', { type: 'price_at_or_below', target: 10, currency: 'eur' }],
  ['a drop of more than 100 %', { type: 'price_drop', baseline: 'previous', min_percent: 120 }],
  ['an Omnibus period under 30 days', { type: 'suspicious_discount', days: 14 }],
  ['an extra field', { type: 'back_in_stock', target: 3 }],
];
for (const [name, condition] of invalid) {
  test(`schema: ${name} is refused`, () => {
    assert.equal(validate({ name: 'r', scope: { type: 'all' }, condition, channel_ids: [] }), false);
  });
}

test('schema: a drop without a threshold is named by ruleProblem', () => {
  assert.match(ruleProblem({ condition: { type: 'price_drop', baseline: 'previous' } }) ?? '', /min_percent or min_amount/);
  assert.equal(ruleProblem({ condition: { type: 'price_drop', baseline: 'highest', min_amount: 3 } }), null);
  assert.match(ruleProblem({ condition: { type: 'price_drop', baseline: 'previous', min_amount: 3, days: 9 } }) ?? '', /baseline "highest"/);
});
