// Site rules on pages of named hosts: every field a rule can pin (title, price, list price, sku, availability, image) by selector and by JSON path, the most specific host pattern winning, and a schedule's runs reading the rule of their host.
import assert from 'node:assert/strict';
import dns from 'node:dns';
import { createServer } from 'node:http';
import { syncBuiltinESMExports } from 'node:module';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { load } from 'cheerio';
import { assertProblem, backends, mainServiceOn, warnIfNoPostgres } from '../helpers.js';
import { until } from '../wait.js';

warnIfNoPostgres();

/**
 * Names under `.example` resolve to 127.0.0.1 in this test process, as a hosts file would make them:
 * the service's own resolver (address-guard.ts) asks node:dns, and a page's host is what picks its rule.
 */
const realLookup = dns.promises.lookup;
const standIn = (async (host: string, options: unknown) =>
  host.endsWith('.example') ? [{ address: '127.0.0.1', family: 4 }] : realLookup(host, options as never)) as typeof dns.promises.lookup;
(dns.promises as { lookup: typeof dns.promises.lookup }).lookup = standIn;
syncBuiltinESMExports();

/**
 * One product page, whatever the host: its JSON-LD says one thing, the app's embedded JSON another,
 * the visible page a third, so the value stored shows which source the rule pointed at. Three
 * headings say which rule read the page.
 */
const PAGE = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Espresso grinder</title>
<script type="application/ld+json">{"@context":"https://schema.org","@type":"Product","name":"Grinder (JSON-LD)","sku":"LD-1","image":"/ld.jpg",
"offers":{"@type":"Offer","price":"50.00","priceCurrency":"EUR","availability":"https://schema.org/InStock"}}</script>
<script id="__NEXT_DATA__" type="application/json">{"props":{"pageProps":{"product":{"name":"Grinder (app data)","price":"€ 71,50","was":"€ 90,00",
"code":"APP-7","stock":"OutOfStock","picture":"/app.jpg"}}}}</script>
</head><body><main>
<h1 class="own">Grinder (the host's own rule)</h1><h2 class="wide">Grinder (the *.shop.example rule)</h2><h2 class="narrow">Grinder (the *.eu.shop.example rule)</h2>
<div id="buy"><span class="now">€ 64,00</span> <s class="was">€ 80,00</s> <span class="code">PAGE-3</span> <span class="stock">Sold out</span>
<img class="hero" src="/page.jpg" alt="the grinder"></div>
</main></body></html>`;

const BY_SELECTOR = {
  title: { selector: 'h1.own' },
  price: { selector: '#buy .now' },
  list_price: { selector: '#buy .was' },
  sku: { selector: '#buy .code' },
  availability: { selector: '#buy .stock' },
  image: { selector: '#buy img.hero' },
};
const BY_PATH = {
  title: { json_path: '$.props.pageProps.product.name' },
  price: { json_path: '$.props.pageProps.product.price' },
  list_price: { json_path: "$.props.pageProps.product['was']" },
  sku: { json_path: '$.props.pageProps.product.code' },
  availability: { json_path: '$.props.pageProps.product.stock' },
  image: { json_path: '$.props.pageProps.product.picture' },
};

interface Product {
  id: number;
  title: string;
  price: number;
  list_price: number | null;
  sku: string;
  availability: string;
  image_url: string | null;
  provenance: { fields: Record<string, { source: string; locator: string }> };
}

for (const backend of backends()) {
  describe(`site rules on named hosts on ${backend.name}`, () => {
    let app: Awaited<ReturnType<typeof mainServiceOn>>['app'];
    let port: number;
    const closers: Array<() => Promise<void>> = [];

    before(async () => {
      const server = createServer((req, res) => {
        if (!/^\/p\/[a-z0-9-]+$/.test(req.url ?? '')) {
          res.writeHead(404).end();
          return;
        }
        res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(PAGE);
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      port = (server.address() as AddressInfo).port;
      const db = await backend.open();
      closers.push(
        () => db.close(),
        () =>
          new Promise<void>((resolve) => {
            server.closeAllConnections();
            server.close(() => resolve());
          }),
      );
      app = (await mainServiceOn(db, { after: (fn) => closers.unshift(fn) }, { SCRAPE_ALLOW_PRIVATE_NETWORKS: 'true', SCRAPE_OBEY_ROBOTS: 'false' }, { work: true })).app;
    });
    after(async () => {
      for (const close of closers) await close();
    });

    const send = (method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, payload?: unknown) =>
      app.inject({ method, url, ...(payload === undefined ? {} : { payload: payload as object }) });
    const url = (host: string, slug: string) => `http://${host}:${port}/p/${slug}`;
    const rule = async (body: unknown) => {
      const res = await send('POST', '/site-rules', body);
      assert.equal(res.statusCode, 201, res.body);
      return res.json() as { id: number; host_pattern: string };
    };
    const scrape = async (target: string): Promise<Product> => {
      const res = await send('POST', '/scrape', { url: target });
      assert.equal(res.statusCode, 200, res.body);
      const [product] = res.json().products;
      assert.ok(product, `a product from ${target}`);
      return (await send('GET', `/products/${product.id}`)).json();
    };
    const pinned = (product: Product) => ({
      title: product.title,
      price: product.price,
      list_price: product.list_price,
      sku: product.sku,
      availability: product.availability,
      image_url: product.image_url,
    });
    /** Where each pinned field came from, as the product's provenance says. */
    const sources = (product: Product) => Object.fromEntries(Object.keys(BY_SELECTOR).map((field) => [field, product.provenance.fields[field === 'image' ? 'image_url' : field]]));

    test('every field a rule can pin, by selector: the visible page wins over the JSON-LD for each, with site-rule provenance', async () => {
      const host = 'selectors.example';
      const unruled = await scrape(url(host, 'a'));
      assert.deepEqual([unruled.title, unruled.price, unruled.sku], ['Grinder (JSON-LD)', 50, 'LD-1'], 'without a rule: the JSON-LD');
      await rule({ host_pattern: host, fields: BY_SELECTOR });
      const product = await scrape(url(host, 'b'));
      assert.deepEqual(pinned(product), {
        title: "Grinder (the host's own rule)",
        price: 64,
        list_price: 80,
        sku: 'PAGE-3',
        availability: 'out_of_stock',
        image_url: url(host, 'b').replace('/p/b', '/page.jpg'),
      });
      // Each from the site rule, at the element its selector picks.
      const $ = load(PAGE);
      for (const [field, from] of Object.entries(sources(product))) {
        assert.equal(from?.source, 'site-rule', field);
        assert.equal($(from.locator).get(0), $(BY_SELECTOR[field as keyof typeof BY_SELECTOR].selector).get(0), `${field} located at ${from.locator}`);
      }
    });

    test("every field a rule can pin, by JSON path into the page's app data: each read from there, with site-rule provenance", async () => {
      const host = 'paths.example';
      await rule({ host_pattern: host, fields: BY_PATH });
      const product = await scrape(url(host, 'c'));
      assert.deepEqual(pinned(product), {
        title: 'Grinder (app data)',
        price: 71.5,
        list_price: 90,
        sku: 'APP-7',
        availability: 'out_of_stock',
        image_url: url(host, 'c').replace('/p/c', '/app.jpg'),
      });
      for (const [field, from] of Object.entries(sources(product))) {
        assert.equal(from?.source, 'site-rule', field);
        assert.equal(from.locator, `script[1]#__NEXT_DATA__ ${BY_PATH[field as keyof typeof BY_PATH].json_path}`, field);
      }
    });

    test('the most specific pattern wins: the host itself, then *.eu.shop.example before *.shop.example; a wildcard never matches its own base; *.example is refused', async () => {
      const own = await rule({ host_pattern: 'shop.example', fields: { title: { selector: 'h1.own' } } });
      const wide = await rule({ host_pattern: '*.shop.example', fields: { title: { selector: 'h2.wide' } } });
      const narrow = await rule({ host_pattern: '*.EU.shop.example', fields: { title: { selector: 'h2.narrow' } } });
      assert.equal(narrow.host_pattern, '*.eu.shop.example');
      const cases: Array<[host: string, rule: typeof own | null, title: string]> = [
        ['shop.example', own, "Grinder (the host's own rule)"],
        ['www.shop.example', wide, 'Grinder (the *.shop.example rule)'],
        ['eu.shop.example', wide, 'Grinder (the *.shop.example rule)'],
        ['www.eu.shop.example', narrow, 'Grinder (the *.eu.shop.example rule)'],
        ['a.b.eu.shop.example', narrow, 'Grinder (the *.eu.shop.example rule)'],
        ['shop.other.example', null, 'Grinder (JSON-LD)'],
      ];
      for (const [host, expected, title] of cases) {
        const explained = (await send('POST', '/scrape/explain', { url: url(host, 'd') })).json();
        assert.equal(explained.pages[0].site_rule?.host_pattern ?? null, expected?.host_pattern ?? null, host);
        assert.equal(explained.products[0].title, title, host);
        assert.equal((await scrape(url(host, 'd'))).title, title, host);
      }
      // A host's own rule beats the wildcards over it too.
      const ownEu = await rule({ host_pattern: 'www.eu.shop.example', fields: { title: { selector: 'h1.own' } } });
      assert.equal((await send('POST', '/scrape/explain', { url: url('www.eu.shop.example', 'e') })).json().pages[0].site_rule.id, ownEu.id);
      // One label after "*." would be every name of a top-level domain.
      const problem = assertProblem(await send('POST', '/site-rules', { host_pattern: '*.example', fields: { title: { selector: 'h1' } } }), 422);
      assert.match(JSON.stringify(problem), /\/host_pattern/);
      for (const made of [own, wide, narrow, ownEu]) await send('DELETE', `/site-rules/${made.id}`);
    });

    test("a schedule's runs read the rule of their host: the pinned fields, and a changed rule from the next run on", async () => {
      const host = 'www.scheduled.example';
      await rule({ host_pattern: '*.scheduled.example', fields: { price: { selector: '#buy .now' }, sku: { selector: '#buy .code' } } });
      const made = await send('POST', '/schedules', { name: 'grinder daily', every_minutes: 1440, job: { url: url(host, 'f') } });
      assert.equal(made.statusCode, 201, made.body);
      const schedule = made.json() as { id: string };
      const run = async () => {
        const started = await send('POST', `/schedules/${schedule.id}/run`);
        assert.equal(started.statusCode, 202, started.body);
        const id = started.json().id as string;
        const job = await until('the scheduled run to end', async () => {
          const body = (await send('GET', `/jobs/${id}`)).json();
          return ['succeeded', 'failed', 'cancelled'].includes(body.status) ? body : undefined;
        });
        assert.equal(job.status, 'succeeded', JSON.stringify(job));
        const [product] = (await send('GET', `/products?q=${encodeURIComponent('Grinder')}&limit=100`))
          .json()
          .filter((p: { source_url: string }) => p.source_url === url(host, 'f'));
        assert.ok(product, 'the run stored the page');
        return (await send('GET', `/products/${product.id}`)).json() as Product;
      };
      const first = await run();
      assert.deepEqual([first.price, first.sku, first.provenance.fields.price?.source, first.provenance.fields.sku?.source], [64, 'PAGE-3', 'site-rule', 'site-rule']);
      const [stored] = (await send('GET', '/site-rules')).json().filter((r: { host_pattern: string }) => r.host_pattern === '*.scheduled.example');
      const changed = await send('PUT', `/site-rules/${stored.id}`, { host_pattern: '*.scheduled.example', fields: { price: { json_path: '$.props.pageProps.product.price' } } });
      assert.equal(changed.statusCode, 200, changed.body);
      const second = await run();
      assert.equal(second.id, first.id);
      assert.equal(second.price, 71.5, 'the changed rule read the price from the app data');
      assert.equal(second.provenance.fields.price?.source, 'site-rule');
      const runs = (await send('GET', `/jobs?schedule_id=${schedule.id}`)).json() as unknown[];
      assert.equal(runs.length, 2, "both runs are the schedule's");
    });
  });
}
