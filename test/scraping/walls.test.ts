// Walls said plainly: a CAPTCHA, a bot check, a login or a rate limit where the page should be is "blocked" with its kind, on the run, its log, the job and explain, never an empty page or a gone product.
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { wallOfAnswer } from '../../src/egress/site-walls.js';
import type { App } from '../../src/http/base-app.js';
import { extract } from '../../src/scraping/extract/index.js';
import { type Answer, NOT_WALLS, startWallSite, WALLS } from '../fixtures/walls.js';
import { assertProblem, backends, noChromium, warnIfNoPostgres, openService, type OpenService } from '../helpers.js';
import { until } from '../wait.js';

warnIfNoPostgres();

/** The wall an answer is, as the pipeline tells it: its status and headers, an error answer's body, a page's content. */
function wallOf(answer: Answer) {
  return (
    wallOfAnswer(answer.status, answer.headers ?? {}, answer.status >= 400 ? answer.body : null) ??
    (answer.status < 300 ? (extract(answer.body, 'https://shop.example/p/1').blocked ?? null) : null)
  );
}

describe('walls by their status, headers and shape', () => {
  for (const [name, { answer, kind }] of Object.entries(WALLS)) {
    test(`${name} is ${kind}`, () => {
      const wall = wallOf(answer);
      assert.equal(wall?.kind, kind, JSON.stringify(wall));
      assert.ok((wall?.signal ?? '').length > 5);
    });
  }
  for (const [name, answer] of Object.entries(NOT_WALLS)) {
    test(`${name} is no wall`, () => assert.equal(wallOf(answer), null));
  }
});

/** A one-product shop whose page the test turns into a wall, or into a page without the product. */
async function startSwitchingShop() {
  const state = { mode: 'product' as 'product' | 'wall' | 'empty' };
  const product = `<script type="application/ld+json">{"@context":"https://schema.org","@type":"Product","name":"Desk lamp","sku":"L-1","offers":{"@type":"Offer","price":"30.00","priceCurrency":"EUR"}}</script>`;
  const server = createServer((req, res) => {
    if (req.url === '/robots.txt') return void res.writeHead(404).end();
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    if (state.mode === 'wall') return void res.end(WALLS['shop-captcha-form']!.answer.body);
    if (state.mode === 'empty')
      return void res.end('<!doctype html><html><head><title>Lamps</title></head><body><main><h1>Lamps</h1><p>No lamps right now.</p></main></body></html>');
    res.end(`<!doctype html><html><head><title>Desk lamp</title>${product}</head><body><main><h1>Desk lamp</h1><p>€ 30,00</p></main></body></html>`);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    state,
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/lamps/`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

for (const backend of backends()) {
  describe(`blocked runs on ${backend.name}`, () => {
    let app: App;
    let site: Awaited<ReturnType<typeof startWallSite>>;
    let shop: Awaited<ReturnType<typeof startSwitchingShop>>;
    let opened: OpenService;

    before(async () => {
      site = await startWallSite();
      shop = await startSwitchingShop();
      const env = { SCRAPE_ALLOW_PRIVATE_NETWORKS: 'true', SCRAPE_OBEY_ROBOTS: 'false', GONE_AFTER_RUNS: '2', CHROMIUM_PATH: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium' };
      ({ app } = opened = await openService(backend, env, { work: true }));
      opened.own(site);
      opened.own(shop);
    });
    after(() => opened.close());

    const scrape = (payload: object) => app.inject({ method: 'POST', url: '/scrape', payload });

    test('POST /scrape of each wall is a 502 "blocked" naming its kind and signal; its log says blocked; nothing is stored', async () => {
      for (const [name, { kind }] of Object.entries(WALLS)) {
        const problem = assertProblem(await scrape({ url: `${site.url}walls/${name}` }), 502);
        assert.equal(problem.type, 'urn:data-aggregator:problem:blocked', name);
        assert.equal(problem.blocked.kind, kind, name);
        assert.match(problem.detail, /nothing was stored/);
      }
      const [log] = (await app.inject({ url: '/scrape-logs?limit=1' })).json();
      assert.equal(log.status, 'failed');
      assert.equal(log.error.blocked.kind, 'captcha', 'the last wall (a CAPTCHA widget) is in its log');
      assert.equal((await app.inject({ url: '/products?limit=1' })).headers['x-total-count'], '0');
      const waf = assertProblem(await scrape({ url: `${site.url}walls/too-many-requests` }), 502);
      assert.equal(waf.blocked.retry_after_ms, 120_000, "a rate limit carries the site's Retry-After");
    });

    test('pages that only mention captchas, robots or logins are read as pages; a bare 403 and a maintenance 503 stay what they are', async () => {
      const article = await scrape({ url: `${site.url}pages/captcha-article` });
      assert.equal(article.statusCode, 200, article.body);
      assert.equal(article.json().articles.length, 1);
      const product = await scrape({ url: `${site.url}pages/robot-vacuum` });
      assert.equal(product.statusCode, 200, product.body);
      assert.equal(product.json().products[0].title, 'Robot vacuum R2');
      for (const name of ['contact-form', 'app-shell', 'forum-hidden-login']) {
        const res = await scrape({ url: `${site.url}pages/${name}` });
        assert.equal(res.statusCode, 200, `${name}: ${res.body}`);
      }
      for (const name of ['plain-forbidden', 'maintenance']) {
        const problem = assertProblem(await scrape({ url: `${site.url}pages/${name}` }), 502);
        assert.equal(problem.type, 'urn:data-aggregator:problem:upstream-failed', name);
        assert.equal(problem.blocked, undefined);
      }
    });

    test('a product whose page turns into a wall is not gone, however many runs meet it; a page really without it is', async () => {
      shop.state.mode = 'product';
      const first = await scrape({ url: shop.url });
      assert.equal(first.statusCode, 200, first.body);
      const id = first.json().products[0].id;
      shop.state.mode = 'wall';
      for (let i = 0; i < 3; i++) assert.equal(assertProblem(await scrape({ url: shop.url }), 502).blocked.kind, 'captcha');
      const product = (await app.inject({ url: `/products/${id}` })).json();
      assert.equal(product.gone_at, null, 'three blocked runs saw nothing go');
      assert.deepEqual((await app.inject({ url: `/events?product_id=${id}&type=product.gone` })).json(), []);
      // The control: the same source really without the product is gone after GONE_AFTER_RUNS (2) runs.
      shop.state.mode = 'empty';
      for (let i = 0; i < 2; i++) assert.equal((await scrape({ url: shop.url })).statusCode, 200);
      assert.notEqual((await app.inject({ url: `/products/${id}` })).json().gone_at, null);
    });

    test('explain of a wall is a 502 "blocked" that says which signal decided, with what was fetched', async () => {
      const problem = assertProblem(await app.inject({ method: 'POST', url: '/scrape/explain', payload: { url: `${site.url}walls/cloudflare-challenge` } }), 502);
      assert.deepEqual([problem.blocked.kind, problem.blocked.signal, problem.blocked.status], ['challenge', 'header cf-mitigated: challenge (Cloudflare)', 403]);
      assert.equal(problem.explanation.fetches.length, 1);
    });

    test('a scrape job that meets a wall fails as blocked; a crawl counts the pages the site blocked', async () => {
      const ended = async (id: string) =>
        until('the job to end', async () => {
          const job = (await app.inject({ url: `/jobs/${id}` })).json();
          return ['succeeded', 'failed', 'cancelled'].includes(job.status) ? job : undefined;
        });
      const queued = await app.inject({ method: 'POST', url: '/jobs', payload: { url: `${site.url}walls/login-wall` } });
      assert.equal(queued.statusCode, 202, queued.body);
      const job = await ended(queued.json().id);
      assert.equal(job.status, 'failed');
      assert.equal(job.error.blocked.kind, 'login');
      const crawl = await app.inject({ method: 'POST', url: '/jobs', payload: { url: `${site.url}pages/index`, crawl: { max_pages: 10 } } });
      assert.equal(crawl.statusCode, 202, crawl.body);
      const crawled = await ended(crawl.json().id);
      assert.deepEqual([crawled.progress.pages_failed, crawled.progress.pages_blocked], [2, 2], JSON.stringify(crawled.progress));
      const log = (await app.inject({ url: `/scrape-logs/${crawled.log_ids.at(-1)}` })).json();
      assert.deepEqual(log.failed_pages.map((p: { error: { blocked: { kind: string } } }) => p.error.blocked.kind).sort(), ['captcha', 'challenge']);
    });

    test('in dynamic mode (Chromium) a wall is blocked as well, by its answer or by its page', { skip: noChromium }, async () => {
      for (const [name, kind] of [
        ['cloudflare-challenge', 'challenge'],
        ['shop-captcha-form', 'captcha'],
        ['too-many-requests', 'rate-limit'],
      ] as const) {
        const problem = assertProblem(await scrape({ url: `${site.url}walls/${name}`, use_selenium: true }), 502);
        assert.equal(problem.blocked?.kind, kind, `${name}: ${JSON.stringify(problem)}`);
      }
      const product = await scrape({ url: `${site.url}pages/robot-vacuum`, use_selenium: true });
      assert.equal(product.statusCode, 200, product.body);
    });
  });
}
