// Pages built to exhaust the extractor: their run stops at its deadline with a 504 and a log that says so.
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gzipSync } from 'node:zlib';
import { after, before, describe, test } from 'node:test';
import type { Database } from '../../src/db/database.js';
import type { App } from '../../src/http/base-app.js';
import { renderCataloguePage } from '../fixtures/books-catalogue.js';
import { assertProblem, backends, mainServiceOn, warnIfNoPostgres } from '../helpers.js';

warnIfNoPostgres();

const DEPTH = 300_000;
/** 300,000 nested <div>s: 3.3 MB, under the 5 MiB cap, seconds to extract even flattened. */
const DEEP = `<!doctype html><html><head><title>Deep</title></head><body>${'<div>'.repeat(DEPTH)}x${'</div>'.repeat(DEPTH)}</body></html>`;
/** A listing of 2,000 cards, explained: its lists shown in part. */
const LISTING = renderCataloguePage(1, { pages: 1, perPage: 2_000 })!;
/** A big ordinary page: extracted in a thread too. */
const BIG = renderCataloguePage(1)!.replace('</body>', `<div hidden>${'<p>filler paragraph of a long page</p>'.repeat(3_000)}</div></body>`);

/** Sent compressed (some kilobytes), its download takes next to nothing of a page's timeout. */
const DEEP_GZIP = gzipSync(DEEP);

async function startSite() {
  const server = createServer((req, res) => {
    const send = () =>
      req.url === '/listing'
        ? res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(LISTING)
        : req.url?.startsWith('/big')
          ? res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(BIG)
          : res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'content-encoding': 'gzip' }).end(DEEP_GZIP);
    // The late page arrives within the run's deadline, leaving its extraction to pass it.
    if (req.url === '/deep-late') setTimeout(send, 2_500);
    else send();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => {
      server.closeAllConnections();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

for (const backend of backends()) {
  describe(`hostile pages on ${backend.name}`, () => {
    let app: App;
    let patient: App;
    let db: Database;
    let site: Awaited<ReturnType<typeof startSite>>;
    const closers: Array<() => Promise<void>> = [];

    before(async () => {
      site = await startSite();
      db = await backend.open();
      closers.push(
        () => db.close(),
        () => site.close(),
      );
      const env = { SCRAPE_ALLOW_PRIVATE_NETWORKS: 'true', SCRAPE_OBEY_ROBOTS: 'false', EXTRACT_THREADS: '1' };
      app = (await mainServiceOn(db, { after: (fn) => closers.unshift(fn) }, { ...env, SCRAPE_RUN_DEADLINE_MS: '3000' }, { work: true })).app;
      // The default deadline and a long page timeout: a thread started afresh on a busy machine takes its time.
      patient = (await mainServiceOn(db, { after: (fn) => closers.unshift(fn) }, { ...env, SCRAPE_TIMEOUT_MS: '90000' })).app;
    });
    after(async () => {
      for (const close of closers) await close();
    });

    const scrape = (body: object, on = app) => on.inject({ method: 'POST', url: '/scrape', payload: body });
    const logOf = async (id: string) => (await app.inject({ url: `/scrape-logs/${id}` })).json();
    const latestLog = async () => (await app.inject({ url: '/scrape-logs?limit=1' })).json()[0];

    test('a page still being extracted at the run deadline: 504 naming SCRAPE_RUN_DEADLINE_MS, its log failed with that error (not interrupted)', async () => {
      const problem = assertProblem(await scrape({ url: `${site.url}/deep-late` }), 504);
      assert.equal(problem.type, 'urn:data-aggregator:problem:upstream-timeout');
      assert.match(problem.detail, /SCRAPE_RUN_DEADLINE_MS/);
      const log = await logOf((await latestLog()).id);
      assert.equal(log.status, 'failed');
      assert.equal(log.error.type, 'urn:data-aggregator:problem:upstream-timeout');
      assert.equal(log.error.status, 504);
      assert.equal(log.count, 0);
    });

    test('a page stopped at its page timeout (timeout_ms) answers 504, and the next big page is extracted', async () => {
      // Loading or extracting, whichever the timeout catches on this machine (extraction stopped by
      // timeout_ms is shown in test/scraping/extract/pool.test.ts): either way a 504 and a failed log.
      assertProblem(await scrape({ url: `${site.url}/deep`, timeout_ms: 1000 }, patient), 504);
      assert.equal((await latestLog()).status, 'failed');
      const ok = await scrape({ url: `${site.url}/big` }, patient);
      assert.equal(ok.statusCode, 200, ok.body);
      assert.equal(ok.json().count, 20);
    });

    test('explaining a 2,000-card listing answers the first 100 of each list and says what was cut; every locator is bounded', async () => {
      const res = await patient.inject({ method: 'POST', url: '/scrape/explain', payload: { url: `${site.url}/listing` } });
      assert.equal(res.statusCode, 200, res.body.slice(0, 500));
      assert.ok(res.body.length < 2_000_000, `an answer of ${res.body.length} characters`);
      const answer = res.json();
      assert.equal(answer.count, 2000);
      assert.equal(answer.products.length, 100);
      assert.deepEqual(answer.truncated, [{ list: 'products', shown: 100, total: 2000 }]);
      const [page] = answer.pages;
      assert.equal(page.items.length, 100);
      assert.equal(page.candidates['product-cards'].length, 100);
      assert.deepEqual(
        page.truncated.find((cut: { list: string }) => cut.list === 'items'),
        { list: 'items', shown: 100, total: 2000 },
      );
      assert.ok(page.truncated.some((cut: { list: string; total: number }) => cut.list === 'candidates.product-cards' && cut.total === 2000));
      const locators = JSON.stringify(answer).match(/"locator":"(?:[^"\\]|\\.)*"/g) ?? [];
      assert.ok(locators.length > 0);
      for (const locator of locators) assert.ok(locator.length <= 1000 + 14, locator.slice(0, 80));
    });
  });
}
