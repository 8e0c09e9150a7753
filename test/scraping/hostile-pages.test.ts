// Pages that outlast their run: the run deadline and the page timeout stop them with a 504 and a log that says so, whatever the machine's speed.
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import type { Context } from '../../src/context.js';
import type { Database } from '../../src/db/database.js';
import type { App } from '../../src/http/base-app.js';
import { UpstreamTimeout } from '../../src/problems.js';
import type { PageExtractor } from '../../src/scraping/extract/pool.js';
import { createScraper } from '../../src/scraping/scrape-run.js';
import { renderCataloguePage } from '../fixtures/books-catalogue.js';
import { assertProblem, backends, mainServiceOn, warnIfNoPostgres, openService, type OpenService } from '../helpers.js';
import { until } from '../wait.js';

warnIfNoPostgres();

/** A listing of 2,000 cards, explained: its lists shown in part. */
const LISTING = renderCataloguePage(1, { pages: 1, perPage: 2_000 })!;
/** A big ordinary page: extracted in a thread. */
const BIG = renderCataloguePage(1)!.replace('</body>', `<div hidden>${'<p>filler paragraph of a long page</p>'.repeat(3_000)}</div></body>`);

/** The test's site: `/never` is asked for and never answered, until the client gives it up. */
async function startSite() {
  const unanswered = new Set<IncomingMessage>();
  const server = createServer((req, res) => {
    if (req.url?.startsWith('/never')) {
      unanswered.add(req);
      res.on('close', () => unanswered.delete(req));
      return;
    }
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(req.url === '/listing' ? LISTING : BIG);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    /** Requests for /never whose client is still waiting. */
    unanswered: () => unanswered.size,
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
    let context: Context;
    let db: Database;
    let site: Awaited<ReturnType<typeof startSite>>;
    let opened: OpenService;

    before(async () => {
      site = await startSite();
      const env = { SCRAPE_ALLOW_PRIVATE_NETWORKS: 'true', SCRAPE_OBEY_ROBOTS: 'false', EXTRACT_THREADS: '1' };
      // The shortest run deadline there is, and a page timeout far past it: a page never answered meets the deadline first.
      const hasty = (opened = await openService(backend, { ...env, SCRAPE_RUN_DEADLINE_MS: '1000', SCRAPE_TIMEOUT_MS: '90000' }, { work: true }));
      opened.own(site);
      db = opened.db;
      app = hasty.app;
      context = hasty.context;
      // The default deadline and a long page timeout: a thread started afresh on a busy machine takes its time.
      patient = (await mainServiceOn(db, { after: (fn) => opened.onClose(fn) }, { ...env, SCRAPE_TIMEOUT_MS: '90000' })).app;
    });
    after(() => opened.close());

    const scrape = (body: object, on = app) => on.inject({ method: 'POST', url: '/scrape', payload: body });
    const logOf = async (id: string) => (await app.inject({ url: `/scrape-logs/${id}` })).json();
    const latestLog = async () => (await app.inject({ url: '/scrape-logs?limit=1' })).json()[0];

    test('a page still unanswered at the run deadline: 504 naming SCRAPE_RUN_DEADLINE_MS, the page given up, its log failed with that error (not interrupted)', async () => {
      // Only the deadline can end this run, however fast the machine: the page is never answered, and its
      // page timeout is 90 s. The run lets go of the page: no request for it is left open.
      const problem = assertProblem(await scrape({ url: `${site.url}/never?run=deadline` }), 504);
      assert.equal(problem.type, 'urn:data-aggregator:problem:upstream-timeout');
      assert.match(problem.detail, /deadline of 1 s \(SCRAPE_RUN_DEADLINE_MS\)/);
      await until('no request for the page to be left open', () => site.unanswered() === 0);
      const log = await logOf((await latestLog()).id);
      assert.equal(log.status, 'failed');
      assert.equal(log.error.type, 'urn:data-aggregator:problem:upstream-timeout');
      assert.equal(log.error.status, 504);
      assert.match(log.error.detail, /SCRAPE_RUN_DEADLINE_MS/);
      assert.equal(log.count, 0);
    });

    test('explain is a run too: a page still unanswered at the run deadline is a 504 naming SCRAPE_RUN_DEADLINE_MS, with what was fetched', async () => {
      const problem = assertProblem(await app.inject({ method: 'POST', url: '/scrape/explain', payload: { url: `${site.url}/never?run=explain` } }), 504);
      assert.match(problem.detail, /run deadline of 1 s \(SCRAPE_RUN_DEADLINE_MS\)/);
      assert.equal(problem.explanation.fetches.length, 1);
      await until('no request for the page to be left open', () => site.unanswered() === 0);
    });

    test('a page still being extracted at the run deadline: its extraction is stopped, the run fails naming SCRAPE_RUN_DEADLINE_MS, its log failed with that error', async () => {
      // The run's deadline is a signal the test aborts once the page is loaded and its extraction under
      // way; the extraction is held until its signal aborts, then handed to the real one, which must stop.
      let expire: (() => void) | undefined;
      const overDeadline = new DOMException('The operation was aborted due to timeout', 'TimeoutError');
      let extracting: AbortSignal | undefined;
      const heldExtraction: PageExtractor = async (html, pageUrl, options, signal) => {
        extracting = signal;
        await new Promise((resolve) => (signal?.aborted ? resolve(undefined) : signal?.addEventListener('abort', resolve, { once: true })));
        return context.scraping.extract(html, pageUrl, options, signal);
      };
      const { scrape: settings } = context.config;
      const scraper = createScraper({
        db: context.db,
        loader: context.scraping.loader,
        extract: heldExtraction,
        writer: context.writer,
        logs: context.logs,
        demoSiteUrl: settings.demoSiteUrl,
        allowPrivateNetworks: true,
        maxConcurrent: 1,
        maxQueued: 1,
        runDeadlineMs: 3_000,
        defaultTimeoutMs: 90_000,
        deadline: () => {
          const deadline = new AbortController();
          expire = () => deadline.abort(overDeadline);
          return deadline.signal;
        },
      });
      let logId: string | undefined;
      const run = scraper.scrape({ url: `${site.url}/big` }, { onLog: (id) => (logId = id) });
      run.catch(() => undefined);
      const signal = await until('the page to be loaded and its extraction under way', () => extracting);
      assert.equal(signal.aborted, false, 'the extraction began before the deadline');
      expire!();
      await assert.rejects(run, (error: unknown) => {
        assert.ok(error instanceof UpstreamTimeout, String(error));
        assert.match(error.message, /deadline of 3 s \(SCRAPE_RUN_DEADLINE_MS\)/);
        return true;
      });
      assert.equal(signal.reason, overDeadline, 'the deadline, not the page timeout, stopped the extraction');
      const log = await logOf(logId!);
      assert.equal(log.status, 'failed');
      assert.equal(log.error.type, 'urn:data-aggregator:problem:upstream-timeout');
      assert.equal(log.error.status, 504);
      assert.match(log.error.detail, /SCRAPE_RUN_DEADLINE_MS/);
      assert.equal(log.count, 0);
    });

    test('a page still unanswered at its page timeout (timeout_ms) answers 504 naming it, and the next big page is extracted', async () => {
      // The run deadline is the default five minutes: only the page timeout can end this page.
      const problem = assertProblem(await scrape({ url: `${site.url}/never?run=timeout`, timeout_ms: 1000 }, patient), 504);
      assert.match(problem.detail, /did not answer within 1000 ms/);
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
