// The dashboard in a real Chromium against a real service: every screen, a scrape with live progress, the price chart, the live event feed, accessibility.
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { chromium, type Browser, type BrowserContext } from 'playwright-core';
import type { App } from '../../src/http/base-app.js';
import { startFixtureSite, type FixtureSite } from '../fixtures/site.js';
import { dashboardBackends, chromiumPath, mainServiceOn, noChromium, warnIfNoPostgres, openService, type OpenService } from '../helpers.js';
import { startWallSite } from '../fixtures/walls.js';
import { until } from '../wait.js';
import { checkAccessibility, checkPhoneWidth, settled, watchedPage } from './browser-checks.js';

warnIfNoPostgres();

const executablePath = chromiumPath;
const skip = noChromium;

const SCREENS = ['/ui', '/ui/products', '/ui/products/1', '/ui/scrape', '/ui/jobs', '/ui/schedules', '/ui/events', '/ui/logs'];

for (const backend of dashboardBackends()) {
  describe(`dashboard on ${backend.name}`, { skip }, () => {
    let site: FixtureSite;
    let app: App;
    let origin: string;
    let browser: Browser;
    let context: BrowserContext;
    let opened: OpenService;

    before(async () => {
      site = await startFixtureSite({ catalogue: { pages: 2, perPage: 6 } });
      const service = (opened = await openService(
        backend,
        { SCRAPE_ALLOW_PRIVATE_NETWORKS: 'true', SCRAPE_OBEY_ROBOTS: 'false', DEMO_SITE_URL: `${site.url}books/` },
        { work: true },
      ));
      opened.own(site);
      app = service.app;
      await app.listen({ port: 0, host: '127.0.0.1' });
      origin = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
      // The browser loads only this test's own service: no untrusted page, so no need for its sandbox (refused as root).
      browser = await chromium.launch({ executablePath: executablePath!, args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'] });
      opened.own(browser);
      context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
      // A product with a history of four states: made, then its price and stock changed through the API.
      const post = (method: 'POST' | 'PATCH', url: string, payload: object) => app.inject({ method, url, payload });
      assert.equal((await post('POST', '/products', { title: 'Desk lamp', price: 30, currency: 'GBP', availability: 'in_stock' })).statusCode, 201);
      await post('PATCH', '/products/1', { price: 25 });
      await post('PATCH', '/products/1', { availability: 'out_of_stock' });
      await post('PATCH', '/products/1', { availability: 'in_stock', price: 27.5 });
    });
    after(() => opened.close());

    test('every screen loads with no console error and no request leaving the machine; reload and back work', async () => {
      const { page, problems, outside } = await watchedPage(context, origin);
      for (const path of SCREENS) {
        await page.goto(`${origin}${path}`);
        await settled(page);
      }
      assert.equal(await page.locator('main h1').first().textContent(), 'Scrape logs');
      await page.goBack();
      await page.locator('main h1', { hasText: 'Events' }).waitFor();
      await page.reload();
      await page.locator('main h1', { hasText: 'Events' }).waitFor();
      // In-app navigation keeps the page (no reload) and the URL follows.
      await page.getByRole('link', { name: 'Jobs', exact: true }).click();
      await page.locator('main h1', { hasText: 'Jobs' }).waitFor();
      assert.equal(new URL(page.url()).pathname, '/ui/jobs');
      await page.close();
      assert.deepEqual(problems, []);
      assert.deepEqual(outside, []);
    });

    test('products: search, filter and sort through the URL; a row opens the product; an unknown product says so', async () => {
      const { page, problems } = await watchedPage(context, origin);
      await page.goto(`${origin}/ui/products`);
      await page.getByLabel('Search', { exact: true }).fill('desk');
      await page.getByRole('button', { name: 'Apply' }).click();
      // The unfiltered list shows the lamp too: wait for the filter's URL and its one row, not the lamp alone.
      await page.waitForURL(/\?q=desk/);
      await page.locator('table.products tbody tr').nth(1).waitFor({ state: 'detached' });
      await page.getByRole('link', { name: 'Desk lamp' }).waitFor();
      assert.equal(await page.locator('table.products tbody tr').count(), 1);
      await page.getByLabel('Availability').selectOption('out_of_stock');
      await page.getByRole('button', { name: 'Apply' }).click();
      await page.getByText('No product matches these filters.').waitFor();
      await page.getByRole('button', { name: 'Clear filters' }).click();
      await page.getByRole('link', { name: 'Desk lamp' }).click();
      await page.locator('main h1', { hasText: 'Desk lamp' }).waitFor();
      await page.goto(`${origin}/ui/products/999999`);
      await page.getByRole('alert').waitFor();
      assert.match((await page.getByRole('alert').textContent()) ?? '', /Not Found.*Product 999999 does not exist/);
      await page.close();
      assert.deepEqual(
        problems.filter((p) => !p.includes('404')),
        [],
        'only the expected 404',
      );
    });

    test('the product screen plots its history: the chart holds the states, with list price and stock', async () => {
      const { page, problems } = await watchedPage(context, origin);
      await page.goto(`${origin}/ui/products/1`);
      await page.locator('.chart canvas').waitFor();
      const plotted = await page.locator('.chart').evaluate((element) => (element as unknown as { chart: { data: unknown[][] } }).chart.data);
      const history = (await app.inject({ url: '/products/1/history' })).json();
      assert.equal(history.points.length, 4);
      const [xs, prices, , stock] = plotted as [number[], Array<number | null>, unknown, number[]];
      assert.deepEqual(
        xs.slice(0, 4),
        history.points.map((p: { first_seen_at: string }) => Date.parse(p.first_seen_at) / 1000),
      );
      assert.deepEqual(prices.slice(0, 4), [30, 25, 25, 27.5]);
      assert.deepEqual(stock.slice(0, 4), [0, 0, 1, 0], 'the out-of-stock state is shaded');
      // The same points as a table, and the product's events.
      await page.getByText('The points as a table').click();
      assert.equal(await page.locator('table.history tbody tr').count(), 4);
      assert.equal(await page.locator('ol.events li').count(), 5);
      assert.match((await page.locator('ol.events li').first().textContent()) ?? '', /back in stock/);
      await page.close();
      assert.deepEqual(problems, []);
    });

    test('scrape a local shop from the Scrape screen: Explain, then Run shows live progress and then the products found', async () => {
      const { page, problems, outside } = await watchedPage(context, origin);
      await page.goto(`${origin}/ui/scrape`);
      await page.getByLabel('URL', { exact: true }).fill(`${site.url}books/`);
      await page.getByLabel('Pages to follow (next links)').fill('2');
      await page.getByRole('button', { name: 'Explain' }).click();
      await page.getByRole('heading', { name: 'What a scrape would do' }).waitFor();
      assert.match((await page.locator('#explain-h + p').textContent()) ?? '', /12 products/);
      await page.getByRole('button', { name: 'Run' }).click();
      await page.locator('.job-progress').waitFor();
      await page.locator('.job-progress .badge-succeeded').waitFor({ timeout: 30_000 });
      assert.match((await page.locator('.job-progress .counts').textContent()) ?? '', /2 pages done.*12 products/s);
      await page.getByRole('heading', { name: '12 products found' }).waitFor();
      assert.equal(await page.locator('table.found tbody tr').count(), 12);
      await page.close();
      assert.deepEqual(problems, []);
      assert.deepEqual(outside, [], 'the page never loads the scraped site itself');
    });

    test('a change appears in the live event feed through its open stream: no reload, no new request', async () => {
      const { page, problems } = await watchedPage(context, origin);
      await page.goto(`${origin}/ui/events`);
      await page.getByText('Live: new events appear here as they happen.').waitFor();
      const before = await page.locator('ol.events li').count();
      // A mark the page would lose on a reload, and every request it makes from here on.
      await page.evaluate(() => Object.assign(globalThis, { stayedLoaded: true }));
      const requested: string[] = [];
      page.on('request', (request) => requested.push(request.url()));
      const changed = await app.inject({ method: 'PATCH', url: '/products/1', payload: { price: 19.99 } });
      assert.equal(changed.statusCode, 200);
      const [event] = (await app.inject({ url: '/events?order=desc&limit=1' })).json();
      await page.locator(`ol.events li[data-event-id="${event.id}"]`).waitFor();
      assert.equal(await page.evaluate(() => (globalThis as unknown as { stayedLoaded?: boolean }).stayedLoaded), true, 'the page was not reloaded');
      assert.deepEqual(requested, [], 'the event came over the stream opened before the change');
      assert.match((await page.locator('ol.events li').first().textContent()) ?? '', /£27\.50 → £19\.99/);
      assert.equal(await page.locator('ol.events li').count(), before + 1);
      await page.close();
      assert.deepEqual(problems, []);
    });

    test('filters being chosen survive the screen re-rendering: a live event arriving, a list loading', async () => {
      const { page, problems } = await watchedPage(context, origin);
      await page.goto(`${origin}/ui/events`);
      await page.getByText('Live: new events appear here as they happen.').waitFor();
      await page.getByLabel('Product id').fill('1');
      await page.getByLabel('Type').selectOption('price.changed');
      // An event arrives and is shown (a re-render) while the filters are not applied yet.
      await app.inject({ method: 'PATCH', url: '/products/1', payload: { price: 21 } });
      const [event] = (await app.inject({ url: '/events?order=desc&limit=1' })).json();
      await page.locator(`ol.events li[data-event-id="${event.id}"]`).waitFor();
      assert.equal(await page.getByLabel('Product id').inputValue(), '1');
      assert.equal(await page.getByLabel('Type').inputValue(), 'price.changed');
      await page.getByRole('button', { name: 'Apply' }).click();
      await page.waitForURL(/type=price\.changed/);
      assert.equal(await page.getByLabel('Type').inputValue(), 'price.changed', 'the applied filter is shown from the URL');
      // The products list arriving after a choice was made keeps it too.
      await page.goto(`${origin}/ui/products`);
      await page.getByLabel('Availability').selectOption('out_of_stock');
      await page.getByRole('link', { name: 'Desk lamp' }).waitFor();
      assert.equal(await page.getByLabel('Availability').inputValue(), 'out_of_stock');
      await page.close();
      assert.deepEqual(problems, []);
    });

    test("a crawl's screen says what its limits cut; a scrape's says nothing of limits", async () => {
      const res = await app.inject({ method: 'POST', url: '/jobs', payload: { url: `${site.url}books/`, crawl: { max_pages: 3, exclude: ['**/category/**'] } } });
      assert.equal(res.statusCode, 202, res.body);
      const { id } = res.json() as { id: string };
      const job = await until('the crawl to end', async () => {
        const body = (await app.inject({ url: `/jobs/${id}` })).json() as { status: string; progress: { links_over_max_pages: number } };
        return body.status === 'succeeded' ? body : false;
      });
      assert.ok(job.progress.links_over_max_pages > 0, JSON.stringify(job));
      const { page, problems } = await watchedPage(context, origin);
      await page.goto(`${origin}/ui/jobs/${id}`);
      await page.locator('.job-progress .badge-succeeded').waitFor();
      const limits = (await page.locator('.job-progress .limits').textContent()) ?? '';
      assert.equal(limits, `Limits: ${job.progress.links_over_max_pages} links not followed (max_pages was spent).`);
      const scrape = (await app.inject({ method: 'POST', url: '/jobs', payload: { url: `${site.url}books/` } })).json() as { id: string };
      await page.goto(`${origin}/ui/jobs/${scrape.id}`);
      await page.locator('.job-progress .badge-succeeded').waitFor({ timeout: 30_000 });
      assert.equal(await page.locator('.job-progress .limits').count(), 0);
      await page.close();
      assert.deepEqual(problems, []);
    });

    test('a blocked run shows as blocked: the job, its log and the jobs and logs lists say which wall and why', async () => {
      const walls = await startWallSite();
      try {
        const res = await app.inject({ method: 'POST', url: '/jobs', payload: { url: `${walls.url}walls/cloudflare-challenge` } });
        assert.equal(res.statusCode, 202, res.body);
        const { id } = res.json() as { id: string };
        const job = await until('the job to fail', async () => {
          const body = (await app.inject({ url: `/jobs/${id}` })).json() as { status: string; log_ids: string[] };
          return body.status === 'failed' ? body : false;
        });
        const { page, problems } = await watchedPage(context, origin);
        await page.goto(`${origin}/ui/jobs/${id}`);
        await page.locator('.job-progress .badge-blocked').waitFor();
        const box = (await page.locator('.job-progress [role="alert"]').textContent()) ?? '';
        assert.match(box, /Blocked by the site: a bot check's challenge/);
        assert.match(box, /header cf-mitigated: challenge \(Cloudflare\)/);
        await page.goto(`${origin}/ui/jobs`);
        await page.locator(`tr:has(a[href="/ui/jobs/${id}"]) .badge-blocked`).waitFor();
        await page.goto(`${origin}/ui/logs`);
        await page.locator(`tr:has(a[href="/ui/logs/${job.log_ids.at(-1)}"]) .badge-blocked`).waitFor();
        await page.goto(`${origin}/ui/logs/${job.log_ids.at(-1)}`);
        assert.match((await page.locator('[role="alert"]').textContent()) ?? '', /Blocked by the site/);
        await page.close();
        assert.deepEqual(problems, []);
      } finally {
        await walls.close();
      }
    });

    test('jobs and schedules: create a schedule, pause and resume it, run it now and follow the job; logs show the raw document', async () => {
      const { page, problems } = await watchedPage(context, origin);
      await page.goto(`${origin}/ui/schedules`);
      await page.getByLabel('Name').fill('books hourly');
      await page.getByLabel('URL to scrape (empty: the demo)').fill(`${site.url}books/`);
      await page.getByRole('button', { name: 'Create' }).click();
      const row = page.locator('tbody tr', { hasText: 'books hourly' });
      await row.waitFor();
      await row.getByRole('button', { name: 'Pause' }).click();
      await row.locator('.badge-paused').waitFor();
      await row.getByRole('button', { name: 'Resume' }).click();
      await row.getByRole('button', { name: 'Pause' }).waitFor();
      await row.getByRole('button', { name: 'Run now' }).click();
      await page.waitForURL(/\/ui\/jobs\/[0-9a-f-]{36}$/);
      await page.locator('.job-progress .badge-succeeded').waitFor({ timeout: 30_000 });
      await page.getByRole('link', { name: 'Jobs', exact: true }).click();
      await page.locator('tbody tr').nth(1).waitFor();
      assert.ok((await page.locator('tbody tr').count()) >= 2, "the scrape screen's job and this one");
      await page.goto(`${origin}/ui/logs`);
      await page.getByLabel('Status').selectOption('succeeded');
      await page.waitForURL(/status=succeeded/);
      await page.locator('tbody tr a').first().click();
      await page.locator('pre.raw').waitFor();
      assert.match((await page.locator('pre.raw').textContent()) ?? '', /"status": "succeeded"/);
      await page.close();
      assert.deepEqual(problems, []);
    });

    test('with API_KEY set: reads work without the key, a write says what to do, and the key set for the tab makes it work', async () => {
      const keyedDb = await backend.open();
      opened.own(keyedDb);
      const keyed = await mainServiceOn(
        keyedDb,
        { after: (fn) => opened.onClose(fn) },
        { API_KEY: 'sesame-0123456789', SCRAPE_ALLOW_PRIVATE_NETWORKS: 'true', DEMO_SITE_URL: `${site.url}books/` },
      );
      await keyed.app.listen({ port: 0, host: '127.0.0.1' });
      const keyedOrigin = `http://127.0.0.1:${(keyed.app.server.address() as AddressInfo).port}`;
      const { page } = await watchedPage(context, keyedOrigin);
      // Product reads are open.
      await page.goto(`${keyedOrigin}/ui/products`);
      await page.getByText('No products yet').waitFor();
      // The live event stream is held open: it needs the key, and the screen says so.
      await page.goto(`${keyedOrigin}/ui/events`);
      await page.getByText('The live feed needs the API key').waitFor();
      // Schedules are operations: the screen says what to do.
      await page.goto(`${keyedOrigin}/ui/schedules`);
      const alert = page.getByRole('alert').first();
      await alert.waitFor();
      assert.match((await alert.textContent()) ?? '', /Unauthorized.*API key.*kept for this tab only/s);
      await page.getByRole('button', { name: 'API key' }).click();
      await page.getByLabel('API key (kept for this tab only)').fill('sesame-0123456789');
      await page.getByRole('button', { name: 'Save' }).click();
      // The screen reloads with the key: it now reads, and writes.
      await page.getByText('No schedules yet').waitFor();
      await page.getByRole('button', { name: 'Create' }).click();
      await page.locator('tbody tr').first().waitFor();
      // Live progress streams send the key too (fetch, not EventSource): run the schedule and follow it.
      await page.getByRole('button', { name: 'Run now' }).click();
      await page.waitForURL(/\/ui\/jobs\/[0-9a-f-]{36}$/);
      await page.locator('.job-progress h2 .badge').waitFor();
      assert.equal(await page.locator('.job-progress .error').count(), 0, 'the stream was not refused');
      // Kept in sessionStorage: this tab only.
      assert.equal(await page.evaluate(() => sessionStorage.getItem('data-aggregator.api-key')), 'sesame-0123456789');
      assert.equal(await page.evaluate(() => localStorage.length), 0);
      await page.close();
    });

    test('on a 390 px phone the screens fit the width', async () => {
      await checkPhoneWidth(browser, origin, ['/ui/products', '/ui/products/1', '/ui/scrape', '/ui/schedules']);
    });

    test('accessibility: axe-core finds no serious or critical violation on any screen, nor on the live and filled states', async () => {
      await checkAccessibility(browser, origin, SCREENS, async (page, check) => {
        // The Scrape screen filled: an explanation, then a run's live progress held open by a page that waits, then its products.
        const held = site.hold('/books/catalogue/page-2.html');
        await page.goto(`${origin}/ui/scrape`);
        await page.getByLabel('URL', { exact: true }).fill(`${site.url}books/`);
        await page.getByLabel('Pages to follow (next links)').fill('2');
        await page.getByRole('button', { name: 'Explain' }).click();
        await page.getByRole('heading', { name: 'What a scrape would do' }).waitFor();
        await check('/ui/scrape with an explanation');
        await page.getByRole('button', { name: 'Run' }).click();
        await page.locator('.job-progress').waitFor();
        await until('the run to wait on its second page', () => site.inFlight().includes('/books/catalogue/page-2.html'));
        await check('/ui/scrape with a run in progress');
        // The same job's own screen while it runs.
        const [running] = (await app.inject({ url: '/jobs?status=running' })).json() as Array<{ id: string }>;
        assert.ok(running, 'a job is running');
        await page.goto(`${origin}/ui/jobs/${running.id}`);
        await page.locator('.job-progress').waitFor();
        assert.equal(await page.locator('.job-progress .badge-succeeded').count(), 0, 'still running while checked');
        await check('/ui/jobs/{id} with live progress');
        held.release();
        await page.locator('.job-progress .badge-succeeded').waitFor({ timeout: 30_000 });
        await check('/ui/jobs/{id} ended');
        await page.goto(`${origin}/ui/scrape`);
        await page.getByLabel('URL', { exact: true }).fill(`${site.url}books/`);
        await page.getByRole('button', { name: 'Run' }).click();
        await page.getByRole('heading', { name: /products found/ }).waitFor({ timeout: 30_000 });
        await check('/ui/scrape with the products found');
        // A log's own screen, with its raw document.
        const [log] = (await app.inject({ url: '/scrape-logs?limit=1' })).json() as Array<{ id: string }>;
        await page.goto(`${origin}/ui/logs/${log!.id}`);
        await page.locator('pre.raw').waitFor();
        await check('/ui/logs/{id}');
      });
    });
  });
}
