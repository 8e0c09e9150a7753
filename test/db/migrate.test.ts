// Migrations under concurrency: several `db:init` processes starting on one empty PostgreSQL database at once; and what old migrations do to old rows.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { describe, test } from 'node:test';
import pg from 'pg';
import { createPgliteDatabase } from '../../src/db/database.js';
import { migrate, MIGRATION_LOCK } from '../../src/db/migrate.js';
import { migrations } from '../../src/db/migrations/index.js';
import { warnIfNoPostgres } from '../helpers.js';
import { TSX } from '../process-helpers.js';
import { until } from '../wait.js';

warnIfNoPostgres();
const url = process.env.TEST_DATABASE_URL ?? process.env.DATABASE_URL;
const INIT = fileURLToPath(new URL('../../src/tools/db-init.ts', import.meta.url));

/** `npm run db:init` as a child process; resolves with its exit code and what it printed. */
function runInit(env: Record<string, string>): Promise<{ code: number | null; output: string }> {
  const child = spawn(process.execPath, ['--import', TSX, INIT], { env: { PATH: process.env.PATH ?? '', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  return new Promise((resolve) => child.once('exit', (code) => resolve({ code, output })));
}

describe('migrations on PostgreSQL', { skip: url === undefined ? 'set DATABASE_URL or TEST_DATABASE_URL' : false }, () => {
  test('three db:init processes on one empty database at once all succeed, and each migration is applied once', async () => {
    // A database of its own: the migrations' advisory lock, which the test holds as a starting gate,
    // is per database, so no other test file waits on it.
    const database = `migrate_${randomBytes(5).toString('hex')}`;
    const admin = new pg.Client({ connectionString: url });
    await admin.connect();
    await admin.query(`CREATE DATABASE ${database}`);
    const target = new URL(url!);
    target.pathname = `/${database}`;
    const gate = new pg.Client({ connectionString: target.href });
    await gate.connect();
    try {
      for (let round = 0; round < 3; round++) {
        const schema = `round_${round}`;
        await gate.query(`CREATE SCHEMA ${schema}`);
        const scoped = new URL(target.href);
        scoped.searchParams.set('options', `-c search_path=${schema}`);
        // The gate: every process starts, connects, and waits on the lock; released, they all race.
        await gate.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK]);
        const runs = [0, 1, 2].map(() => runInit({ DATABASE_URL: scoped.href, JOBS_SCHEMA: `${schema}_queue`, LOG_LEVEL: 'warn' }));
        await until('all three processes to wait at the gate', async () => {
          const { rows } = await gate.query<{ n: number }>(`SELECT count(*)::int AS n FROM pg_locks WHERE locktype = 'advisory' AND objid = $1 AND NOT granted`, [MIGRATION_LOCK]);
          return rows[0]!.n === 3;
        });
        await gate.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK]);
        const results = await Promise.all(runs);
        for (const result of results) assert.equal(result.code, 0, result.output);
        const applied = results.flatMap((r) => [...r.output.matchAll(/applied migration (\d+)/g)].map((m) => Number(m[1])));
        assert.deepEqual(
          applied.sort((a, b) => a - b),
          migrations.map((m) => m.version),
          'each migration applied by exactly one process',
        );
        const { rows } = await gate.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${schema}.schema_migrations`);
        assert.equal(rows[0]!.n, migrations.length);
      }
    } finally {
      await gate.end().catch(() => undefined);
      await admin.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
      await admin.end();
    }
  });
});

test('migration 8 moves URL passwords out of what is served and gives products their canonical keys', async () => {
  const db = await createPgliteDatabase();
  try {
    await migrate(
      db,
      migrations.filter((m) => m.version < 8),
    );
    await db.query(
      `INSERT INTO jobs (id, kind, status, source_url, request) VALUES ('00000000-0000-4000-8000-000000000001', 'scrape', 'succeeded', 'https://ann:hunter2@shop.example/list', $1)`,
      [JSON.stringify({ url: 'https://ann:hunter2@shop.example/list' })],
    );
    await db.query(
      `INSERT INTO products (title, price, scrape_key, source_url) VALUES ('Lamp', 1, 'https://Shop.Example:443/p/1/?utm_source=x&b=2&a=1', 'https://ann:hunter2@shop.example/p/1'), ('Kept', 1, 'https://shop.example/p/2', NULL)`,
    );
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
