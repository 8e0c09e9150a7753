// The main service as a process: graceful shutdown with a scrape in flight, and a SIGKILL inside and just after the products' transaction.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, afterEach, before, describe, test } from 'node:test';
import { createPgliteDatabase } from '../../src/db/database.js';
import { startFixtureSite, type FixtureSite } from '../fixtures/site.js';
import { listening, type ServiceProcess, startMainProcess as startProcess } from '../process-helpers.js';
import { until, untilOutput } from '../wait.js';

const HOLD_ENTRY = fileURLToPath(new URL('./hold-entry.ts', import.meta.url));

describe('main service lifecycle', () => {
  let site: FixtureSite;
  const dirs: string[] = [];
  const tempDir = () => {
    const dir = mkdtempSync(join(tmpdir(), 'lifecycle-'));
    dirs.push(dir);
    return dir;
  };
  before(async () => {
    site = await startFixtureSite();
  });
  // A test that fails before it stops its service must not leave the process running (the file would never end).
  const running: ServiceProcess[] = [];
  const startMainProcess = async (...args: Parameters<typeof startProcess>) => {
    const service = await startProcess(...args);
    running.push(service);
    return service;
  };
  afterEach(async () => {
    for (const service of running.splice(0)) {
      if (service.child.exitCode === null && service.child.signalCode === null) {
        service.child.kill('SIGKILL');
        await service.exited;
      }
    }
  });
  after(async () => {
    await site.close();
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  test('SIGTERM lets an in-flight scrape finish, then exits 0 (not the hard exit) and closes the port', async () => {
    const service = await startMainProcess({ DATA_DIR: tempDir(), DEMO_SITE_URL: `${site.url}books/`, LOG_LEVEL: 'info' });
    // The page stays unanswered until the signal has been sent: the scrape is provably in flight at SIGTERM.
    const page = site.hold('/books/');
    const scrape = fetch(`${service.base}/scrape`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    await until('the scrape to be fetching its page', () => site.inFlight().includes('/books/'));
    service.child.kill('SIGTERM');
    await untilOutput('the service to begin stopping', service.output, /main service stopping/);
    page.release();
    const res = await scrape;
    assert.equal(res.status, 200, 'the scrape in flight completed');
    assert.equal(((await res.json()) as { count: number }).count, 20);
    const { code } = await service.exited;
    assert.equal(code, 0, service.output());
    assert.doesNotMatch(service.output(), /did not stop within/);
    assert.equal(await listening(Number(new URL(service.base).port)), false);
  });

  test('a scrape that outlasts the grace period is stopped, answered 503 and logged; exit 0 (not the hard exit)', async () => {
    const dir = tempDir();
    const service = await startMainProcess({ DATA_DIR: dir, DEMO_SITE_URL: `${site.url}books/` });
    // Never released: only the drain can end this scrape.
    site.hold('/books/');
    const scrape = fetch(`${service.base}/scrape`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ timeout_ms: 60_000 }),
    });
    await until('the scrape to be fetching its page', () => site.inFlight().includes('/books/'));
    service.child.kill('SIGTERM');
    const res = await scrape;
    assert.equal(res.status, 503);
    const { code } = await service.exited;
    assert.equal(code, 0, service.output());
    assert.doesNotMatch(service.output(), /did not stop within/);
    const db = await createPgliteDatabase(dir);
    try {
      const logs = await db.query<{ status: string; document: { error: { status: number } } }>('SELECT status, document FROM scrape_logs');
      assert.equal(logs.length, 1);
      assert.equal(logs[0]!.status, 'failed');
      assert.equal(logs[0]!.document.error.status, 503);
    } finally {
      await db.close();
    }
  });

  // The kill lands at a moment the process itself announces: inside the run's transaction, after its
  // products were written but before COMMIT (none may survive), and right after COMMIT (all must).
  for (const [hold, expected] of [
    ['inside', 0],
    ['committed', 60],
  ] as const) {
    test(`SIGKILL ${hold === 'inside' ? "inside the products' transaction" : "just after the products' commit"}: the data directory reopens with ${expected === 0 ? 'none' : 'all'} of the run's products`, async () => {
      const dir = tempDir();
      const catalogue = await startFixtureSite();
      try {
        const service = await startMainProcess({ DATA_DIR: dir, DEMO_SITE_URL: `${catalogue.url}books/`, HOLD_PRODUCT_WRITE: hold }, { entry: HOLD_ENTRY });
        const scrape = fetch(`${service.base}/scrape`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ max_pages: 3 }),
        }).catch(() => undefined);
        const [announced] = await untilOutput(
          'the transaction to be held',
          service.output,
          /HELD (inside the transaction after writing (\d+) products|after the commit of the products)/,
        );
        if (hold === 'inside') assert.match(announced, /writing 60 products/);
        service.child.kill('SIGKILL');
        await service.exited;
        await scrape;
        // The lock of the killed process is stale and taken over; PostgreSQL recovers its WAL.
        const db = await createPgliteDatabase(dir);
        try {
          const [products] = await db.query<{ n: number }>('SELECT count(*)::int AS n FROM products');
          assert.ok([0, 60].includes(products!.n), `all or nothing, found ${products!.n}`);
          assert.equal(products!.n, expected);
          const logs = await db.query<{ document: { count: number; products: unknown[] } }>('SELECT document FROM scrape_logs');
          assert.equal(logs.length, 1, 'the run left its one log');
          for (const { document } of logs) assert.ok(Array.isArray(document.products), 'no half-written document');
        } finally {
          await db.close();
        }
      } finally {
        await catalogue.close();
      }
    });
  }
});
