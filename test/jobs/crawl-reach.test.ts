// A whole-site crawl reaches every page its limits allow, on a books.toscrape-like catalogue without a sitemap (listings chained by "next", categories beside them).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { App } from '../../src/http/base-app.js';
import { catalogueBooks } from '../fixtures/books-catalogue.js';
import { startFixtureSite, type FixtureSite } from '../fixtures/site.js';
import { backends, warnIfNoPostgres, openService, type OpenService } from '../helpers.js';
import { until } from '../wait.js';

warnIfNoPostgres();

const CATALOGUE = { pages: 50, perPage: 4 };
const ENDED = ['succeeded', 'failed', 'cancelled'];

for (const backend of backends()) {
  describe(`crawl reach on ${backend.name}`, () => {
    let site: FixtureSite;
    let app: App;
    let opened: OpenService;

    before(async () => {
      site = await startFixtureSite({ catalogue: CATALOGUE, sitemap: false, categories: true });
      ({ app } = opened = await openService(backend, { SCRAPE_ALLOW_PRIVATE_NETWORKS: 'true', WORKER_CONCURRENCY: '4' }, { work: true }));
      opened.own(site);
    });
    after(() => opened.close());

    test('a crawl without a sitemap follows the 50-page "next" chain to its end and fetches every book, whatever its categories', async () => {
      const res = await app.inject({ method: 'POST', url: '/jobs', payload: { url: `${site.url}books/`, crawl: { max_depth: 100, max_pages: 5000 } } });
      assert.equal(res.statusCode, 202, res.body);
      const id = res.json().id as string;
      const job = await until(
        'the crawl to end',
        async () => {
          const body = (await app.inject({ url: `/jobs/${id}` })).json();
          return ENDED.includes(body.status) ? body : false;
        },
        { withinMs: 600_000, everyMs: 250 },
      );
      const listings = Array.from({ length: CATALOGUE.pages - 1 }, (_, i) => `/books/catalogue/page-${i + 2}.html`).filter((path) => !site.hits.has(path));
      assert.deepEqual(listings, [], 'every listing page fetched');
      const books = catalogueBooks(CATALOGUE).filter((book) => !site.hits.has(`/books/${book.detailPath}`));
      assert.deepEqual(
        books.map((b) => b.detailPath),
        [],
        'every book fetched',
      );
      assert.equal(job.status, 'succeeded', JSON.stringify(job));
      assert.deepEqual([job.progress.links_over_max_pages, job.progress.links_over_max_depth], [0, 0], 'no limit cut anything');
    });

    test('a crawl stopped by max_pages or max_depth says so: the links it did not follow are counted; the "next" chain is kept first', async () => {
      const run = async (crawl: object) => {
        const id = (await app.inject({ method: 'POST', url: '/jobs', payload: { url: `${site.url}books/`, crawl } })).json().id as string;
        return until('the crawl to end', async () => {
          const body = (await app.inject({ url: `/jobs/${id}` })).json();
          return ENDED.includes(body.status) ? body : false;
        });
      };
      const capped = await run({ max_depth: 100, max_pages: 30 });
      assert.equal(capped.status, 'succeeded');
      assert.equal(capped.progress.pages_done, 30);
      assert.ok(capped.progress.links_over_max_pages > 0, JSON.stringify(capped.progress));
      assert.equal(capped.progress.links_over_max_depth, 0);
      // A page takes its "next" link before its cards and sidebar, though "next" comes last on the page:
      // with room for two pages besides the start, the next listing page is one of them. (Which pages'
      // links a tighter budget keeps beyond that depends on which pages are stored first: a worker stores
      // several at once.)
      const hitsBefore = new Map(site.hits);
      const tight = await run({ max_depth: 100, max_pages: 3 });
      assert.equal(tight.progress.pages_done, 3);
      const fetched = [...site.hits].filter(([path, n]) => n > (hitsBefore.get(path) ?? 0)).map(([path]) => path);
      assert.ok(fetched.includes('/books/catalogue/page-2.html'), `fetched: ${fetched.join(', ')}`);
      const shallow = await run({ max_depth: 1, max_pages: 5000 });
      assert.equal(shallow.status, 'succeeded');
      assert.ok(shallow.progress.links_over_max_depth > 0, JSON.stringify(shallow.progress));
      assert.equal(shallow.progress.links_over_max_pages, 0);
    });
  });
}
