// A run's bookkeeping: one log from start to end (also across a crash), a total deadline, and no page fetched for nothing.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import type { App } from '../../src/http/base-app.js';
import { loadConfig } from '../../src/config/config.js';
import { createContext } from '../../src/context.js';
import type { Database } from '../../src/db/queryable.js';
import { createJsonbLogStore } from '../../src/scrape-logs/jsonb-log-store.js';
import type { LogStore } from '../../src/scrape-logs/log-store.js';
import { extractInline } from '../../src/scraping/extract/pool.js';
import { followPagination } from '../../src/scraping/follow-pagination.js';
import type { LoadPage } from '../../src/scraping/page-loader.js';
import { pageReader } from '../../src/scraping/process-page.js';
import { backends, mainAppOn, warnIfNoPostgres } from '../helpers.js';
import { until } from '../wait.js';

warnIfNoPostgres();

const listing = (n: number, next: number | null) =>
  `<!doctype html><html><head><title>Page ${n}</title></head><body><h1>Lamps ${n}</h1>` +
  `<article class="product_pod"><h3><a href="/p/${n}" title="Lamp ${n}">Lamp ${n}</a></h3><p class="price_color">£${n}.00</p></article>` +
  (next === null ? '' : `<ul class="pager"><li class="next"><a href="page-${next}.html">next</a></li></ul>`) +
  '</body></html>';

test('numbered pages requested ahead are stopped as soon as the pagination ends before them', async () => {
  // Page 2 names no next page, so pages 3..10, already requested, are not needed.
  const aborted = new Set<string>();
  const finished = new Set<string>();
  const load: LoadPage = (url, { signal }) =>
    new Promise<{ url: string; html: string; status: number; contentType: string }>((resolve, reject) => {
      const n = Number(/page-(\d+)/.exec(url)?.[1] ?? 1);
      const timer = setTimeout(
        () => {
          finished.add(url);
          resolve({ url, html: listing(n, n === 1 ? 2 : null), status: 200, contentType: 'text/html' });
        },
        n === 1 ? 0 : 20 * n,
      );
      signal.addEventListener('abort', () => {
        clearTimeout(timer);
        aborted.add(url);
        reject(signal.reason);
      });
    });
  const result = await followPagination('https://shop.example/catalogue/page-1.html', 10, pageReader(load, extractInline, {}, 15_000));
  assert.equal(result.pages.length, 2);
  assert.equal(result.complete, true);
  const unneeded = Array.from({ length: 8 }, (_, i) => `https://shop.example/catalogue/page-${i + 3}.html`);
  assert.deepEqual(
    unneeded.filter((url) => !aborted.has(url)),
    [],
    'every page past the end was stopped',
  );
  assert.deepEqual(
    unneeded.filter((url) => finished.has(url)),
    [],
    'none of them was waited for',
  );
});

/** A store that fails to finish logs: the run has committed its products by then. */
function failingFinish(store: LogStore): LogStore {
  return { ...store, backend: store.backend, finish: async () => Promise.reject(new Error('the log store went away')) };
}

for (const backend of backends()) {
  describe(`run bookkeeping on ${backend.name}`, () => {
    let db: Database;
    let origin: string;
    let release: () => void = () => undefined;
    let held = false;
    const closers: Array<() => Promise<void>> = [];
    const server = createServer((req, res) => {
      if (req.url === '/robots.txt') return void res.writeHead(404).end();
      if (req.url === '/held') {
        // Answers when the test says so: a run in the middle of its work.
        held = true;
        release = () => res.writeHead(200, { 'content-type': 'text/html' }).end(listing(1, null));
        return;
      }
      // Never answers: only a deadline can end a run that fetches it.
      if (req.url === '/never') return;
      const n = Number(/page-(\d+)/.exec(req.url ?? '')?.[1] ?? 1);
      res.writeHead(200, { 'content-type': 'text/html' }).end(listing(n, n < 3 ? n + 1 : null));
    });

    before(async () => {
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      db = await backend.open();
      closers.push(
        () => db.close(),
        () =>
          new Promise((resolve) => {
            server.closeAllConnections();
            server.close(() => resolve());
          }),
      );
    });
    after(async () => {
      for (const close of closers) await close();
    });

    test('the log exists from the start, as running, and the same document ends succeeded', async () => {
      const app: App = await mainAppOn(db, { after: (fn) => closers.unshift(fn) }, { SCRAPE_ALLOW_PRIVATE_NETWORKS: 'true' });
      const running = app.inject({ method: 'POST', url: '/scrape', payload: { url: `${origin}/held` } });
      const log = await until('a running log while the page is being fetched', async () => (await app.inject({ url: '/scrape-logs?status=running' })).json()[0]);
      assert.equal(log.finished_at, null);
      await until('the page to be asked for', () => held);
      release();
      const done = (await running).json();
      assert.equal(done.log_id, log.id, 'the same document');
      const ended = (await app.inject({ url: `/scrape-logs/${log.id}` })).json();
      assert.equal(ended.status, 'succeeded');
      assert.equal(ended.count, 1);
      assert.ok(ended.finished_at >= ended.started_at);
      assert.equal((await app.inject({ url: '/scrape-logs?status=running' })).json().length, 0);
    });

    test('a run longer than SCRAPE_RUN_DEADLINE_MS stops at the deadline with 504; its log says so', { timeout: 60_000 }, async () => {
      const app = await mainAppOn(db, { after: (fn) => closers.unshift(fn) }, { SCRAPE_ALLOW_PRIVATE_NETWORKS: 'true', SCRAPE_RUN_DEADLINE_MS: '1000' });
      // The page never answers and its own timeout is a minute away: the run's deadline is what stops it.
      const res = await app.inject({ method: 'POST', url: '/scrape', payload: { url: `${origin}/never`, timeout_ms: 60_000 } });
      assert.equal(res.statusCode, 504, res.body);
      assert.match(res.json().detail, /deadline of 1 s.*SCRAPE_RUN_DEADLINE_MS/);
      const [log] = (await app.inject({ url: '/scrape-logs?limit=1' })).json();
      assert.equal(log.status, 'failed');
      assert.equal(log.error.status, 504);
    });

    test('a log that cannot be finished after the products committed: the run still answers success, saying so', async () => {
      const logs = failingFinish(createJsonbLogStore(db));
      const context = await createContext(loadConfig({ SCRAPE_ALLOW_PRIVATE_NETWORKS: 'true', LOG_LEVEL: 'silent' }), { db, logs });
      closers.unshift(() => context.close());
      const result = await context.scraping.scraper.scrape({ url: `${origin}/committed` });
      assert.equal(result.count, 1);
      assert.match(result.warning ?? '', /products were stored, but the run's log could not be finished/);
      assert.ok((await db.query('SELECT 1 FROM products WHERE title = $1', ['Lamp 1'])).length > 0);
    });

    test('at start, runs a dead process left running are marked failed (interrupted); recent ones of live processes are not', async () => {
      const logs = createJsonbLogStore(db);
      const old = new Date(Date.now() - 3_600_000).toISOString();
      const recent = new Date().toISOString();
      const base = { source_url: `${origin}/x`, mode: 'static' as const, status: 'running' as const, count: 0, products: [], pages: 0, finished_at: null, duration_ms: null };
      const dead = randomUUID();
      const live = randomUUID();
      await logs.insert({ ...base, id: dead, started_at: old });
      await logs.insert({ ...base, id: live, started_at: recent });
      const context = await createContext(loadConfig({ LOG_LEVEL: 'silent' }), { db, logs });
      closers.unshift(() => context.close());
      const { interrupted } = await context.prepare();
      assert.ok(interrupted >= 1);
      const ended = (await logs.get(dead))!;
      assert.equal(ended.status, 'failed');
      assert.equal(ended.error?.type, 'urn:data-aggregator:problem:interrupted');
      if (db.backend === 'postgresql') {
        // Several processes share PostgreSQL: only a run older than the deadline (and a grace) counts as dead.
        assert.equal((await logs.get(live))!.status, 'running');
      } else {
        // One process per database (the embedded one, its directory locked): every running log at start is a dead run's.
        assert.equal((await logs.get(live))!.status, 'failed');
      }
    });
  });
}
