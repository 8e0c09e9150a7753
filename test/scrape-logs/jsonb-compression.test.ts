// How the JSONB store's big documents are compressed (migration 20): lz4 on PostgreSQL, pglz on PGlite (built without lz4).
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { describe, test } from 'node:test';
import type { ScrapeLog } from '../../src/scrape-logs/log-schema.js';
import { createJsonbLogStore } from '../../src/scrape-logs/jsonb-log-store.js';
import { backends, warnIfNoPostgres } from '../helpers.js';

warnIfNoPostgres();

/** A crawl's log of `count` products, each with the repetitive provenance a real one has: well over TOAST's threshold. */
function crawlLog(count: number): ScrapeLog {
  const products = Array.from({ length: count }, (_, i) => {
    const locator = `body > div > section > ol > li:nth-of-type(${(i % 20) + 1}) > article p.price_color`;
    return {
      title: `Book ${i}`,
      price_text: `£${(10 + (i % 50)).toFixed(2)}`,
      price: 10 + (i % 50),
      currency: 'GBP',
      url: `https://books.example/catalogue/book_${i}/index.html`,
      provenance: { price: { source: 'listing', locator }, currency: { source: 'listing', locator }, title: { source: 'listing', locator: `${locator} h3 a` } },
    };
  });
  return {
    id: randomUUID(),
    source_url: 'https://books.example/',
    mode: 'static',
    status: 'succeeded',
    count,
    products,
    pages: Math.ceil(count / 20),
    started_at: '2026-01-01T00:00:00.000Z',
    finished_at: '2026-01-01T00:00:10.000Z',
    duration_ms: 10_000,
  };
}

for (const backend of backends()) {
  describe(`big documents on ${backend.name}`, () => {
    const method = backend.name === 'postgresql' ? 'lz4' : 'pglz';

    test(`a crawl's log is stored compressed with ${method}, and read back as written`, async (t) => {
      const db = await backend.open();
      t.after(() => db.close());
      const store = createJsonbLogStore(db);
      await store.init();
      const written = crawlLog(2_000);
      await store.insert(written);
      assert.deepEqual(await store.get(written.id), written);
      const [row] = await db.query<{ method: string | null; stored: number; raw: number }>(
        'SELECT pg_column_compression(document) AS method, pg_column_size(document) AS stored, octet_length(document::text) AS raw FROM scrape_logs WHERE id = $1',
        [written.id],
      );
      assert.equal(row!.method, method);
      assert.ok(row!.stored * 4 < row!.raw, `stored ${row!.stored} bytes of ${row!.raw}`);
    });

    test(`a crawl page's items and articles are set to ${method}`, async (t) => {
      const db = await backend.open();
      t.after(() => db.close());
      const rows = await db.query<{ name: string; method: string }>(
        `SELECT attname AS name, attcompression::text AS method FROM pg_attribute
          WHERE attrelid = 'crawl_frontier'::regclass AND attname IN ('items', 'articles') ORDER BY attname`,
      );
      // An empty attcompression is the server's default_toast_compression: pglz unless set otherwise.
      assert.deepEqual(rows, [
        { name: 'articles', method: method === 'lz4' ? 'l' : '' },
        { name: 'items', method: method === 'lz4' ? 'l' : '' },
      ]);
    });
  });
}
