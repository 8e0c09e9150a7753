// The alerts, rules, channels and tags screens in a real Chromium against a real service: create, preview, test, alert me, history, import; axe on each.
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { chromium, type Browser, type BrowserContext } from 'playwright-core';
import type { App } from '../../src/http/base-app.js';
import { startReceiver, type Receiver } from '../alerts/receiver.js';
import { dashboardBackends, chromiumPath, noChromium, warnIfNoPostgres, openService, type OpenService } from '../helpers.js';
import { until } from '../wait.js';
import { checkAccessibility, checkPhoneWidth, settled, watchedPage } from './browser-checks.js';

warnIfNoPostgres();

const SCREENS = ['/ui/alerts', '/ui/rules', '/ui/channels', '/ui/tags', '/ui/products/1'];

for (const backend of dashboardBackends()) {
  describe(`alerts screens on ${backend.name}`, { skip: noChromium }, () => {
    let app: App;
    let origin: string;
    let browser: Browser;
    let context: BrowserContext;
    let receiver: Receiver;
    let failing: Receiver;
    let opened: OpenService;
    const inject = (method: string, url: string, payload?: unknown) =>
      app.inject({ method: method as 'GET', url, ...(payload === undefined ? {} : { payload: payload as object }) });

    before(async () => {
      receiver = await startReceiver();
      failing = await startReceiver();
      failing.answer = { status: 503, body: 'down' };
      const service = (opened = await openService(backend, { SCRAPE_ALLOW_PRIVATE_NETWORKS: 'true', ALERT_RETRY_DELAYS_MS: '20' }, { work: true }));
      opened.own(receiver);
      opened.own(failing);
      app = service.app;
      await app.listen({ port: 0, host: '127.0.0.1' });
      origin = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
      browser = await chromium.launch({ executablePath: chromiumPath!, args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'] });
      opened.own(browser);
      context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
      // Product 1 with a history of drops, for previews; and a channel that fails, to be disabled.
      assert.equal((await inject('POST', '/products', { title: 'Espresso machine', price: 300, currency: 'EUR', availability: 'in_stock' })).statusCode, 201);
      for (const price of [260, 280, 240]) await inject('PATCH', '/products/1', { price });
      const broken = (await inject('POST', '/channels', { name: 'Broken gotify', config: { kind: 'gotify', server_url: `${failing.base}/`, token: 'AgotifyS3cretTok' } })).json();
      await inject('POST', '/alert-rules', {
        name: 'Anything',
        scope: { type: 'all' },
        condition: { type: 'availability_changed' },
        cooldown_minutes: 0,
        channel_ids: [broken.id],
      });
      await inject('PATCH', '/products/1', { availability: 'limited' });
      await until('the failing channel to be disabled', async () => (await inject('GET', `/channels/${broken.id}`)).json().enabled === false);
      await inject('PATCH', '/products/1', { availability: 'in_stock' });
    });
    after(() => opened.close());

    test('every alerts screen loads with no console error and no request leaving the machine; the tabs move between them', async () => {
      const { page, problems, outside } = await watchedPage(context, origin);
      for (const path of SCREENS) {
        await page.goto(`${origin}${path}`);
        await settled(page);
      }
      await page.goto(`${origin}/ui/alerts`);
      await page.getByRole('navigation', { name: 'Alerts' }).getByRole('link', { name: 'Channels' }).click();
      await page.locator('main h1', { hasText: 'Channels' }).waitFor();
      assert.equal(new URL(page.url()).pathname, '/ui/channels');
      await page.close();
      assert.deepEqual(problems, []);
      assert.deepEqual(outside, []);
    });

    test('channels: a disabled channel shows its reason; a new one made with the form sends a test message with Test', async () => {
      const { page, problems } = await watchedPage(context, origin);
      await page.goto(`${origin}/ui/channels`);
      const broken = page.locator('tbody tr', { hasText: 'Broken gotify' });
      await broken.locator('.badge-disabled').waitFor();
      assert.match((await broken.locator('.disabled-reason').textContent()) ?? '', /Delivery failed 2 times.*HTTP 503/);
      assert.doesNotMatch((await page.content()) ?? '', /AgotifyS3cretTok/);
      await page.getByLabel('Name', { exact: true }).fill('My phone');
      await page.getByLabel('Kind').selectOption('ntfy');
      await page.getByLabel('Server').fill(`${receiver.base}/`);
      await page.getByLabel('Topic').fill('ui-phone-topic');
      await page.getByRole('button', { name: 'Create channel' }).click();
      const row = page.locator('tbody tr', { hasText: 'My phone' });
      await row.waitFor();
      await row.getByRole('button', { name: 'Test' }).click();
      await row.getByText(/Test sent/).waitFor();
      assert.ok(receiver.received.some((r) => r.body.topic === 'ui-phone-topic' && String(r.body.title).startsWith('Test: ')));
      // A 422 from the API says which field.
      await page.getByLabel('Name', { exact: true }).fill('Nowhere');
      await page.getByLabel('Kind').selectOption('url');
      await page.getByLabel('URL', { exact: true }).fill('carrier-pigeon://coop/7');
      await page.getByRole('button', { name: 'Create channel' }).click();
      await page
        .getByRole('alert')
        .getByText(/Unsupported channel URL scheme/)
        .waitFor();
      await page.close();
      assert.deepEqual(
        problems.filter((p) => !p.includes('422')),
        [],
      );
    });

    test('rules: the form previews "would have fired N times" from the stored history, then creates the rule', async () => {
      const { page, problems } = await watchedPage(context, origin);
      await page.goto(`${origin}/ui/rules`);
      await page.getByLabel('Name', { exact: true }).fill('Espresso drops');
      await page.getByLabel('Watch').selectOption('product');
      await page.getByLabel('Product id').fill('1');
      await page.getByLabel('When').selectOption('price_drop');
      await page.getByLabel('At least %').fill('5');
      await page.getByLabel('Cool-down (minutes)').fill('0');
      const form = page.locator('form.rule-form');
      await form.getByRole('button', { name: 'Preview' }).click();
      const summary = page.locator('.preview [role="status"]');
      await summary.waitFor();
      assert.equal(await summary.textContent(), 'This rule would have fired 2 times in the last 30 days.', 'the drops 300→260 and 280→240');
      await page.getByRole('button', { name: 'Create rule' }).click();
      const row = page.locator('tbody tr', { hasText: 'Espresso drops' });
      await row.waitFor();
      await row.getByRole('button', { name: 'Preview' }).click();
      await row.getByText('This rule would have fired 2 times in the last 30 days.').waitFor();
      await row.getByRole('button', { name: 'Pause' }).click();
      await row.locator('.badge-paused').waitFor();
      await page.close();
      assert.deepEqual(problems, []);
    });

    test('a product: tags added and removed, "Alert me" prefilled from its price; the alert then shows in the history with its delivery', async () => {
      const { page, problems } = await watchedPage(context, origin);
      await page.goto(`${origin}/ui/products/1`);
      await page.getByLabel('Add tags (comma-separated)').fill('Kitchen, espresso');
      await page.getByRole('button', { name: 'Add', exact: true }).click();
      await page.locator('.tag', { hasText: 'kitchen' }).waitFor();
      await page.getByRole('button', { name: 'Remove tag espresso' }).click();
      await page.locator('.tag', { hasText: 'espresso' }).waitFor({ state: 'detached' });
      await page.getByRole('button', { name: /Price at or below €216\.00/ }).click();
      assert.equal(await page.getByLabel('Target price').inputValue(), '216');
      await page.getByLabel('Cool-down (minutes)').fill('0');
      await page.getByRole('checkbox', { name: /My phone/ }).check();
      await page.getByRole('button', { name: 'Create rule' }).click();
      await page.getByText(/Rule ".*Price at or below €216\.00" created/).waitFor();
      assert.equal((await inject('PATCH', '/products/1', { price: 199 })).statusCode, 200);
      await until('the alert sent', () => receiver.received.find((r) => r.body.topic === 'ui-phone-topic' && !String(r.body.title).startsWith('Test')));
      await page.goto(`${origin}/ui/alerts`);
      const row = page.locator('tbody tr', { hasText: 'Price at or below €216.00' });
      await row.waitFor();
      await until('the delivery shown as succeeded', async () => {
        await page.reload();
        return (await row.locator('.badge-succeeded').count()) > 0;
      });
      assert.match((await row.textContent()) ?? '', /€240\.00.*→.*€199\.00/);
      assert.match((await row.textContent()) ?? '', /My phone/);
      await page.goto(`${origin}/ui/products?tag=kitchen`);
      await page.getByRole('link', { name: 'Espresso machine' }).waitFor();
      assert.equal(await page.getByLabel('Tag', { exact: true }).inputValue(), 'kitchen');
      await page.close();
      assert.deepEqual(problems, []);
    });

    test('tags: the list links to the tagged products; a source is tagged; a CSV import shows per-line errors, then imports', async () => {
      const { page, problems } = await watchedPage(context, origin);
      await page.goto(`${origin}/ui/tags`);
      await page.locator('tbody tr', { hasText: 'kitchen' }).waitFor();
      await page.getByLabel('Source URL').fill('https://shop.example/espresso/');
      await page.getByLabel('Tags (comma-separated; empty removes)').fill('Espresso');
      await page.getByRole('button', { name: 'Save' }).click();
      await page.getByText(/Saved: espresso on https:\/\/shop\.example\/espresso/).waitFor();
      await page.getByLabel('URLs (CSV)').fill('url,tags\nftp://files.example/x,a\nhttps://shop.example/grinder,grinders');
      await page.getByRole('button', { name: 'Import' }).click();
      const error = page.getByRole('alert');
      await error.waitFor();
      assert.match((await error.textContent()) ?? '', /\/body\/line\/2\/url/);
      await page.getByLabel('URLs (CSV)').fill('url,tags\nhttps://shop.example/grinder,grinders');
      await page.getByRole('button', { name: 'Check only' }).click();
      await page.getByText('Would create 1 schedule; would add tags to 0 existing.').waitFor();
      await page.getByRole('button', { name: 'Import' }).click();
      await page.getByText('Created 1 schedule; added tags to 0 existing.').waitFor();
      const schedules = (await inject('GET', '/schedules')).json();
      assert.deepEqual(schedules[0].job, { url: 'https://shop.example/grinder', tags: ['grinders'] });
      await page.close();
      assert.deepEqual(
        problems.filter((p) => !p.includes('422')),
        [],
      );
    });

    test('on a 390 px phone the alerts screens fit the width', async () => {
      await checkPhoneWidth(browser, origin, SCREENS);
    });

    test('accessibility: axe-core finds no serious or critical violation on the alerts screens, filled or not', async () => {
      await checkAccessibility(browser, origin, SCREENS, async (page, check) => {
        await page.goto(`${origin}/ui/rules`);
        await settled(page);
        await page.getByLabel('Name', { exact: true }).fill('Axe rule');
        await page.getByLabel('When').selectOption('price_drop');
        await page.getByLabel('At least %').fill('5');
        await page.locator('form.rule-form').getByRole('button', { name: 'Preview' }).click();
        await page.locator('.preview').waitFor();
        await check('/ui/rules with a preview');
        await page.goto(`${origin}/ui/products/1`);
        await settled(page);
        await page.getByRole('button', { name: 'Lowest price in 90 days' }).click();
        await page.getByLabel('Days', { exact: true }).waitFor();
        await check('/ui/products/1 with "Alert me" open');
        await page.goto(`${origin}/ui/channels`);
        await settled(page);
        await page.locator('tbody tr').first().getByRole('button', { name: 'Test' }).click();
        await page.locator('.test-result').first().waitFor();
        await check('/ui/channels with a test result');
      });
    });
  });
}
