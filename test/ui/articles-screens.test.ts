// The Articles screens in a real Chromium against a real service: search, filters and paging; an article's reader view, provenance, revisions and diffs; hostile HTML that must never run; accessibility.
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import type { Database } from '../../src/db/database.js';
import type { App } from '../../src/http/base-app.js';
import { startNewsSite, storyText, type NewsSite, type Story } from '../articles/news-site.js';
import { dashboardBackends, chromiumPath, noChromium, warnIfNoPostgres, openService, type OpenService } from '../helpers.js';
import { checkAccessibility, checkPhoneWidth, settled, watchedPage } from './browser-checks.js';

warnIfNoPostgres();

/** Markup a page could carry into an article's HTML: every way it might try to run script, load something, or take over the page. */
const HOSTILE_HTML = [
  '<p>Readable hostile text.</p>',
  '<script>window.__pwned = "script"</script>',
  '<img src="https://evil.example/pixel.png" onerror="window.__pwned = \'onerror\'" alt="a picture">',
  '<a href="javascript:window.__pwned = \'href\'">a javascript link</a>',
  '<svg onload="window.__pwned = \'svg\'"><circle r="5"/></svg>',
  '<iframe srcdoc="<script>parent.__pwned = \'iframe\'</script>"></iframe>',
  '<p style="position:fixed;inset:0;background:red" onclick="window.__pwned = \'onclick\'">Styled paragraph</p>',
  '<form action="https://evil.example/steal"><button formaction="javascript:window.__pwned=1">Send</button></form>',
  '<object data="https://evil.example/x.swf"></object><embed src="https://evil.example/y">',
  '<a href="https://evil.example/" onmouseover="window.__pwned = \'hover\'">an outside link</a>',
  '<style>body { display: none }</style>',
  '<math><mi xlink:href="javascript:window.__pwned=2">math</mi></math>',
  '<details open ontoggle="window.__pwned = \'toggle\'"><summary>More</summary>inside</details>',
  '<base href="https://evil.example/">',
  '<meta http-equiv="refresh" content="0;url=https://evil.example/">',
].join('\n');

const STORIES: Story[] = [
  {
    slug: 'sea-wall',
    title: 'Sea wall cracks after the storm',
    paragraphs: storyText('the sea wall'),
    summary: 'Engineers inspect the damage along the front.',
    authors: ['Jane Doe'],
    published: '2024-03-05T09:30:00+01:00',
    language: 'en-GB',
    section: 'Local',
    tags: ['storm'],
  },
  {
    slug: 'deich',
    title: 'Der Deich hält dem Sturm stand',
    paragraphs: Array.from(
      { length: 4 },
      (_, i) =>
        `Absatz ${i + 1}: Die Anwohner versammelten sich am Dienstagmorgen an der Promenade, als die Ingenieure der Stadt die Schäden an den Deichen vermaßen und mit den Menschen sprachen, deren Häuser am nächsten am Wasser stehen.`,
    ),
    summary: 'Die Deiche an der Küste haben gehalten.',
    authors: ['Anna Berg'],
    published: '2024-03-04T18:00:00+01:00',
    language: 'de',
    section: 'Küste',
    tags: ['Sturm'],
  },
  {
    slug: 'hostile',
    title: 'A story whose page carries hostile markup',
    paragraphs: storyText('hostile markup'),
    summary: 'Scripts and handlers in the text.',
    authors: ['Mallory'],
    published: '2024-03-03T12:00:00Z',
    language: 'en',
    section: 'Local',
    tags: [],
    extraHtml: HOSTILE_HTML,
  },
];

const pwned = (page: Page) => page.evaluate(() => (globalThis as unknown as { __pwned?: unknown }).__pwned ?? null);

for (const backend of dashboardBackends()) {
  describe(`articles screens on ${backend.name}`, { skip: noChromium }, () => {
    let site: NewsSite;
    let app: App;
    let db: Database;
    let origin: string;
    let browser: Browser;
    let context: BrowserContext;
    const ids: Record<string, number> = {};
    let opened: OpenService;

    before(async () => {
      site = await startNewsSite(STORIES.map((s) => ({ ...s })));
      ({ app } = opened = await openService(backend, { SCRAPE_ALLOW_PRIVATE_NETWORKS: 'true' }));
      opened.own(site);
      db = opened.db;
      await app.listen({ port: 0, host: '127.0.0.1' });
      origin = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
      browser = await chromium.launch({ executablePath: chromiumPath!, args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'] });
      opened.own(browser);
      context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
      // The front page's teasers, then each story read; the sea wall story then edited once (a second revision).
      await app.inject({ method: 'POST', url: '/scrape', payload: { url: site.url } });
      for (const story of STORIES) {
        const res = await app.inject({ method: 'POST', url: '/scrape', payload: { url: site.storyUrl(story.slug) } });
        assert.equal(res.statusCode, 200, res.body);
        ids[story.slug] = res.json().articles[0].id;
      }
      site.stories.get('sea-wall')!.title = 'Sea wall collapses after the storm';
      await app.inject({ method: 'POST', url: '/scrape', payload: { url: site.storyUrl('sea-wall') } });
      // Hostile HTML put straight into the store, past the service's own sanitizer: the dashboard must hold on its own.
      site.stories.set('raw', { ...STORIES[0]!, slug: 'raw', title: 'Raw hostile HTML in the store', listed: false });
      ids.raw = (await app.inject({ method: 'POST', url: '/scrape', payload: { url: site.storyUrl('raw') } })).json().articles[0].id;
      await db.query('UPDATE articles SET body_html = $1 WHERE id = $2', [HOSTILE_HTML, ids.raw]);
    });
    after(() => opened.close());

    test("Articles: search in the article's language, filters and sort through the URL, paging; a row opens the article; feed links follow the filters", async () => {
      const { page, problems, outside } = await watchedPage(context, origin);
      await page.goto(`${origin}/ui/articles`);
      await settled(page);
      assert.equal(await page.locator('.article-list > li').count(), 4);
      await page.getByLabel('Search', { exact: true }).fill('Deiche');
      await page.getByRole('button', { name: 'Apply' }).click();
      await page.waitForURL(/\?q=Deiche/);
      await page.locator('.article-list > li').nth(1).waitFor({ state: 'detached' });
      assert.deepEqual(await page.locator('.article-list h2').allTextContents(), ['Der Deich hält dem Sturm stand']);
      assert.equal(await page.getByRole('link', { name: 'Atom' }).getAttribute('href'), '/articles/feed.xml?q=Deiche');
      await page.getByRole('button', { name: 'Clear filters' }).click();
      await page.getByLabel('Author').fill('jane doe');
      await page.getByLabel('Sort').selectOption('published_at');
      await page.getByRole('button', { name: 'Apply' }).click();
      await page.waitForURL(/author=jane\+doe/);
      await page.getByText('2 articles').waitFor();
      assert.deepEqual(await page.locator('.article-list h2').allTextContents(), ['Sea wall collapses after the storm', 'Raw hostile HTML in the store']);
      await page.getByLabel('Author').fill('');
      await page.getByLabel('Text').selectOption('false');
      await page.getByRole('button', { name: 'Apply' }).click();
      await page.getByText('No article matches these filters.').waitFor();
      await page.goto(`${origin}/ui/articles?sort=-published_at`);
      await page.getByRole('link', { name: 'Der Deich hält dem Sturm stand' }).click();
      await page.locator('main h1', { hasText: 'Der Deich hält dem Sturm stand' }).waitFor();
      assert.equal(new URL(page.url()).pathname, `/ui/articles/${ids.deich}`);
      await page.close();
      assert.deepEqual(problems, []);
      assert.deepEqual(outside, []);
    });

    test('an article: its text in a reader view, each field with its source, its revisions newest first with the title diff, its events', async () => {
      const { page, problems, outside } = await watchedPage(context, origin);
      await page.goto(`${origin}/ui/articles/${ids['sea-wall']}`);
      await settled(page);
      await page.locator('main h1', { hasText: 'Sea wall collapses after the storm' }).waitFor();
      const reader = page.locator('.reader');
      assert.match((await reader.locator('p').first().textContent()) ?? '', /^Paragraph 1 about the sea wall/);
      assert.equal(await reader.locator('p').count(), 4);
      const row = (name: string) => page.locator('table.fields tr', { has: page.locator('th', { hasText: new RegExp(`^${name}$`) }) });
      assert.deepEqual(await row('authors').locator('td').allTextContents(), ['Jane Doe', 'json-ld', 'ld+json[0] $.author[0]']);
      assert.equal(await row('language').locator('td').first().textContent(), 'en-GB');
      await page.getByText('3 revisions').waitFor();
      const newest = page.locator('.revisions > li').first();
      // The teaser first (no text), then its page read, then the headline changed.
      assert.match((await newest.textContent()) ?? '', /Revision 3.*title changed/);
      assert.match((await page.locator('.revisions > li').nth(1).textContent()) ?? '', /Revision 2.*body changed/);
      assert.equal(await newest.locator('del').textContent(), 'cracks');
      assert.equal(await newest.locator('ins').textContent(), 'collapses');
      const events = page.locator('ol.events li');
      await events.first().waitFor();
      assert.match((await events.first().textContent()) ?? '', /article\.updated.*title changed \(was “Sea wall cracks after the storm”\)/);
      await page.goto(`${origin}/ui/articles/999999`);
      await page.getByRole('alert').waitFor();
      assert.match((await page.getByRole('alert').textContent()) ?? '', /Article 999999 does not exist/);
      await page.close();
      assert.deepEqual(
        problems.filter((p) => !p.includes('404')),
        [],
      );
      assert.deepEqual(outside, []);
    });

    test("an article's watch-list tags: added and removed on its screen; a tag's link and the Tag filter list the tagged articles", async () => {
      const { page, problems, outside } = await watchedPage(context, origin);
      await page.goto(`${origin}/ui/articles/${ids.deich}`);
      await page.getByLabel('Add tags (comma-separated)').fill('Coast, Deutsch');
      await page.getByRole('button', { name: 'Add', exact: true }).click();
      await page.locator('.tag', { hasText: 'deutsch' }).waitFor();
      await page.getByRole('button', { name: 'Remove tag deutsch' }).click();
      await page.locator('.tag', { hasText: 'deutsch' }).waitFor({ state: 'detached' });
      assert.deepEqual((await app.inject({ method: 'GET', url: `/articles/${ids.deich}/tags` })).json().tags, ['coast']);
      await page.locator('.tag').getByRole('link', { name: 'coast' }).click();
      await page.waitForURL(/\/ui\/articles\?tag=coast/);
      await page.getByText('1 article').waitFor();
      assert.deepEqual(await page.locator('.article-list h2').allTextContents(), ['Der Deich hält dem Sturm stand']);
      assert.equal(await page.getByLabel('Tag', { exact: true }).inputValue(), 'coast');
      await page.close();
      assert.deepEqual(problems, []);
      assert.deepEqual(outside, []);
      await app.inject({ method: 'PUT', url: `/articles/${ids.deich}/tags`, payload: { tags: [] } });
    });

    test('hostile markup never runs: a scraped page full of it, and the same HTML put straight into the store, show their text, run nothing and load nothing', async () => {
      const { page, problems, outside } = await watchedPage(context, origin);
      for (const id of [ids.hostile, ids.raw]) {
        problems.length = 0;
        await page.goto(`${origin}/ui/articles/${id}`);
        await settled(page);
        const reader = page.locator('.reader');
        await reader.waitFor();
        assert.match((await reader.textContent()) ?? '', id === ids.raw ? /Readable hostile text\./ : /Paragraph 1 about hostile markup/);
        // What could run or load is gone from the page, not merely inert.
        for (const selector of [
          'script',
          'iframe',
          'object',
          'embed',
          'svg',
          'form',
          'style',
          'base',
          'meta',
          'img',
          '[onerror]',
          '[onclick]',
          '[onmouseover]',
          '[ontoggle]',
          '[style]',
          'a[href^="javascript"]',
        ]) {
          assert.equal(await reader.locator(selector).count(), 0, `${selector} in the reader of article ${id}`);
        }
        // Try what a person would do: click, hover, toggle.
        // Each is there to try: a reader that dropped them would check nothing.
        for (const text of ['a javascript link', 'Styled paragraph']) {
          const target = reader.getByText(text);
          assert.equal(await target.count(), 1, `"${text}" in the reader of article ${id}`);
          await target.click();
        }
        const outsideLink = reader.getByRole('link', { name: 'an outside link' });
        assert.equal(await outsideLink.count(), 1, `the outside link in the reader of article ${id}`);
        await outsideLink.hover();
        assert.equal(await outsideLink.getAttribute('href'), 'https://evil.example/');
        assert.equal(await outsideLink.getAttribute('rel'), 'noopener noreferrer nofollow');
        assert.equal(await outsideLink.getAttribute('target'), '_blank');
        assert.equal(await pwned(page), null, `script ran on article ${id}`);
        assert.equal(await page.locator('body').isVisible(), true, 'no style of the article reached the page');
        // The picture is a link to it, not a request made by the dashboard.
        assert.equal(await page.locator('.reader a.reader-image').first().textContent(), '[image: a picture]');
        if (id === ids.hostile) {
          assert.deepEqual(problems, [], 'the sanitized text holds nothing the page has to refuse');
        } else {
          // HTML that skipped the service's sanitizer: the browser parses the handler and style
          // attributes (the reader then drops them) and the page's CSP refuses each, as it should.
          assert.ok(problems.length > 0, 'the raw HTML met the CSP');
          for (const problem of problems) assert.match(problem, /violates the following Content Security Policy directive/);
        }
      }
      await page.close();
      assert.deepEqual(outside, [], 'nothing loaded from outside the service');
    });

    test('on a 390 px phone the article screens fit the width', async () => {
      await checkPhoneWidth(browser, origin, ['/ui/articles', `/ui/articles/${ids['sea-wall']}`, `/ui/articles/${ids.raw}`]);
    });

    test('accessibility: axe-core finds no serious or critical violation on the Articles screens, filled, filtered to nothing, and an article with its revisions', async () => {
      const paths = ['/ui/articles', '/ui/articles?q=nothing-like-this', `/ui/articles/${ids.hostile}`, '/ui/events?type=article.updated'];
      await checkAccessibility(browser, origin, paths, async (page, check) => {
        await page.goto(`${origin}/ui/articles/${ids['sea-wall']}`);
        await settled(page);
        await page.getByText('3 revisions').waitFor();
        await check('an article with its revisions');
      });
    });
  });
}
