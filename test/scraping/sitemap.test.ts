// Sitemaps over real HTTP: an index, a plain sitemap and a gzipped one; a missing or broken sitemap is reported, not fatal.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { loadConfig } from '../../src/config/config.js';
import { createSafeFetcher } from '../../src/egress/safe-fetch.js';
import { readSitemaps } from '../../src/scraping/sitemap.js';
import type { PageFetcher } from '../../src/egress/page-fetcher.js';
import { catalogueBooks } from '../fixtures/books-catalogue.js';
import { startFixtureSite, type FixtureSite } from '../fixtures/site.js';

describe('readSitemaps', () => {
  let site: FixtureSite;
  let fetcher: PageFetcher;
  before(async () => {
    site = await startFixtureSite({ catalogue: { pages: 3, perPage: 20 }, robots: 'User-agent: *\nDisallow: /private/\nSitemap: /sitemap.xml\n' });
    fetcher = createSafeFetcher({ ...loadConfig({}).scrape, allowPrivateNetworks: true });
  });
  after(async () => {
    await fetcher.close();
    await site.close();
  });

  test('the index is followed into a plain and a gzipped sitemap: every listing and detail page', async () => {
    const result = await readSitemaps(`${site.url}books/`, fetcher, { trusted: false, timeoutMs: 5000, limit: 1000 });
    const details = catalogueBooks({ pages: 3, perPage: 20 }).map((b) => `${site.url}books/${b.detailPath}`);
    assert.equal(result.urls.length, 3 + 60);
    for (const url of [`${site.url}books/`, `${site.url}books/catalogue/page-3.html`, ...details]) assert.ok(result.urls.includes(url), url);
    assert.deepEqual(
      result.sitemaps.map((s) => [s.url.replace(site.url, '/'), s.urls, s.error]),
      [
        ['/sitemap.xml', 2, undefined],
        ['/sitemaps/books-pages.xml', 3, undefined],
        ['/sitemaps/books-detail.xml.gz', 60, undefined],
      ],
    );
  });

  test('the limit stops reading early', async () => {
    const result = await readSitemaps(`${site.url}books/`, fetcher, { trusted: false, timeoutMs: 5000, limit: 5 });
    assert.equal(result.urls.length, 5);
  });

  test('a site without a sitemap gives no URLs and says why, without failing', async () => {
    const bare = await startFixtureSite({ sitemap: false });
    try {
      const result = await readSitemaps(`${bare.url}books/`, fetcher, { trusted: false, timeoutMs: 5000, limit: 10 });
      assert.deepEqual(result.urls, []);
      assert.equal(result.sitemaps.length, 1);
      assert.match(result.sitemaps[0]!.error ?? '', /404/);
    } finally {
      await bare.close();
    }
  });
});
