// A scraped product's identity: one product however its URL is written, and any URL fits the index.
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import type { App } from '../../src/http/base-app.js';
import { productKey } from '../../src/url-identity/url-key.js';
import { backends, mainAppOn, warnIfNoPostgres } from '../helpers.js';

warnIfNoPostgres();

test('productKey: the canonical URL (case, default port, fragment, tracking parameters, query order, credentials), capped', () => {
  const variants = [
    'https://Shop.Example/p/1?b=2&a=1',
    'https://shop.example:443/p/1/?a=1&b=2#reviews',
    'https://shop.example/p/1?utm_source=mail&a=1&gclid=x&b=2&fbclid=y',
    'https://ann:secret@shop.example/p/1?a=1&b=2',
  ];
  const keys = new Set(variants.map((url) => productKey(url, 'https://shop.example/list', 'Lamp')));
  assert.deepEqual([...keys], ['https://shop.example/p/1?a=1&b=2']);
  // Without its own URL: the page's key and the title.
  assert.equal(productKey(null, 'https://Shop.Example/list/?utm_medium=x', 'Lamp'), 'https://shop.example/list#Lamp');
  // Long URLs and long multi-byte titles are cut and get a digest of the whole: distinct, and under the index's limit.
  const long = productKey(`https://shop.example/p?q=${'x'.repeat(3000)}`, 'https://shop.example/', 'Lamp');
  const longer = productKey(`https://shop.example/p?q=${'x'.repeat(3001)}`, 'https://shop.example/', 'Lamp');
  assert.notEqual(long, longer);
  assert.ok(Buffer.byteLength(long) <= 1000, `${Buffer.byteLength(long)} bytes`);
  const titled = productKey(null, 'https://shop.example/', '灯'.repeat(900));
  assert.ok(Buffer.byteLength(titled) <= 1000);
  assert.match(titled, /#sha256=[0-9a-f]{64}$/);
});

/** A page URL and a title that together are longer than the index can hold as one key (~2.7 KB). */
const LONG_PATH = `/long?q=${'x'.repeat(1900)}`;
const LONG_TITLE = `Lamp ${'灯'.repeat(400)}`;

for (const backend of backends()) {
  describe(`product identity on ${backend.name}`, () => {
    let app: App;
    let origin: string;
    const closers: Array<() => Promise<void>> = [];
    /** Each page states one product whose own URL is written as the page query says. */
    const server = createServer((req, res) => {
      const long = req.url?.startsWith('/long') === true;
      const own = long ? undefined : (new URL(req.url ?? '/', 'http://x').searchParams.get('own') ?? '/p/1');
      // The long page's product has no URL of its own: its key is the page's URL and its title.
      const ld = {
        '@context': 'https://schema.org',
        '@type': 'Product',
        name: long ? LONG_TITLE : 'Lamp',
        url: own,
        offers: { '@type': 'Offer', price: '10.00', priceCurrency: 'EUR' },
      };
      res.writeHead(req.url === '/robots.txt' ? 404 : 200, { 'content-type': 'text/html' });
      res.end(`<!doctype html><html><head><title>Lamp</title><script type="application/ld+json">${JSON.stringify(ld)}</script></head><body></body></html>`);
    });

    before(async () => {
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      const db = await backend.open();
      closers.push(
        () => db.close(),
        () => new Promise((resolve) => server.close(() => resolve())),
      );
      app = await mainAppOn(db, { after: (fn) => closers.unshift(fn) }, { SCRAPE_ALLOW_PRIVATE_NETWORKS: 'true' });
    });
    after(async () => {
      for (const close of closers) await close();
    });

    const scrape = (own: string) => app.inject({ method: 'POST', url: '/scrape', payload: { url: `${origin}/page?own=${encodeURIComponent(own)}` } });

    test('the same product written with tracking parameters, a fragment or another query order is one product', async () => {
      const first = await scrape('/p/1?b=2&a=1');
      assert.equal(first.statusCode, 200, first.body);
      assert.equal(first.json().created, 1);
      for (const own of ['/p/1?a=1&b=2#top', '/p/1?utm_source=news&a=1&b=2', `${origin.toUpperCase().replace('HTTP', 'http')}/p/1?a=1&b=2`]) {
        const again = await scrape(own);
        assert.deepEqual([again.json().created, again.json().updated], [0, 1], own);
      }
      assert.equal((await app.inject({ url: '/products?q=Lamp' })).json().length, 1);
    });

    test('a product whose key would be over 3 KB (a long page URL and a long title) is stored, and found again', async () => {
      const long = () => app.inject({ method: 'POST', url: '/scrape', payload: { url: `${origin}${LONG_PATH}` } });
      const res = await long();
      assert.equal(res.statusCode, 200, res.body);
      assert.equal(res.json().created, 1);
      assert.equal(res.json().products[0].title, LONG_TITLE);
      assert.equal((await long()).json().updated, 1);
    });
  });
}
