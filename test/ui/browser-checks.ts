// What every dashboard test checks in the browser: a screen settled, console errors and requests leaving the origin, axe's findings, a phone's width.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import assert from 'node:assert/strict';
import type { Browser, BrowserContext, Page } from 'playwright-core';

const AXE = readFileSync(fileURLToPath(new URL('../../node_modules/axe-core/axe.min.js', import.meta.url)), 'utf8');

/** A screen rendered with its data: its heading there and nothing still loading. */
export async function settled(page: Page): Promise<void> {
  await page.locator('main h1').first().waitFor();
  await page.waitForFunction(() => (globalThis as unknown as { document: { querySelector(s: string): unknown } }).document.querySelector('.loading') === null);
}

export interface WatchOptions {
  /** Console errors a test provokes on purpose (the browser logs a 422 the screen then shows). */
  expected?: RegExp;
  /** Dialogs (a delete's confirm) are accepted; otherwise a dialog is dismissed and recorded as a problem. */
  acceptDialogs?: boolean;
}

/**
 * A page that records console errors, uncaught errors and unexpected dialogs, and aborts (and records)
 * every request leaving the service's origin.
 */
export async function watchedPage(context: BrowserContext, origin: string, options: WatchOptions = {}) {
  const page = await context.newPage();
  const problems: string[] = [];
  const outside: string[] = [];
  page.on('console', (message) => {
    if (message.type() === 'error' && !(options.expected?.test(message.text()) ?? false)) problems.push(`console: ${message.text()}`);
  });
  page.on('pageerror', (error) => problems.push(`uncaught: ${error.message}`));
  page.on('dialog', (dialog) => {
    if (options.acceptDialogs === true) return void dialog.accept();
    problems.push(`dialog: ${dialog.message()}`);
    void dialog.dismiss();
  });
  await page.route('**/*', (route) => {
    const url = route.request().url();
    if (url.startsWith(`${origin}/`) || url.startsWith('data:')) return route.continue();
    outside.push(url);
    return route.abort();
  });
  return { page, problems, outside };
}

/** axe-core's serious and critical violations on the page as it is now (the context must bypass CSP to inject axe). */
export async function axeFindings(page: Page, state: string): Promise<string[]> {
  await page.addScriptTag({ content: AXE });
  const violations = await page.evaluate(async () => {
    const result = await (globalThis as unknown as { axe: { run(): Promise<{ violations: Array<{ id: string; impact: string; nodes: unknown[] }> }> } }).axe.run();
    return result.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => `${v.id} (${v.impact}, ${v.nodes.length} nodes)`);
  });
  return violations.map((v) => `${state}: ${v}`);
}

/** The screens at `paths` fit a 390 px phone: none scrolls sideways. */
export async function checkPhoneWidth(browser: Browser, origin: string, paths: readonly string[]): Promise<void> {
  const phone = await browser.newContext({ viewport: { width: 390, height: 844 }, isMobile: true });
  try {
    const { page } = await watchedPage(phone, origin);
    for (const path of paths) {
      await page.goto(`${origin}${path}`);
      await settled(page);
      const overflow = await page.evaluate(() => {
        const root = (globalThis as unknown as { document: { documentElement: { scrollWidth: number; clientWidth: number } } }).document.documentElement;
        return root.scrollWidth - root.clientWidth;
      });
      assert.ok(overflow <= 0, `${path} scrolls sideways by ${overflow} px`);
    }
  } finally {
    await phone.close();
  }
}

/**
 * No serious or critical axe-core violation on the screens at `paths`, each once settled, nor in the
 * states `more` brings about and checks (`check(state)` after each). axe is injected as a script, which
 * the dashboard's CSP rightly refuses: the context bypasses CSP for the check only.
 */
export async function checkAccessibility(
  browser: Browser,
  origin: string,
  paths: readonly string[],
  more?: (page: Page, check: (state: string) => Promise<void>) => Promise<void>,
): Promise<void> {
  const checking = await browser.newContext({ viewport: { width: 1280, height: 900 }, bypassCSP: true });
  try {
    const page = await checking.newPage();
    const found: string[] = [];
    const check = async (state: string) => {
      found.push(...(await axeFindings(page, state)));
    };
    for (const path of paths) {
      await page.goto(`${origin}${path}`);
      await settled(page);
      await check(path);
    }
    await more?.(page, check);
    assert.deepEqual(found, []);
  } finally {
    await checking.close();
  }
}
