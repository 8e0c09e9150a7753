// The Site rules screen and explain's "pin" in a real Chromium against a real service: list, create, edit, delete, pin a candidate in one step; axe.
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { chromium, type Browser, type BrowserContext } from 'playwright-core';
import type { App } from '../../src/http/base-app.js';
import { startFixtureSite, type FixtureSite } from '../fixtures/site.js';
import { dashboardBackends, chromiumPath, noChromium, warnIfNoPostgres, openService, type OpenService } from '../helpers.js';
import { until } from '../wait.js';
import { checkAccessibility, settled, watchedPage } from './browser-checks.js';

/** The browser logs the 422 the form then shows: provoked on purpose. */
const SHOWN_422 = /status of 422/;

warnIfNoPostgres();

for (const backend of dashboardBackends()) {
  describe(`site rules screens on ${backend.name}`, { skip: noChromium }, () => {
    let app: App;
    let origin: string;
    let site: FixtureSite;
    let browser: Browser;
    let context: BrowserContext;
    let opened: OpenService;
    const inject = (method: string, url: string, payload?: unknown) =>
      app.inject({ method: method as 'GET', url, ...(payload === undefined ? {} : { payload: payload as object }) });

    before(async () => {
      site = await startFixtureSite();
      const service = (opened = await openService(backend, { SCRAPE_ALLOW_PRIVATE_NETWORKS: 'true', SCRAPE_OBEY_ROBOTS: 'false' }));
      opened.own(site);
      app = service.app;
      await app.listen({ port: 0, host: '127.0.0.1' });
      origin = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
      browser = await chromium.launch({ executablePath: chromiumPath!, args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'] });
      opened.own(browser);
      context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    });
    after(() => opened.close());

    test('Site rules: create with the form, a bad selector shown as the 422 names it, edit, delete', async () => {
      const { page, problems, outside } = await watchedPage(context, origin, { expected: SHOWN_422, acceptDialogs: true });
      await page.goto(`${origin}/ui/site-rules`);
      await settled(page);
      await page.getByText('No site rules yet.').waitFor();
      await page.getByLabel('Host or *.host').fill('*.shop.example');
      await page.getByLabel('Price: selector or path', { exact: true }).fill('div[');
      await page.getByRole('button', { name: 'Create' }).click();
      await page.locator('.error', { hasText: '/fields/price/selector' }).waitFor();
      await page.getByLabel('Price: selector or path', { exact: true }).fill('#buy .now');
      await page.getByLabel('SKU: kind').selectOption('json_path');
      await page.getByLabel('SKU: selector or path').fill('$.props.sku');
      await page.getByRole('button', { name: 'Create' }).click();
      const row = page.locator('table.site-rules tbody tr', { hasText: '*.shop.example' });
      await row.waitFor();
      assert.match((await row.textContent()) ?? '', /Price: CSS #buy \.now.*SKU: JSON \$\.props\.sku/);
      const [stored] = (await inject('GET', '/site-rules')).json();
      assert.deepEqual(stored.fields, { price: { selector: '#buy .now' }, sku: { json_path: '$.props.sku' } });

      await row.getByRole('button', { name: 'Edit' }).click();
      await page.getByRole('heading', { name: 'Edit the rule for *.shop.example' }).waitFor();
      await page.getByLabel('Page type').selectOption('product');
      await page.getByRole('button', { name: 'Save' }).click();
      await row.getByText('product').waitFor();
      const edited = (await inject('GET', `/site-rules/${stored.id}`)).json();
      assert.deepEqual([edited.page_type, edited.fields], ['product', stored.fields], 'the edit keeps the fields it did not change');

      await row.getByRole('button', { name: 'Delete' }).click();
      await page.getByText('No site rules yet.').waitFor();
      assert.deepEqual((await inject('GET', '/site-rules')).json(), []);
      await page.close();
      assert.deepEqual(problems, []);
      assert.deepEqual(outside, []);
    });

    test("explain: pick the buy box's price among the candidates and pin it in one step; the next explain reads it from the rule", async () => {
      const { page, problems, outside } = await watchedPage(context, origin);
      const url = `${site.url}pages/site-rules/kettle.html`;
      await page.goto(`${origin}/ui/scrape`);
      await settled(page);
      await page.getByLabel('URL', { exact: true }).fill(url);
      await page.getByRole('button', { name: 'Explain' }).click();
      const pin = page.locator('form.pin-rule');
      await pin.waitFor();
      const pick = pin.getByLabel('Price: candidate', { exact: true });
      const options = await pick.locator('option').allTextContents();
      const visible = options.findIndex((o) => o.startsWith('64 — visible'));
      assert.ok(visible > 0, options.join(' | '));
      await pick.selectOption(String(visible));
      await pin.getByRole('button', { name: 'Pin price' }).click();
      await pin.getByText(/Pinned price for 127\.0\.0\.1/).waitFor();
      const rules = (await inject('GET', '/site-rules')).json();
      assert.deepEqual(
        rules.map((r: { host_pattern: string; fields: object }) => [r.host_pattern, r.fields]),
        [['127.0.0.1', { price: { selector: 'div#buy > p > span' } }]],
      );
      // A second pin adds to the same rule.
      await pin.getByLabel('SKU: candidate').selectOption('0');
      await pin.getByRole('button', { name: 'Pin sku' }).click();
      await until('the rule to pin the sku too', async () => (await inject('GET', '/site-rules')).json()[0]?.fields.sku !== undefined);
      assert.deepEqual((await inject('GET', '/site-rules')).json()[0].fields.sku, { json_path: '$.sku' });

      await page.getByRole('button', { name: 'Explain' }).click();
      await page.locator('.explained-page + .table-wrap table, section .table-wrap table').filter({ hasText: 'site-rule' }).first().waitFor();
      const explained = (await inject('POST', '/scrape/explain', { url })).json();
      assert.deepEqual([explained.products[0].price, explained.products[0].provenance.price.source], [64, 'site-rule']);
      await page.close();
      assert.deepEqual(problems, []);
      assert.deepEqual(outside, []);
      await inject('DELETE', `/site-rules/${rules[0].id}`);
    });

    test('accessibility: axe-core finds no serious or critical violation on the Site rules screen and the explain with its pin form', async () => {
      await inject('POST', '/site-rules', { host_pattern: 'axe.example', fields: { title: { selector: 'h1' } }, note: 'for axe' });
      await checkAccessibility(browser, origin, [], async (page, check) => {
        await page.goto(`${origin}/ui/site-rules`);
        await settled(page);
        await page.locator('table.site-rules').waitFor();
        await check('site rules');
        await page.goto(`${origin}/ui/scrape`);
        await settled(page);
        await page.getByLabel('URL', { exact: true }).fill(`${site.url}pages/site-rules/kettle.html`);
        await page.getByRole('button', { name: 'Explain' }).click();
        await page.locator('form.pin-rule').waitFor();
        await check('explain with pin');
      });
    });
  });
}
