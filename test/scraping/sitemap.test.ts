// Sitemaps over real HTTP: an index, a plain sitemap and a gzipped one; a missing or broken sitemap is reported, not fatal.
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { gzipSync } from 'node:zlib';
import { loadConfig } from '../../src/config/config.js';
import { createSafeFetcher } from '../../src/egress/safe-fetch.js';
import { readSitemaps } from '../../src/scraping/sitemap.js';
import type { PageFetcher } from '../../src/egress/page-fetcher.js';
import { catalogueBooks } from '../fixtures/books-catalogue.js';
import { startFixtureSite, type FixtureSite } from '../fixtures/site.js';
import { until } from '../wait.js';

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

  test('the next sitemaps of an index are fetched while one is awaited, and read in their order all the same', async () => {
    const detailHits = () => site.hits.get('/sitemaps/books-detail.xml.gz') ?? 0;
    const before = detailHits();
    const pages = site.hold('/sitemaps/books-pages.xml');
    try {
      const reading = readSitemaps(`${site.url}books/`, fetcher, { trusted: false, timeoutMs: 10_000, limit: 1000 });
      await until('the second sitemap of the index asked for while the first is unanswered', () => detailHits() > before, { withinMs: 5000 });
      pages.release();
      const result = await reading;
      assert.deepEqual(
        result.sitemaps.map((s) => [s.url.replace(site.url, '/'), s.urls]),
        [
          ['/sitemap.xml', 2],
          ['/sitemaps/books-pages.xml', 3],
          ['/sitemaps/books-detail.xml.gz', 60],
        ],
      );
      const listing = [`${site.url}books/`, `${site.url}books/catalogue/page-2.html`, `${site.url}books/catalogue/page-3.html`];
      assert.deepEqual(result.urls.slice(0, 3), listing, "the first sitemap's pages come first");
    } finally {
      pages.release();
    }
  });

  test("onUrls is handed each sitemap's new pages as soon as it is read, before the next is; answering false stops the reading", async () => {
    const handed: string[][] = [];
    const detail = site.hold('/sitemaps/books-detail.xml.gz');
    try {
      const reading = readSitemaps(`${site.url}books/`, fetcher, {
        trusted: false,
        timeoutMs: 10_000,
        limit: 1000,
        onUrls: async (urls) => {
          handed.push(urls.map((url) => url.replace(site.url, '/')));
          return true;
        },
      });
      await until('the listing sitemap handed over while the detail sitemap is unanswered', () => handed.length === 1, { withinMs: 5000 });
      assert.deepEqual(handed[0], ['/books/', '/books/catalogue/page-2.html', '/books/catalogue/page-3.html']);
      detail.release();
      const result = await reading;
      assert.equal(handed.length, 2);
      assert.equal(handed[1]?.length, 60);
      assert.deepEqual(
        handed.flat(),
        result.urls.map((url) => url.replace(site.url, '/')),
        'each page once, in the order read',
      );
    } finally {
      detail.release();
    }

    const stopped = await readSitemaps(`${site.url}books/`, fetcher, { trusted: false, timeoutMs: 5000, limit: 1000, onUrls: async () => false });
    assert.deepEqual(
      stopped.sitemaps.map((s) => s.url.replace(site.url, '/')),
      ['/sitemap.xml', '/sitemaps/books-pages.xml'],
      'no sitemap is read after onUrls answered false',
    );
  });

  test('a failing onUrls fails the reading: it is not one broken sitemap among others', async () => {
    const failing = readSitemaps(`${site.url}books/`, fetcher, {
      trusted: false,
      timeoutMs: 5000,
      limit: 1000,
      onUrls: async () => {
        throw new Error('the frontier could not be written');
      },
    });
    await assert.rejects(failing, /the frontier could not be written/);
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

  test('a 52 MB gzipped sitemap is read as a stream and only until the crawl has the URLs it can use', async () => {
    // About a million entries, 1 MB or so compressed: the protocol's size, under the download cap.
    const entry = (i: number) => `<url><loc>https://big.example/p/${String(i).padStart(9, '0')}</loc></url>\n`;
    const parts = ['<?xml version="1.0" encoding="UTF-8"?>\n<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n'];
    for (let i = 0; i < 950_000; i++) parts.push(entry(i));
    parts.push('</urlset>\n');
    const xml = Buffer.from(parts.join(''));
    assert.ok(xml.length > 52_000_000 - 2_000_000 && xml.length < 50 * 1024 * 1024, `${xml.length} bytes`);
    const gz = gzipSync(xml);
    const server = createServer((req, res) => {
      if (req.url !== '/sitemap.xml') return void res.writeHead(404).end();
      res.writeHead(200, { 'content-type': 'application/gzip', 'content-length': gz.length }).end(gz);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
      const result = await readSitemaps(url, fetcher, { trusted: false, timeoutMs: 30_000, limit: 10 });
      assert.deepEqual(
        result.urls,
        Array.from({ length: 10 }, (_, i) => `https://big.example/p/${String(i).padStart(9, '0')}`),
      );
      assert.deepEqual(result.sitemaps, [{ url: `${url}sitemap.xml`, urls: 10, partial: true }], 'reading stopped at the tenth entry');
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });

  test('a broken sitemap keeps the entries read before the break and says what broke', async () => {
    const server = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/xml' }).end('<urlset><url><loc>https://x.example/a</loc></url><url><loc>https://x.example/b</loc></url><url><loc');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
      const result = await readSitemaps(url, fetcher, { trusted: false, timeoutMs: 5000, limit: 100 });
      assert.deepEqual(result.urls, ['https://x.example/a', 'https://x.example/b']);
      assert.equal(result.sitemaps[0]?.urls, 2);
      assert.match(result.sitemaps[0]?.error ?? '', /not a readable sitemap/);
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
