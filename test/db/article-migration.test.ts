// Migration 11 on both backends: price-less products that came from article pages become articles; real products stay.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, test } from 'node:test';
import pg from 'pg';
import { createPgliteDatabase, createPostgresDatabase, type Database } from '../../src/db/database.js';
import { migrate } from '../../src/db/migrate.js';
import { migrations } from '../../src/db/migrations/index.js';
import { warnIfNoPostgres } from '../helpers.js';

warnIfNoPostgres();
const url = process.env.TEST_DATABASE_URL ?? process.env.DATABASE_URL;

/** A database at migration 10, and how to drop it. */
interface Before11 {
  db: Database;
  drop(): Promise<void>;
}

async function pgliteAt10(): Promise<Before11> {
  const db = await createPgliteDatabase();
  await migrate(
    db,
    migrations.filter((m) => m.version <= 10),
  );
  return { db, drop: () => db.close() };
}

async function postgresAt10(): Promise<Before11> {
  const schema = `mig11_${randomBytes(5).toString('hex')}`;
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  await admin.query(`CREATE SCHEMA ${schema}`);
  await admin.end();
  const scoped = new URL(url!);
  scoped.searchParams.set('options', `-c search_path=${schema}`);
  const db = createPostgresDatabase(scoped.toString(), { max: 2 });
  await migrate(
    db,
    migrations.filter((m) => m.version <= 10),
  );
  return {
    db,
    async drop() {
      await db.close();
      const cleanup = new pg.Client({ connectionString: url });
      await cleanup.connect();
      await cleanup.query(`DROP SCHEMA ${schema} CASCADE`);
      await cleanup.end();
    },
  };
}

const prov = (pageType: string, titleSource: string) =>
  JSON.stringify({ page_url: 'https://news.example/', page_type: pageType, fields: { title: { source: titleSource, locator: 'h3 a' } } });

const backends = [{ name: 'pglite', open: pgliteAt10 }, ...(url === undefined ? [] : [{ name: 'postgresql', open: postgresAt10 }])];

for (const backend of backends) {
  describe(`migration 11 on ${backend.name}`, () => {
    test('moves the price-less products that came from article pages into articles without a body, and leaves every real product', async () => {
      const { db, drop } = await backend.open();
      try {
        // As earlier versions stored them: a listing's linked headings as price-less products.
        const rows = await db.query<{ id: number; title: string }>(
          `INSERT INTO products (title, price, description, source_url, scrape_key, source_key, provenance, image_url, last_seen_at, last_run, created_at, updated_at) VALUES
            ('US cinema gunman had violent past', NULL, 'From the section US & Canada', 'https://www.bbc.example/news/world-1', 'https://www.bbc.example/news/world-1',
             'https://www.bbc.example/news', $1, 'https://www.bbc.example/img/1.jpg', '2024-01-02T03:04:05Z', 'run-1', '2024-01-01T00:00:00Z', '2024-01-02T03:04:05Z'),
            ('Teaser from an article page', NULL, NULL, 'https://news.example/story-2', 'https://news.example/story-2', NULL, $2, NULL, NULL, NULL, now(), now()),
            ('Scraped before provenance was kept', NULL, NULL, 'https://blog.example/post', 'https://blog.example/post', NULL, NULL, NULL, NULL, NULL, now(), now()),
            ('Kettle without a shown price', NULL, NULL, 'https://shop.example/kettle', 'https://shop.example/kettle', NULL, $3, NULL, NULL, NULL, now(), now()),
            ('Lamp', 12.5, NULL, 'https://shop.example/lamp', 'https://shop.example/lamp', NULL, $3, NULL, NULL, NULL, now(), now())
           RETURNING id, title`,
          [prov('article-list', 'article-list'), prov('article', 'json-ld'), prov('product', 'json-ld')],
        );
        await db.query(`INSERT INTO products (title, price, sku) VALUES ('Made by hand, no price yet', 1, 'SKU-1')`);
        await db.query(`UPDATE products SET price = NULL WHERE sku = 'SKU-1'`);
        const gunman = rows.find((r) => r.title.startsWith('US cinema'))!.id;
        // Its history and an event, as tracking wrote them.
        await db.query(`INSERT INTO price_observations (product_id, price, first_seen_at, source) VALUES ($1, NULL, now(), 'scrape')`, [gunman]);
        await db.query(`INSERT INTO events (type, product_id, source, data) VALUES ('product.created', $1, 'https://www.bbc.example/news', '{}')`, [gunman]);

        const report = await migrate(db);
        assert.deepEqual(
          report.applied.map((m) => m.version),
          migrations.filter((m) => m.version > 10).map((m) => m.version),
        );
        const articles = await db.query<Record<string, unknown>>(
          `SELECT url, title, body, description, image_url, source_url, site_keys, provenance, to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD') AS created,
                  last_run, search_config::text AS config FROM articles ORDER BY id`,
        );
        assert.deepEqual(
          articles.map((a) => a.title),
          ['US cinema gunman had violent past', 'Teaser from an article page', 'Scraped before provenance was kept'],
        );
        const [moved] = articles;
        assert.deepEqual(
          { ...moved, provenance: (moved!.provenance as { page_type: string }).page_type },
          {
            url: 'https://www.bbc.example/news/world-1',
            title: 'US cinema gunman had violent past',
            body: null,
            description: 'From the section US & Canada',
            image_url: 'https://www.bbc.example/img/1.jpg',
            source_url: 'https://www.bbc.example/news',
            site_keys: ['bbc.example'],
            provenance: 'article-list',
            created: '2024-01-01',
            last_run: 'run-1',
            config: 'simple',
          },
        );
        const products = await db.query<{ title: string }>('SELECT title FROM products ORDER BY id');
        assert.deepEqual(
          products.map((p) => p.title),
          ['Kettle without a shown price', 'Lamp', 'Made by hand, no price yet'],
        );
        // The running count of products follows the move.
        const [count] = await db.query<{ n: number }>('SELECT sum(n)::int AS n FROM product_count_shards');
        assert.equal(count?.n, 3);
        const [articleCount] = await db.query<{ n: number }>('SELECT sum(n)::int AS n FROM article_count_shards');
        assert.equal(articleCount?.n, 3, 'the running count of articles counts the moved ones');
        // Each moved article starts its revisions; the product's history went with it, its event stays in the feed.
        const [revisions] = await db.query<{ n: number }>('SELECT count(*)::int AS n FROM article_revisions');
        assert.equal(revisions?.n, 3);
        const [history] = await db.query<{ n: number }>('SELECT count(*)::int AS n FROM price_observations WHERE product_id = $1', [gunman]);
        assert.equal(history?.n, 0);
        const [event] = await db.query<{ product_id: number | null; article_id: number | null }>(`SELECT product_id, article_id FROM events`);
        assert.deepEqual(event, { product_id: null, article_id: null });
        // The moved articles are searchable like any other.
        const found = await db.query<{ title: string }>(`SELECT title FROM articles WHERE search_vector @@ websearch_to_tsquery(search_config, 'gunman')`);
        assert.deepEqual(
          found.map((f) => f.title),
          ['US cinema gunman had violent past'],
        );
      } finally {
        await drop();
      }
    });
  });
}
