// The Omnibus check (suspicious_discount) fired from stored history through real scrapes of a local shop: a "was" price raised just before the sale is caught, an honest one is not.
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import type { Alert } from '../../src/alerts/rules/alert-api-schema.js';
import type { OmnibusVerdict } from '../../src/alerts/rules/omnibus-check.js';
import type { Database } from '../../src/db/database.js';
import { backends, type mainServiceOn, warnIfNoPostgres, openService, type OpenService } from '../helpers.js';
import { until } from '../wait.js';
import { startReceiver, type Receiver } from './receiver.js';

warnIfNoPostgres();

type Service = Awaited<ReturnType<typeof mainServiceOn>>;

/** What a product page shows: its price and, on sale, the "was" price beside it. */
interface Shown {
  price: number;
  was: number | null;
}

/** A shop on 127.0.0.1 whose pages /p/{slug} show what the test sets, as JSON-LD with a ListPrice specification and as text. */
async function startSaleShop(pages: Record<string, Shown>) {
  const server = createServer((req, res) => {
    const slug = /^\/p\/([a-z-]+)$/.exec(req.url ?? '')?.[1];
    const shown = slug === undefined ? undefined : pages[slug];
    if (slug === undefined || shown === undefined) {
      res.writeHead(404).end();
      return;
    }
    const title = `Coffee grinder ${slug}`;
    const offer = {
      '@type': 'Offer',
      price: shown.price.toFixed(2),
      priceCurrency: 'EUR',
      availability: 'https://schema.org/InStock',
      ...(shown.was === null
        ? {}
        : { priceSpecification: [{ '@type': 'UnitPriceSpecification', priceType: 'https://schema.org/ListPrice', price: shown.was.toFixed(2), priceCurrency: 'EUR' }] }),
    };
    const product = { '@context': 'https://schema.org/', '@type': 'Product', name: title, sku: `CG-${slug}`, offers: offer };
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    res.end(
      `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${title}</title>` +
        `<script type="application/ld+json">${JSON.stringify(product)}</script></head><body><main><h1>${title}</h1>` +
        `${shown.was === null ? '' : `<p class="was">Was <s>€${shown.was.toFixed(2)}</s></p>`}<p class="price">€${shown.price.toFixed(2)}</p></main></body></html>`,
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    pages,
    url: (slug: string) => `${base}/p/${slug}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/**
 * Moves everything recorded about a product `days` further into the past: its states, its last
 * sighting and its events. The history then reads as if the scrapes so far had run that long ago
 * (the database's clock, which stamps every sighting, is not the test's to set).
 */
async function backdate(db: Database, productId: number, days: number): Promise<void> {
  await db.transaction(async (tx) => {
    const by = [productId, `${days} days`];
    await tx.query(`UPDATE price_observations SET first_seen_at = first_seen_at - $2::interval, last_seen_at = last_seen_at - $2::interval WHERE product_id = $1`, by);
    await tx.query(`UPDATE products SET last_seen_at = last_seen_at - $2::interval WHERE id = $1`, by);
    await tx.query(`UPDATE events SET created_at = created_at - $2::interval WHERE product_id = $1`, by);
  });
}

for (const backend of backends()) {
  describe(`the Omnibus check through scrapes on ${backend.name}`, () => {
    let service: Service;
    let receiver: Receiver;
    let shop: Awaited<ReturnType<typeof startSaleShop>>;
    let opened: OpenService;

    before(async () => {
      receiver = await startReceiver();
      shop = await startSaleShop({ raised: { price: 80, was: null }, honest: { price: 100, was: null } });
      service = opened = await openService(backend, { SCRAPE_ALLOW_PRIVATE_NETWORKS: 'true', SCRAPE_OBEY_ROBOTS: 'false' }, { work: true });
      opened.own(receiver);
      opened.own(shop);
    });
    after(() => opened.close());

    const inject = (method: string, url: string, payload?: unknown) =>
      service.app.inject({ method: method as 'GET', url, ...(payload === undefined ? {} : { payload: payload as object }) });
    /** One real scrape of a shop page; answers its product as stored. */
    const scrape = async (slug: string) => {
      const res = await inject('POST', '/scrape', { url: shop.url(slug) });
      assert.equal(res.statusCode, 200, res.body);
      const [product] = res.json().products;
      assert.ok(product, `the scrape of ${slug} stored its product`);
      return product as { id: number; price: number; list_price: number | null };
    };

    test('a "was" price raised three days before the sale fires suspicious_discount from the stored history; the same sale after two honest months does not', async () => {
      const channel = (await inject('POST', '/channels', { name: 'honesty', config: { kind: 'ntfy', server_url: `${receiver.base}/`, topic: 'omnibus-3c9d' } })).json();
      const rule = await inject('POST', '/alert-rules', {
        name: 'Dishonest discounts',
        scope: { type: 'all' },
        condition: { type: 'suspicious_discount', days: 30 },
        cooldown_minutes: 0,
        channel_ids: [channel.id],
      });
      assert.equal(rule.statusCode, 201, rule.body);
      const { db } = service.context;

      // Two months ago: 80 at one page, 100 at the other.
      const raised = await scrape('raised');
      const honest = await scrape('honest');
      await backdate(db, raised.id, 60);
      await backdate(db, honest.id, 60);
      // Three days ago the first page went up to 100.
      shop.pages.raised = { price: 100, was: null };
      assert.equal((await scrape('raised')).price, 100);
      await backdate(db, raised.id, 3);
      // Today both show 80, "was 100".
      shop.pages.raised = { price: 80, was: 100 };
      shop.pages.honest = { price: 80, was: 100 };
      const sale = await scrape('raised');
      assert.deepEqual([sale.price, sale.list_price], [80, 100], 'the scrape read the "was" price');
      assert.equal((await scrape('honest')).list_price, 100);

      // Both sales were judged in their scrapes' transactions: each left its price change.
      const changes = await db.query<{ product_id: number }>(`SELECT product_id FROM events WHERE type = 'price.changed' AND created_at > now() - interval '1 hour'`);
      assert.deepEqual(changes.map((c) => c.product_id).sort(), [raised.id, honest.id].sort());
      const alerts = (await inject('GET', `/alerts?rule_id=${rule.json().id}`)).json() as Alert[];
      assert.deepEqual(
        alerts.map((a) => a.product.id),
        [raised.id],
        'the honest reduction is not called dishonest',
      );
      const [alert] = alerts;
      const verdict = (alert!.reason as { verdict: OmnibusVerdict }).verdict;
      assert.deepEqual(
        verdict.failed.map((f) => [f.test, f.reference_price]),
        [['was_price_above_prior_low', 80]],
        'the lowest price of the 30 days before the reduction was 80',
      );
      assert.deepEqual(verdict.inconclusive, []);
      assert.match(alert!.why, /80/);
      const message = await until('the honesty alert', () => receiver.received.find((r) => r.body.topic === 'omnibus-3c9d'));
      assert.match(String(message.body.title), /Coffee grinder raised/);
      assert.equal(receiver.received.filter((r) => r.body.topic === 'omnibus-3c9d').length, 1);
    });
  });
}
