// The one door for a run's writes: what a run records commits with the caller's own statements, and its events reach the live streams after the commit, never after a rollback.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Database } from '../../src/db/database.js';
import type { Context } from '../../src/context.js';
import { backends, warnIfNoPostgres, openService, type OpenService } from '../helpers.js';

warnIfNoPostgres();

const lamp = (title: string) => ({
  scrape_key: `https://shop.example/${encodeURIComponent(title)}`,
  title,
  price: 30,
  currency: 'EUR',
  description: null,
  source_url: `https://shop.example/${encodeURIComponent(title)}`,
  list_price: null,
  availability: 'in_stock' as const,
  sku: null,
  gtin: null,
  brand: null,
  image_url: null,
  provenance: { page_url: 'https://shop.example/', page_type: 'listing', fields: {} },
});

for (const backend of backends()) {
  describe(`the run writer on ${backend.name}`, () => {
    let db: Database;
    let context: Context;
    let opened: OpenService;
    before(async () => {
      ({ context } = opened = await openService(backend));
      db = opened.db;
    });
    after(() => opened.close());

    const run = { id: 'run-1', source: 'https://shop.example/', kind: 'scrape' as const, tags: [] };

    test('a committed write is published once, after the commit, with the caller’s own statements in the same transaction', async () => {
      let published = 0;
      let seenWhenPublished: Promise<number> | undefined;
      const stop = context.tracking.live.onPublished(() => {
        published += 1;
        // Published after the commit: a reader outside the transaction already sees the product.
        seenWhenPublished = db.query<{ n: number }>("SELECT count(*)::int AS n FROM products WHERE title = 'Desk lamp'").then(([row]) => row!.n);
      });
      try {
        const written = await context.writer.transaction(async (writes, tx) => {
          const stored = await writes.record({ products: [lamp('Desk lamp')], articles: [] }, run);
          await tx.query('CREATE TABLE IF NOT EXISTS writer_probe (n int)');
          await tx.query('INSERT INTO writer_probe VALUES (1)');
          assert.equal(published, 0, 'nothing is published inside the transaction');
          return stored;
        });
        assert.deepEqual([written.created, written.products[0]?.title], [1, 'Desk lamp']);
        assert.equal(published, 1);
        assert.equal(await seenWhenPublished, 1);
        assert.equal((await db.query<{ n: number }>('SELECT count(*)::int AS n FROM writer_probe'))[0]!.n, 1);
      } finally {
        stop();
      }
    });

    test('a write whose transaction rolls back stores nothing and publishes nothing', async () => {
      let published = 0;
      const stop = context.tracking.live.onPublished(() => {
        published += 1;
      });
      const events = async () => (await db.query<{ n: number }>('SELECT count(*)::int AS n FROM events'))[0]!.n;
      const before = await events();
      try {
        await assert.rejects(
          context.writer.transaction(async (writes) => {
            await writes.record({ products: [lamp('Floor lamp')], articles: [] }, run);
            throw new Error('the bookkeeping failed');
          }),
          /the bookkeeping failed/,
        );
        assert.equal(published, 0);
        assert.equal((await db.query<{ n: number }>("SELECT count(*)::int AS n FROM products WHERE title = 'Floor lamp'"))[0]!.n, 0);
        assert.equal(await events(), before, 'no event either');
      } finally {
        stop();
      }
    });
  });
}
