// Migrations under concurrency: several processes starting on one empty PostgreSQL database at once.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, test } from 'node:test';
import pg from 'pg';
import { createPgliteDatabase, createPostgresDatabase } from '../../src/db/database.js';
import { migrate } from '../../src/db/migrate.js';
import { migrations } from '../../src/db/migrations.js';
import { warnIfNoPostgres } from '../helpers.js';

warnIfNoPostgres();
const url = process.env.TEST_DATABASE_URL ?? process.env.DATABASE_URL;

describe('migrations on PostgreSQL', { skip: url === undefined ? 'set DATABASE_URL or TEST_DATABASE_URL' : false }, () => {
  test('three instances migrating one empty database at once all succeed and apply each migration once', async () => {
    // Ten rounds: the race between two CREATE TABLE IF NOT EXISTS is a matter of timing.
    for (let round = 0; round < 10; round++) {
      const schema = `migrate_${randomBytes(5).toString('hex')}`;
      const admin = new pg.Client({ connectionString: url });
      await admin.connect();
      await admin.query(`CREATE SCHEMA ${schema}`);
      const scoped = new URL(url!);
      scoped.searchParams.set('options', `-c search_path=${schema}`);
      const instances = [0, 1, 2].map(() => createPostgresDatabase(scoped.toString(), { max: 2 }));
      try {
        const reports = await Promise.all(instances.map((db) => migrate(db)));
        for (const report of reports) assert.equal(report.current, migrations.at(-1)!.version);
        assert.equal(reports.reduce((n, r) => n + r.applied.length, 0), migrations.length, 'each migration applied by exactly one instance');
        const { rows } = await admin.query(`SELECT count(*)::int AS n FROM ${schema}.schema_migrations`);
        assert.equal(rows[0].n, migrations.length);
      } finally {
        await Promise.all(instances.map((db) => db.close()));
        await admin.query(`DROP SCHEMA ${schema} CASCADE`);
        await admin.end();
      }
    }
  });
});

test('migration 8 moves URL passwords out of what is served and gives products their canonical keys', async () => {
  const db = await createPgliteDatabase();
  try {
    await migrate(db, migrations.filter((m) => m.version < 8));
    await db.query(`INSERT INTO jobs (id, kind, status, source_url, request) VALUES ('00000000-0000-4000-8000-000000000001', 'scrape', 'succeeded', 'https://ann:hunter2@shop.example/list', $1)`, [
      JSON.stringify({ url: 'https://ann:hunter2@shop.example/list' }),
    ]);
    await db.query(`INSERT INTO products (title, price, scrape_key, source_url) VALUES ('Lamp', 1, 'https://Shop.Example:443/p/1/?utm_source=x&b=2&a=1', 'https://ann:hunter2@shop.example/p/1'), ('Kept', 1, 'https://shop.example/p/2', NULL)`);
    await db.query(`INSERT INTO webhooks (id, url, events, secret) VALUES ('00000000-0000-4000-8000-000000000002', 'https://hook:pw@receiver.example/in', '{*}', 'whsec_x')`);
    await migrate(db);
    const [job] = await db.query<{ source_url: string; request: { url: string }; request_private: { url: string } }>('SELECT source_url, request, request_private FROM jobs');
    assert.equal(job!.source_url, 'https://ann:***@shop.example/list');
    assert.equal(job!.request.url, 'https://ann:***@shop.example/list');
    assert.equal(job!.request_private.url, 'https://ann:hunter2@shop.example/list', 'still there to run it');
    const products = await db.query<{ title: string; scrape_key: string; source_url: string | null }>('SELECT title, scrape_key, source_url FROM products ORDER BY title');
    assert.deepEqual(products, [
      { title: 'Kept', scrape_key: 'https://shop.example/p/2', source_url: null },
      { title: 'Lamp', scrape_key: 'https://shop.example/p/1?a=1&b=2', source_url: 'https://ann:***@shop.example/p/1' },
    ]);
    const [hook] = await db.query<{ url: string; url_private: string }>('SELECT url, url_private FROM webhooks');
    assert.deepEqual(hook, { url: 'https://hook:***@receiver.example/in', url_private: 'https://hook:pw@receiver.example/in' });
  } finally {
    await db.close();
  }
});
