// The product screen in a real Chromium: the chart's time axis spans the product's own history (one moment: a day around it), and a gone product shows gone, not its last stock.
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import type { App } from '../../src/http/base-app.js';
import { chromiumPath, dashboardBackends, noChromium, warnIfNoPostgres, openService, type OpenService } from '../helpers.js';
import { settled, watchedPage } from './browser-checks.js';

warnIfNoPostgres();

const DAY_S = 86_400;

/** A shop listing on loopback stating its products in JSON-LD; the test takes products off it between scrapes. */
async function startShop() {
  const items = [
    { sku: 'LAMP-1', name: 'Arc lamp', price: 40 },
    { sku: 'LAMP-2', name: 'Cone lamp', price: 25 },
  ];
  const server = createServer((req, res) => {
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const list = items.map((item, i) => ({
      '@type': 'ListItem',
      position: i + 1,
      item: {
        '@type': 'Product',
        name: item.name,
        sku: item.sku,
        url: `${base}/shop/p/${item.sku}`,
        offers: { '@type': 'Offer', price: item.price.toFixed(2), priceCurrency: 'GBP', availability: 'https://schema.org/InStock' },
      },
    }));
    const ld = JSON.stringify({ '@context': 'https://schema.org', '@type': 'ItemList', itemListElement: list });
    res.writeHead(req.url === '/shop/' ? 200 : 404, { 'content-type': 'text/html; charset=utf-8' });
    res.end(`<!doctype html><html><head><title>Lamps</title><script type="application/ld+json">${ld}</script></head>
      <body><h1>Lamps</h1><ul>${items.map((i) => `<li><a href="/shop/p/${i.sku}">${i.name}</a></li>`).join('')}</ul></body></html>`);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    items,
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/shop/`,
    close: () => {
      server.closeAllConnections();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** The plotted time scale of the product screen's chart, in seconds, once it is drawn. */
async function timeAxis(page: Page): Promise<{ min: number; max: number; xs: number[] }> {
  await page.locator('.chart canvas').waitFor();
  return page.locator('.chart').evaluate((element) => {
    const chart = (element as unknown as { chart: { scales: { x: { min: number; max: number } }; data: number[][] } }).chart;
    return { min: chart.scales.x.min, max: chart.scales.x.max, xs: chart.data[0]! };
  });
}

for (const backend of dashboardBackends()) {
  describe(`the product screen on ${backend.name}`, { skip: noChromium }, () => {
    let app: App;
    let origin: string;
    let browser: Browser;
    let context: BrowserContext;
    const ids: Record<string, number> = {};
    let opened: OpenService;

    before(async () => {
      const shop = await startShop();
      // One run without a product makes it gone.
      const env = { SCRAPE_ALLOW_PRIVATE_NETWORKS: 'true', SCRAPE_OBEY_ROBOTS: 'false', GONE_AFTER_RUNS: '1' };
      app = (opened = await openService(backend, env)).app;
      opened.own(shop);
      await app.listen({ port: 0, host: '127.0.0.1' });
      origin = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
      browser = await chromium.launch({ executablePath: chromiumPath!, args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'] });
      opened.own(browser);
      context = await browser.newContext({ viewport: { width: 1280, height: 900 } });

      // A product made a moment ago: one state, seen once.
      const made = await app.inject({ method: 'POST', url: '/products', payload: { title: 'Brand-new kettle', price: 30, currency: 'GBP', availability: 'in_stock' } });
      assert.equal(made.statusCode, 201, made.body);
      ids.single = made.json().id;
      // Two scrapes of the shop: the arc lamp's one state seen twice; the cone lamp gone from the second.
      const first = await app.inject({ method: 'POST', url: '/scrape', payload: { url: shop.url } });
      assert.equal(first.statusCode, 200, first.body);
      for (const p of first.json().products as Array<{ id: number; title: string }>) ids[p.title] = p.id;
      shop.items.pop();
      assert.equal((await app.inject({ method: 'POST', url: '/scrape', payload: { url: shop.url } })).statusCode, 200);
    });
    after(() => opened.close());

    test('a product with one state seen once: the time axis is a day around it, not years of nothing', async () => {
      const history = (await app.inject({ url: `/products/${ids.single}/history` })).json() as { points: Array<{ first_seen_at: string; last_seen_at: string }> };
      assert.equal(history.points.length, 1);
      assert.equal(history.points[0]!.first_seen_at, history.points[0]!.last_seen_at, 'one moment: no span of its own');
      const { page, problems } = await watchedPage(context, origin);
      await page.goto(`${origin}/ui/products/${ids.single}`);
      const axis = await timeAxis(page);
      const seen = Date.parse(history.points[0]!.first_seen_at) / 1000;
      assert.deepEqual(axis.xs, [seen]);
      assert.deepEqual([axis.min, axis.max], [seen - DAY_S / 2, seen + DAY_S / 2], `axis ${new Date(axis.min * 1000).toISOString()} to ${new Date(axis.max * 1000).toISOString()}`);
      // A double click resets a uPlot chart's zoom, sizing the axis anew: still the day around it.
      await page.locator('.chart .u-over').dblclick();
      const reset = await timeAxis(page);
      assert.deepEqual([reset.min, reset.max], [seen - DAY_S / 2, seen + DAY_S / 2]);
      await page.close();
      assert.deepEqual(problems, []);
    });

    test('a product with a history: the time axis runs from its first sighting to its last, no further', async () => {
      const history = (await app.inject({ url: `/products/${ids['Arc lamp']}/history` })).json() as { points: Array<{ first_seen_at: string; last_seen_at: string }> };
      assert.equal(history.points.length, 1, 'one state, seen by two runs');
      const { page, problems } = await watchedPage(context, origin);
      await page.goto(`${origin}/ui/products/${ids['Arc lamp']}`);
      const axis = await timeAxis(page);
      const [first, last] = [history.points[0]!.first_seen_at, history.points[0]!.last_seen_at].map((at) => Date.parse(at) / 1000);
      assert.ok(last! > first!, 'the second run saw it later');
      assert.deepEqual([axis.min, axis.max], [first, last]);
      await page.close();
      assert.deepEqual(problems, []);
    });

    test('a gone product shows gone and since when, not the stock its source last stated', async () => {
      const gone = (await app.inject({ url: `/products/${ids['Cone lamp']}` })).json() as { gone_at: string | null; availability: string };
      assert.ok(gone.gone_at !== null, 'the second scrape made it gone');
      assert.equal(gone.availability, 'in_stock', 'its last stated stock is still stored');
      const { page, problems } = await watchedPage(context, origin);
      await page.goto(`${origin}/ui/products/${ids['Cone lamp']}`);
      await settled(page);
      const lead = page.locator('p.lead');
      assert.equal(await lead.locator('.badge-in_stock').count(), 0, await lead.innerHTML());
      assert.equal(await lead.locator('.badge-gone').textContent(), 'gone');
      assert.doesNotMatch((await lead.textContent()) ?? '', /in stock/);
      assert.match((await lead.textContent()) ?? '', /gone since/);
      // A product still found shows its stock.
      await page.goto(`${origin}/ui/products/${ids['Arc lamp']}`);
      await settled(page);
      assert.equal(await page.locator('p.lead .badge-in_stock').count(), 1);
      assert.equal(await page.locator('p.lead .badge-gone').count(), 0);
      await page.close();
      assert.deepEqual(problems, []);
    });
  });
}
