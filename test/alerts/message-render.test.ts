// Message rendering: hostile titles escaped and isolated in every form, the dashboard link, the chart, digests and their periods, which alerts are urgent.
import assert from 'node:assert/strict';
import { inflateSync } from 'node:zlib';
import { test } from 'node:test';
import { GotifyChannel, NtfyChannel } from '../../src/alerts/channels/channel-schema.js';
import { digestPeriod } from '../../src/alerts/delivery/digest-schedule.js';
import type { Firing } from '../../src/alerts/rules/firing.js';
import { cleanText } from '../../src/alerts/channels/hostile-text.js';
import { gotifyRequest } from '../../src/alerts/channels/gotify-channel.js';
import { renderDigest, renderFiring } from '../../src/alerts/channels/message-render.js';
import { ntfyRequest } from '../../src/alerts/channels/ntfy-channel.js';
import { priceChart, sparkline } from '../../src/alerts/channels/price-chart.js';
import { evaluateRule } from '../../src/alerts/rules/rule-evaluation.js';
import { PRODUCT, day, rule, timeline } from './timeline.js';

const HOSTILE = '<img src=x onerror=alert(1)> "Kaffee" \u202Egnp.exe\u202C \u2067مرحبا\n\rBcc: x@evil.test';
const options = { dashboardUrl: 'https://prices.example/base/' };

function firingFor(title: string, url: string | null = PRODUCT.url): Firing {
  const { history, events } = timeline([
    { at: -60, price: 100 },
    { at: -3, price: 120 },
    { at: 0, price: 100, list_price: 120 },
  ]);
  const event = events.at(-1)!;
  return evaluateRule(rule({ type: 'suspicious_discount' }), { event, product: { ...PRODUCT, title, url }, history, now: event.created_at })!;
}

test('a hostile title: no markup in the HTML, no controls or bidi overrides anywhere, isolated as a unit', () => {
  const message = renderFiring(firingFor(HOSTILE), options);
  assert.ok(!message.html.includes('<img src=x'), 'HTML from the title is escaped');
  assert.match(message.html, /<bdi>&#60;img src=x onerror=alert\(1\)&#62; &#34;Kaffee&#34;/);
  for (const form of [message.title, message.text, message.html, message.short]) {
    assert.doesNotMatch(form, /[\u202a-\u202e\u2066\u2067\r]/, 'no embedding, override or LRI/RLI from the page');
  }
  assert.ok(message.title.startsWith('Suspicious discount: \u2068'), 'the title is isolated (FSI ... PDI)');
  assert.ok(message.title.endsWith('\u2069'));
  assert.doesNotMatch(message.title, /\n/, 'one line: a newline in a title cannot start a header');
  assert.equal(message.product_title, cleanText(HOSTILE, 120));
});

test('links: the dashboard product page under the configured base; a non-http product URL is dropped', () => {
  const message = renderFiring(firingFor('Kettle', 'javascript:alert(1)'), options);
  assert.equal(message.dashboard_link, 'https://prices.example/ui/products/7');
  assert.equal(message.product_link, null);
  assert.ok(!message.html.includes('javascript:'));
  assert.ok(message.text.includes('Open in the dashboard: https://prices.example/ui/products/7'));
});

test('an Omnibus message says which test failed, with the recorded prices behind it', () => {
  const message = renderFiring(firingFor('Kettle'), options);
  const labels = message.facts.map((f) => f.label);
  assert.deepEqual(labels, ['Before', 'Now', 'Shown "was" price', 'Raised before the sale', 'Recorded prices']);
  assert.match(message.text, /Recorded prices: 2025-12-31 €100.00, 2026-02-26 €120.00/);
  assert.equal(message.urgent, true);
});

test('the chart: a PNG of the stated size, deterministic, with the inline content id the HTML uses', () => {
  const message = renderFiring(firingFor('Kettle'), options);
  assert.ok(message.chart !== null);
  assert.match(message.html, new RegExp(`src="cid:${message.chart.cid}"`));
  const png = Buffer.from(message.chart.png);
  assert.equal(png.readUInt32BE(16), 240);
  assert.equal(png.readUInt32BE(20), 64);
  const idat = png.indexOf('IDAT');
  const pixels = inflateSync(png.subarray(idat + 4, idat + 4 + png.readUInt32BE(idat - 4)));
  assert.equal(pixels.length, (240 * 3 + 1) * 64, 'one filter byte and 240 RGB pixels per row');
  assert.ok(
    pixels.some((b, i) => i % 721 !== 0 && b !== 255),
    'something is drawn',
  );
  assert.deepEqual(renderFiring(firingFor('Kettle'), options).chart?.png, message.chart.png);
  assert.equal(priceChart([{ at: day(0), price: 1 }], day(0)), null, 'one price is no chart');
});

test('sparkline: one bar per price, lowest to highest; a flat history sits in the middle', () => {
  assert.equal(sparkline([10, 20, 15, 10].map((price, i) => ({ at: day(i), price }))), '▁█▅▁');
  assert.equal(sparkline([5, 5].map((price, i) => ({ at: day(i), price }))), '▄▄');
  assert.equal(sparkline([]), '');
});

test('a digest lists every firing newest first, each with its dashboard link', () => {
  const older = { ...firingFor('Older kettle'), event_at: day(-2) };
  const newer = { ...firingFor('Newer kettle'), event_at: day(-1) };
  const digest = renderDigest([older, newer], 'Daily', options);
  assert.equal(digest.title, 'Daily digest: 2 alerts');
  assert.ok(digest.text.indexOf('Newer kettle') < digest.text.indexOf('Older kettle'));
  assert.equal(digest.chart, null);
  assert.equal((digest.html.match(/\/ui\/products\/7/g) ?? []).length, 2);
});

test('digest periods: UTC days and ISO weeks, due when they end', () => {
  assert.equal(digestPeriod('immediate', '2026-11-23T10:00:00Z'), null);
  assert.deepEqual(digestPeriod('daily', '2026-11-23T23:59:59Z'), { key: '2026-11-23', label: 'Daily', due_at: '2026-11-24T00:00:00.000Z' });
  assert.deepEqual(digestPeriod('weekly', '2026-11-29T12:00:00Z'), { key: '2026-W48', label: 'Weekly', due_at: '2026-11-30T00:00:00.000Z' });
  assert.equal(digestPeriod('weekly', '2027-01-01T00:00:00Z')?.key, '2026-W53', 'a Friday 1 January belongs to the old ISO year');
  assert.equal(digestPeriod('weekly', '2024-12-30T00:00:00Z')?.key, '2025-W01', 'a Monday 30 December can begin week 1');
});

test('urgent are exactly the conditions the channel schema names for the higher ntfy and Gotify priority', () => {
  const conditions: Firing['condition'][] = [
    'price_at_or_below',
    'price_drop',
    'lowest_in_days',
    'back_in_stock',
    'out_of_stock',
    'availability_changed',
    'price_changed',
    'product_gone',
    'suspicious_discount',
  ];
  const base = firingFor('Kettle');
  const urgent = conditions.filter((condition) => renderFiring({ ...base, condition }, options).urgent).sort();
  assert.deepEqual(urgent, ['back_in_stock', 'price_at_or_below', 'suspicious_discount'], 'a target price reached is urgent, as stock back and a dishonest "was" price');
  for (const schema of [NtfyChannel, GotifyChannel]) {
    const described = (schema.properties.priority as { description?: string }).description ?? '';
    assert.deepEqual(conditions.filter((c) => new RegExp(`\\b${c}\\b`).test(described)).sort(), urgent, described);
  }
  const ntfy = (condition: Firing['condition']) =>
    ntfyRequest({ kind: 'ntfy', server_url: 'https://ntfy.example/', topic: 'alerts' }, renderFiring({ ...base, condition }, options)).body as { priority: number };
  const gotify = (condition: Firing['condition']) =>
    gotifyRequest({ kind: 'gotify', server_url: 'https://push.example', token: 'AppToken1' }, renderFiring({ ...base, condition }, options)).body as { priority: number };
  assert.deepEqual([ntfy('price_at_or_below').priority, ntfy('price_drop').priority, gotify('price_at_or_below').priority, gotify('price_drop').priority], [4, 3, 8, 5]);
});
