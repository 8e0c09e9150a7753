// The embedded database on its own thread: what the stores rely on (errors, transactions, notifications) crosses it intact, and the service's thread stays free while a statement runs.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { createPgliteDatabase, type PgliteDatabase, translateDbError } from '../../src/db/database.js';
import { ServiceUnavailable } from '../../src/problems.js';
import { TSX } from '../process-helpers.js';

const DATABASE = fileURLToPath(new URL('../../src/db/database.ts', import.meta.url));

/** A module run as a child process; resolves with its exit code and output, or 'hung' when it did not exit. */
function runScript(source: string, timeoutMs = 60_000): Promise<{ code: number | null | 'hung'; output: string }> {
  const dir = mkdtempSync(join(tmpdir(), 'pglite-thread-'));
  const file = join(dir, 'script.mts');
  writeFileSync(file, source);
  const child = spawn(process.execPath, ['--import', TSX, file], { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      resolve({ code: 'hung', output });
    }, timeoutMs);
    child.once('exit', (code) => {
      clearTimeout(timer);
      rmSync(dir, { recursive: true, force: true });
      resolve({ code, output });
    });
  });
}

describe('PGlite on its own thread', () => {
  let db: PgliteDatabase;
  before(async () => {
    db = await createPgliteDatabase();
    await db.exec('CREATE TABLE things (id int PRIMARY KEY, name text NOT NULL, seen timestamptz, tags text[])');
  });
  after(() => db.close());

  test('rows come back with their types: numbers, dates, arrays, JSON', async () => {
    const [row] = await db.query<{ n: number; at: Date; list: number[]; doc: { a: number[] } }>(
      `SELECT 42 AS n, '2026-01-02T03:04:05Z'::timestamptz AS at, ARRAY[1, 2] AS list, '{"a":[1]}'::jsonb AS doc`,
    );
    assert.deepEqual(row, { n: 42, at: new Date('2026-01-02T03:04:05Z'), list: [1, 2], doc: { a: [1] } });
  });

  test("an engine's error keeps its SQLSTATE and fields, so callers tell a duplicate from a missing table", async () => {
    await db.query('INSERT INTO things (id, name) VALUES (1, $1)', ['one']);
    await assert.rejects(db.query('INSERT INTO things (id, name) VALUES (1, $1)', ['again']), (error: Error & { code?: string; constraint?: string }) => {
      assert.equal(error.code, '23505');
      assert.equal(error.constraint, 'things_pkey');
      assert.match(error.message, /duplicate key/);
      return true;
    });
    await assert.rejects(db.query('SELECT * FROM nowhere'), (error: unknown) => {
      assert.ok(error instanceof ServiceUnavailable, 'a missing table is the uninitialised database, a 503');
      return true;
    });
  });

  test('a transaction commits its statements together, and one that throws leaves nothing', async () => {
    await db.transaction(async (tx) => {
      await tx.query('INSERT INTO things (id, name) VALUES (10, $1)', ['ten']);
      await tx.query('INSERT INTO things (id, name) VALUES (11, $1)', ['eleven']);
    });
    await assert.rejects(
      db.transaction(async (tx) => {
        await tx.query('INSERT INTO things (id, name) VALUES (12, $1)', ['twelve']);
        throw new Error('changed my mind');
      }),
      /changed my mind/,
    );
    // A statement that fails inside rolls the whole transaction back too.
    await assert.rejects(
      db.transaction(async (tx) => {
        await tx.query('INSERT INTO things (id, name) VALUES (13, $1)', ['thirteen']);
        await tx.query('INSERT INTO things (id, name) VALUES (13, $1)', ['thirteen again']);
      }),
      (error: Error & { code?: string }) => error.code === '23505',
    );
    const rows = await db.query<{ id: number }>('SELECT id FROM things WHERE id >= 10 ORDER BY id');
    assert.deepEqual(
      rows.map((r) => r.id),
      [10, 11],
    );
  });

  test('a statement outside an open transaction waits for it: it never sees half of it', async () => {
    let outside: Promise<{ n: number }[]> | undefined;
    await db.transaction(async (tx) => {
      await tx.query('INSERT INTO things (id, name) VALUES (20, $1)', ['twenty']);
      outside = db.query<{ n: number }>('SELECT count(*)::int AS n FROM things WHERE id BETWEEN 20 AND 29');
      // Sent while the transaction is open; answered only after it ends.
      await new Promise((resolve) => setTimeout(resolve, 50));
      await tx.query('INSERT INTO things (id, name) VALUES (21, $1)', ['twenty-one']);
    });
    assert.deepEqual(await outside, [{ n: 2 }]);
  });

  test("the service's thread runs while the engine works on a long statement", async () => {
    let turns = 0;
    let running = true;
    const spin = () => {
      turns += 1;
      if (running) setImmediate(spin);
    };
    setImmediate(spin);
    const started = turns;
    // Tens to hundreds of milliseconds of the engine's CPU.
    await db.query('SELECT count(*) FROM generate_series(1, 500000) AS g WHERE g % 7 = 0');
    running = false;
    // On the service's own thread the engine would have held the event loop for the whole statement.
    assert.ok(turns - started > 3, `the event loop turned ${turns - started} times while the statement ran`);
  });

  test('a statement run again runs by name on its kept plan, with the same answers; prepared: false is planned afresh each time', async () => {
    const kept = 'SELECT id, name, tags FROM things WHERE id = $1 AND $2::text[] IS NOT NULL';
    const fresh = 'SELECT id FROM things WHERE id = $1 AND name IS NOT NULL';
    for (const id of [1, 10, 11]) {
      const [row] = await db.query<{ id: number; name: string }>(kept, [id, ['a', 'b']]);
      assert.equal(row?.id, id);
      await db.query(fresh, [id], { prepared: false });
    }
    const statements = await db.query<{ statement: string }>('SELECT statement FROM pg_prepared_statements WHERE NOT from_sql');
    assert.ok(
      statements.some((s) => s.statement === kept),
      'the statement is kept prepared',
    );
    assert.ok(!statements.some((s) => s.statement === fresh), 'prepared: false is not');
    // An error by name leaves the connection as it was: the next statements run.
    await assert.rejects(db.query(kept, ['not a number', []]), (error: Error & { code?: string }) => error.code === '22P02');
    assert.deepEqual(await db.query(kept, [1, []]), [{ id: 1, name: 'one', tags: null }]);
    // Inside a transaction too.
    await db.transaction(async (tx) => {
      assert.deepEqual(await tx.query(kept, [10, []]), [{ id: 10, name: 'ten', tags: null }]);
    });
  });

  test("a table changed under a kept plan: the statement outside a transaction still answers, with the table's new shape", async () => {
    await db.exec('CREATE TABLE shapes (a int)');
    await db.query('INSERT INTO shapes VALUES (1)');
    const all = 'SELECT * FROM shapes WHERE a >= $1';
    assert.deepEqual(await db.query(all, [0]), [{ a: 1 }]);
    assert.deepEqual(await db.query(all, [0]), [{ a: 1 }]);
    await db.exec('ALTER TABLE shapes ADD COLUMN b text');
    assert.deepEqual(await db.query(all, [0]), [{ a: 1, b: null }]);
    assert.deepEqual(await db.query(all, [0]), [{ a: 1, b: null }]);
  });

  test('NOTIFY reaches a listener, until it stops listening', async () => {
    const heard: string[] = [];
    const stop = await db.pglite.listen('things_changed', (payload) => heard.push(payload));
    await db.query("SELECT pg_notify('things_changed', 'first')");
    await stop();
    await db.query("SELECT pg_notify('things_changed', 'second')");
    await db.query('SELECT 1');
    assert.deepEqual(heard, ['first']);
  });

  test('a snapshot of the data directory crosses the thread; a closed database refuses statements with an unavailable error, a 503', async () => {
    const other = await createPgliteDatabase(undefined, { loadDataDir: await db.dumpDataDir() });
    assert.deepEqual(await other.query('SELECT name FROM things WHERE id = 1'), [{ name: 'one' }]);
    await other.close();
    await assert.rejects(other.query('SELECT 1'), (error: unknown) => {
      assert.ok(translateDbError(error) instanceof ServiceUnavailable);
      return true;
    });
  });

  test('a script that awaits the database finishes its work, and one that never closes it still exits', async () => {
    const script = `
      import { createPgliteDatabase } from ${JSON.stringify(DATABASE)};
      const db = await createPgliteDatabase();
      const [row] = await db.query('SELECT 6 * 7 AS answer');
      console.log('answer', row.answer);
    `;
    const { code, output } = await runScript(script);
    assert.equal(code, 0, output);
    assert.match(output, /answer 42/);
  });
});
