// User text cannot turn the dashboard's text around: a title with an unclosed right-to-left override, in a real Chromium.
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { chromium, type Browser } from 'playwright-core';
import type { App } from '../../src/http/base-app.js';
import { dashboardBackends, chromiumPath, noChromium, warnIfNoPostgres, openService, type OpenService } from '../helpers.js';

warnIfNoPostgres();

/**
 * In the page: whether the characters of the first element matching `selector` whose text is `text`
 * (from index `from` to `to`) are laid out left to right (null: no such element). Source text, so the test's compiler adds nothing to it.
 */
const readsLeftToRight = (selector: string, text: string, from = 0, to = text.length - 1) => `(() => {
  const el = [...document.querySelectorAll(${JSON.stringify(selector)})].find((e) => e.textContent === ${JSON.stringify(text)});
  const node = el && el.firstChild;
  if (!node) return null;
  const at = (i) => {
    const range = document.createRange();
    range.setStart(node, i);
    range.setEnd(node, i + 1);
    return range.getBoundingClientRect().left;
  };
  return at(${from}) < at(${to});
})()`;

for (const backend of dashboardBackends()) {
  describe(`dashboard bidi isolation on ${backend.name}`, { skip: noChromium }, () => {
    let app: App;
    let origin: string;
    let browser: Browser;
    let opened: OpenService;

    before(async () => {
      app = (opened = await openService(backend)).app;
      await app.listen({ port: 0, host: '127.0.0.1' });
      origin = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
      browser = await chromium.launch({ executablePath: chromiumPath!, args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'] });
      opened.own(browser);
    });
    after(() => opened.close());

    test('an unclosed right-to-left override in a title stays in the title: the brand beside it still reads left to right', async () => {
      const made = await app.inject({ method: 'POST', url: '/products', payload: { title: 'Lamp \u202Eevil', brand: 'ACME', price: 10, currency: 'EUR' } });
      assert.equal(made.statusCode, 201, made.body);
      const page = await browser.newPage();
      await page.goto(`${origin}/ui/products`);
      await page.locator('td a', { hasText: 'Lamp' }).first().waitFor();
      assert.equal(await page.evaluate(readsLeftToRight('td span.muted', 'ACME')), true, 'the brand after the title is not flipped');
      // The override still acts inside the title itself ("evil" shows as "live"): the text is shown as given, not cleaned.
      assert.equal(await page.evaluate(readsLeftToRight('td a', 'Lamp \u202Eevil', 6, 9)), false);
      await page.close();
    });
  });
}
