// A new embedded data directory starts as a private copy of a template made once in a child process: complete, migrated, never shared.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { createPgliteDatabase, pgliteSharedBuffersMb, pgliteWasmTierUp } from '../../src/db/database.js';
import { migrate } from '../../src/db/migrate.js';
import { migrations } from '../../src/db/migrations/index.js';
import { ensureTemplate, seedDataDir, templateKey } from '../../src/db/pglite-template.js';
import { TEMPLATE_MAKER } from '../../src/context.js';

const root = mkdtempSync(join(tmpdir(), 'pglite-template-'));
const cacheDir = join(root, 'cache');
const spec = { cacheDir, queueSchema: 'pgboss', maker: TEMPLATE_MAKER };
let template = '';

/** Every file under `dir` with a hash of its content, to see whether anything in it changed. */
function fingerprint(dir: string): Map<string, string> {
  const out = new Map<string, string>();
  const walk = (at: string) => {
    for (const entry of readdirSync(at, { withFileTypes: true })) {
      const path = join(at, entry.name);
      if (entry.isDirectory()) walk(path);
      else out.set(path.slice(dir.length), createHash('sha256').update(readFileSync(path)).digest('hex'));
    }
  };
  walk(dir);
  return out;
}

const dataDir = (name: string) => join(root, name);

before(async () => {
  // Made here in a child process, as a first start without a build-time template does.
  template = await ensureTemplate(spec);
});
after(() => rmSync(root, { recursive: true, force: true }));

describe('the embedded database template', () => {
  test('is made once per key, in its own directory of the cache', async () => {
    assert.ok(existsSync(join(template, 'PG_VERSION')));
    assert.ok(template.includes(templateKey('pgboss')));
    assert.equal(await ensureTemplate(spec), template, 'a second call finds it');
    assert.deepEqual(readdirSync(cacheDir), [template.split('/').at(-2)], 'no staging directory left behind');
  });

  test('a fresh DATA_DIR starts from it and holds the full migrated schema, pg_trgm and the queue schema', async () => {
    const db = await createPgliteDatabase(dataDir('fresh'), { template: spec });
    try {
      const [row] = await db.query<{ version: number; n: number }>('SELECT max(version)::int AS version, count(*)::int AS n FROM schema_migrations');
      assert.deepEqual(row, { version: migrations.at(-1)!.version, n: migrations.length });
      assert.deepEqual((await migrate(db)).applied, [], 'nothing left to migrate');
      assert.equal((await db.query('SELECT 1 FROM pg_extension WHERE extname = $1', ['pg_trgm'])).length, 1);
      assert.equal((await db.query('SELECT 1 FROM pg_namespace WHERE nspname = $1', ['pgboss'])).length, 1);
      // Product search works at once: the trigram index is there and usable.
      await db.query("INSERT INTO products (title, price) VALUES ('Crème brûlée torch', 12.5)");
      assert.deepEqual(await db.query("SELECT title FROM products WHERE title ILIKE '%brûlée%'"), [{ title: 'Crème brûlée torch' }]);
      assert.deepEqual(await db.query("SELECT current_setting('shared_buffers') AS v"), [{ v: '8MB' }]);
    } finally {
      await db.close();
    }
  });

  test('data written survives a restart, and a restart never seeds over it', async () => {
    const dir = dataDir('restart');
    const first = await createPgliteDatabase(dir, { template: spec });
    await first.query("INSERT INTO products (title, price) VALUES ('Kept lamp', 30)");
    await first.close();
    assert.equal(await seedDataDir(dir, spec), 'existing');
    const second = await createPgliteDatabase(dir, { template: spec });
    try {
      assert.deepEqual(await second.query('SELECT title, price::float AS price FROM products'), [{ title: 'Kept lamp', price: 30 }]);
    } finally {
      await second.close();
    }
  });

  test('is never shared writable: each data directory gets its own copy and the template stays as it was', async () => {
    const before = fingerprint(template);
    const a = await createPgliteDatabase(dataDir('a'), { template: spec });
    const b = await createPgliteDatabase(dataDir('b'), { template: spec });
    try {
      await a.query("INSERT INTO products (title, price) VALUES ('Only in a', 1)");
      await a.exec('CHECKPOINT');
      assert.deepEqual(await b.query('SELECT title FROM products'), [], 'b does not see what a wrote');
      for (const dir of [dataDir('a'), dataDir('b')]) {
        const copy = statSync(join(dir, 'pglite', 'PG_VERSION'));
        assert.notEqual(copy.ino, statSync(join(template, 'PG_VERSION')).ino, 'a copy, not a link');
        assert.equal(copy.nlink, 1);
      }
    } finally {
      await a.close();
      await b.close();
    }
    assert.deepEqual(fingerprint(template), before, 'the template is unchanged');
  });

  test('a copy a dead process left half-done is cleared, and the directory starts complete', async () => {
    const dir = dataDir('interrupted');
    mkdirSync(join(dir, 'pglite.new-99999', 'pglite'), { recursive: true });
    writeFileSync(join(dir, 'pglite.new-99999', 'pglite', 'PG_VERSION'), '17\n');
    mkdirSync(join(dir, 'pglite')); // an empty directory holds nothing to keep
    const db = await createPgliteDatabase(dir, { template: spec });
    try {
      assert.equal((await db.query('SELECT 1 FROM schema_migrations')).length, migrations.length);
      assert.deepEqual(readdirSync(dir).sort(), ['pglite', 'pglite.lock']);
    } finally {
      await db.close();
    }
  });

  test('a directory with files but no database is left for PGlite, not replaced', async () => {
    const dir = dataDir('foreign');
    mkdirSync(join(dir, 'pglite'), { recursive: true });
    writeFileSync(join(dir, 'pglite', 'notes.txt'), 'mine');
    assert.equal(await seedDataDir(dir, spec), 'existing');
    assert.equal(readFileSync(join(dir, 'pglite', 'notes.txt'), 'utf8'), 'mine');
  });

  test('without a usable cache the database is made in a child process right in the data directory', async () => {
    const blocked = join(root, 'not-a-directory');
    writeFileSync(blocked, ''); // a file where the cache directory would go
    const dir = dataDir('no-cache');
    mkdirSync(dir);
    assert.equal(await seedDataDir(dir, { cacheDir: join(blocked, 'cache'), queueSchema: 'pgboss', maker: TEMPLATE_MAKER }), 'initdb');
    const db = await createPgliteDatabase(dir, { template: false });
    try {
      assert.equal((await db.query('SELECT 1 FROM schema_migrations')).length, migrations.length);
    } finally {
      await db.close();
    }
  });

  test('the key changes with the queue schema, so a template is never used for another', () => {
    assert.notEqual(templateKey('pgboss'), templateKey('jobs'));
    assert.notEqual(templateKey('pgboss'), templateKey(undefined));
    assert.equal(templateKey('pgboss'), templateKey('pgboss'));
  });

  test('the buffer pool is a quarter of the relation files, from 8 to 256 MB, and a large store gets the optimizing compiler, unless the settings fix them', async () => {
    // Sparse files: their size without their disk space.
    const pgdata = dataDir('sizes');
    const file = (path: string, bytes: number) => {
      mkdirSync(join(pgdata, path, '..'), { recursive: true });
      writeFileSync(join(pgdata, path), '');
      truncateSync(join(pgdata, path), bytes);
    };
    const mb = 1_048_576;
    assert.equal(pgliteSharedBuffersMb(pgdata), 8, 'no files yet');
    file('base/5/1259', 23 * mb);
    assert.equal(pgliteSharedBuffersMb(pgdata), 8, 'an empty database (23 MB of catalogs)');
    assert.equal(pgliteWasmTierUp(pgdata), false, 'the baseline compiler for a small store');
    assert.equal(pgliteWasmTierUp(pgdata, true), true, 'unless told otherwise');
    file('base/16384/16400', 377 * mb);
    assert.equal(pgliteSharedBuffersMb(pgdata), 100, 'a quarter of 400 MB');
    assert.equal(pgliteWasmTierUp(pgdata), true, 'the optimizing compiler for a large store (from 256 MB)');
    assert.equal(pgliteWasmTierUp(pgdata, false), false, 'unless told not to');
    file('base/16384/16400.1', 1024 * mb);
    file('global/1262', 4096 * mb);
    assert.equal(pgliteSharedBuffersMb(pgdata), 256, 'at most 256 MB; only base/ counts');
    assert.equal(pgliteSharedBuffersMb(pgdata, 48), 48, 'a fixed size wins');
    const db = await createPgliteDatabase(dataDir('fixed'), { template: spec, sharedBuffersMb: 24 });
    try {
      assert.deepEqual(await db.query("SELECT current_setting('shared_buffers') AS v"), [{ v: '24MB' }]);
    } finally {
      await db.close();
    }
  });
});
