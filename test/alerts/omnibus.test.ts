// The suspicious-discount rule (EU Omnibus Directive) as a table over histories: which "was" prices the history supports.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Firing } from '../../src/alerts/rules/firing.js';
import type { OmnibusTest, OmnibusVerdict } from '../../src/alerts/rules/omnibus-check.js';
import { evaluateRule } from '../../src/alerts/rules/rule-evaluation.js';
import { PRODUCT, day, rule, timeline, type Sighting } from './timeline.js';

const honest = rule({ type: 'suspicious_discount' });

function judge(sightings: Sighting[], days?: number): Firing | null {
  const { history, events } = timeline(sightings);
  const event = events.at(-1)!;
  const r = days === undefined ? honest : rule({ type: 'suspicious_discount', days });
  return evaluateRule(r, { event, product: PRODUCT, history, now: event.created_at });
}

const verdictOf = (firing: Firing | null): OmnibusVerdict => {
  assert.ok(firing !== null, 'expected a firing');
  assert.equal(firing.reason.type, 'suspicious_discount');
  return (firing.reason as { verdict: OmnibusVerdict }).verdict;
};
const failedTests = (firing: Firing | null): OmnibusTest[] => verdictOf(firing).failed.map((f) => f.test);

const s = (at: number, price: number, list_price: number | null = null, currency = 'EUR'): Sighting => ({ at, price, list_price, currency });

type Case = [name: string, sightings: Sighting[], failed: OmnibusTest[] | null];

const cases: Case[] = [
  ['a genuine reduction: 100 for two months, then 80 "was 100"', [s(-60, 100), s(0, 80, 100)], null],
  ['a "was" price never charged in the last 30 days', [s(-60, 80), s(0, 75, 120)], ['list_price_never_charged', 'was_price_above_prior_low']],
  ['a price raised just before the "sale"', [s(-60, 80), s(-3, 100), s(0, 80, 100)], ['was_price_above_prior_low']],
  ['a genuine reduction that deepens: still measured from where it began', [s(-90, 100), s(-20, 80, 100), s(0, 75, 100)], null],
  ['an earlier "sale" is not where this one began', [s(-200, 90), s(-100, 80, 100), s(-60, 100), s(0, 80, 100)], null],
  ['a "sale" older than 30 days: the "was" price is no longer a price charged', [s(-100, 100), s(-45, 80, 100), s(0, 79, 100)], ['list_price_never_charged']],
  ['the "was" price charged one day in the period counts as charged', [s(-60, 80), s(-40, 100), s(-39, 80), s(0, 70, 80)], null],
  ['a raise inside the 30 days before the reduction is caught', [s(-60, 90), s(-20, 100), s(0, 90, 100)], ['was_price_above_prior_low']],
  ['prices in another currency are not evidence', [s(-60, 100, null, 'USD'), s(-40, 80), s(0, 70, 100)], ['list_price_never_charged', 'was_price_above_prior_low']],
  ['a cent of float noise is the same price', [s(-60, 99.99), s(0, 80, 99.990000001)], null],
  ['no list price shown: no claim to test', [s(-60, 80), s(0, 75)], null],
  ['a list price not above the price: no reduction announced', [s(-60, 80), s(0, 75, 75)], null],
  ['a history of 10 days cannot convict', [s(-10, 80), s(0, 75, 120)], null],
];

for (const [name, sightings, failed] of cases) {
  test(`omnibus: ${name}`, () => {
    const firing = judge(sightings);
    if (failed === null) assert.equal(firing, null, firing === null ? '' : firing.why);
    else assert.deepEqual(failedTests(firing), failed);
  });
}

test('omnibus: "never charged" names the highest price charged and the period, with the history behind it', () => {
  const firing = judge([s(-60, 80), s(-10, 85), s(0, 75, 120)]);
  const verdict = verdictOf(firing);
  const [never] = verdict.failed;
  assert.equal(never?.test, 'list_price_never_charged');
  assert.equal(never?.reference_price, 85);
  assert.equal(never?.reference_at, day(-10));
  assert.deepEqual([never?.window_from, never?.window_to], [day(-30), day(0)]);
  assert.deepEqual(
    verdict.evidence.map((p) => [p.first_seen_at, p.price]),
    [
      [day(-60), 80],
      [day(-10), 85],
    ],
  );
  assert.match(firing!.why, /highest price charged in the last 30 days was 85/);
});

test('omnibus: "raised before the sale" names the lowest price of the 30 days before the reduction and when it began', () => {
  const verdict = verdictOf(judge([s(-60, 80), s(-3, 100), s(0, 80, 100)]));
  assert.equal(verdict.reduction_started_at, day(0));
  const [above] = verdict.failed;
  assert.deepEqual([above?.reference_price, above?.reference_at], [80, day(-60)]);
  assert.deepEqual([above?.window_from, above?.window_to], [day(-30), day(0)]);
});

test('omnibus: the reduction begins where the run of prices below the "was" price began', () => {
  const verdict = verdictOf(judge([s(-100, 100), s(-45, 80, 100), s(0, 79, 100)]));
  assert.equal(verdict.reduction_started_at, day(-45));
  assert.deepEqual(verdict.inconclusive, []);
});

test('omnibus: a test the history cannot reach is inconclusive, the other still decides', () => {
  // 40 days of history: enough for "the last 30 days", not for "30 days before a reduction 20 days ago".
  const verdict = verdictOf(judge([s(-40, 80), s(-20, 70, 120), s(0, 69, 120)]));
  assert.deepEqual(
    verdict.failed.map((f) => f.test),
    ['list_price_never_charged'],
  );
  assert.deepEqual(verdict.inconclusive, ['was_price_above_prior_low']);
});

test('omnibus: a longer period looks further back', () => {
  // "Was 100", last charged 45 days ago: never charged in 30 days, but charged within 60.
  const sightings = [s(-100, 100), s(-45, 80, 100), s(0, 79, 100)];
  assert.deepEqual(failedTests(judge(sightings)), ['list_price_never_charged']);
  assert.equal(judge(sightings, 60), null);
});
