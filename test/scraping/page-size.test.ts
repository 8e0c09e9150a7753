// The page size cap: a 5.3 MB article page as news sites send them is read under the default; a page past the cap fails saying the service's own setting refused it.
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import type { App } from '../../src/http/base-app.js';
import { storyPage, storyText } from '../articles/news-site.js';
import { assertProblem, backends, mainServiceOn, warnIfNoPostgres, openService, type OpenService } from '../helpers.js';

warnIfNoPostgres();

const TITLE = 'Harbour wall to be rebuilt after the winter storms';

/**
 * A story page of 5.3 MB, most of it what big news pages carry besides their text: the framework's
 * page data inline (related stories, each with its teaser and image sizes), an inline SVG sprite.
 */
function bigStoryPage(url: string): string {
  const related = Array.from({ length: 11_500 }, (_, i) => ({
    id: `story-${i}`,
    headline: `Related story number ${i} about the coast, the council and the harbour`,
    teaser: 'Residents gathered along the front on Tuesday morning as engineers walked the length of the old wall.',
    images: [320, 640, 1024, 1600].map((w) => ({ width: w, url: `https://img.example/${i}/${w}.jpg` })),
  }));
  const data = `<script id="__NEXT_DATA__" type="application/json">${JSON.stringify({ props: { pageProps: { related } } })}</script>`;
  const sprite = `<svg style="display:none">${Array.from({ length: 2_000 }, (_, i) => `<symbol id="i${i}"><path d="M0 0L${i} 10L20 ${i}Z"/></symbol>`).join('')}</svg>`;
  const page = storyPage(
    {
      slug: 'harbour-wall',
      title: TITLE,
      paragraphs: storyText('the harbour wall', 6),
      summary: 'The council will rebuild the harbour wall.',
      authors: ['Ann Reporter'],
      published: '2026-11-20T08:00:00Z',
      language: 'en',
      section: 'Local',
      tags: ['harbour'],
    },
    url,
  );
  return page.replace('</body>', `${sprite}${data}</body>`);
}

for (const backend of backends()) {
  describe(`the page size cap on ${backend.name}`, () => {
    let app: App;
    let capped: App;
    let pageUrl = '';
    let size = 0;
    let opened: OpenService;

    before(async () => {
      let page = '';
      const server = createServer((_req, res) => void res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(page));
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      pageUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/news/harbour-wall`;
      page = bigStoryPage(pageUrl);
      size = Buffer.byteLength(page);
      const env = { SCRAPE_ALLOW_PRIVATE_NETWORKS: 'true', SCRAPE_OBEY_ROBOTS: 'false', SCRAPE_TIMEOUT_MS: '60000' };
      opened = await openService(backend, env);
      app = opened.app;
      opened.own({ close: () => new Promise<void>((resolve) => server.close(() => resolve())) });
      const db = opened.db;
      capped = (await mainServiceOn(db, { after: (fn) => opened.onClose(fn) }, { ...env, SCRAPE_MAX_BODY_BYTES: '1048576' })).app;
    });
    after(() => opened.close());

    test('a 5.3 MB article page is read under the default cap and its article stored', async () => {
      assert.ok(size > 5 * 1024 * 1024 && size < 5_500_000, `the page is ${size} bytes, over the old 5 MiB cap`);
      const res = await app.inject({ method: 'POST', url: '/scrape', payload: { url: pageUrl } });
      assert.equal(res.statusCode, 200, res.body);
      const body = res.json() as { page_type: string; articles: Array<{ title: string; body: string | null }> };
      assert.equal(body.page_type, 'article');
      assert.equal(body.articles[0]?.title, TITLE);
      assert.match(body.articles[0]?.body ?? '', /Paragraph 6 about the harbour wall/);
    });

    test("a page past the cap fails as the service's own refusal, naming SCRAPE_MAX_BODY_BYTES, in the answer and the run's log", async () => {
      const res = await capped.inject({ method: 'POST', url: '/scrape', payload: { url: pageUrl } });
      const problem = assertProblem(res, 502);
      assert.match(problem.type, /:page-too-large$/);
      assert.equal(problem.title, 'Page Too Large');
      assert.match(problem.detail, /is larger than 1048576 bytes \(1 MiB, decompressed\), the cap this service sets on a page \(SCRAPE_MAX_BODY_BYTES\)/);
      assert.match(problem.detail, /the site answered, this service stopped reading\. Raise SCRAPE_MAX_BODY_BYTES/);
      const [log] = (await capped.inject({ url: '/scrape-logs?limit=1' })).json() as Array<{ status: string; error: { type: string; detail: string } }>;
      assert.equal(log?.status, 'failed');
      assert.equal(log?.error.type, problem.type);
      assert.equal(log?.error.detail, problem.detail);
    });
  });
}
