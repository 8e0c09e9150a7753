// The main service as a process: graceful shutdown with a scrape in flight, and a SIGKILL mid-scrape.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { createPgliteDatabase } from '../../src/db/database.js';
import { startFixtureSite, type FixtureSite } from '../fixtures/site.js';
import { listening, startMainProcess } from '../process-helpers.js';

describe('main service lifecycle', () => {
  let site: FixtureSite;
  let slowSite: FixtureSite;
  const dirs: string[] = [];
  const tempDir = () => {
    const dir = mkdtempSync(join(tmpdir(), 'lifecycle-'));
    dirs.push(dir);
    return dir;
  };
  before(async () => {
    site = await startFixtureSite();
    slowSite = await startFixtureSite({ latencyMs: 1_500 });
  });
  after(async () => {
    await site.close();
    await slowSite.close();
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  test('SIGTERM lets an in-flight scrape finish, then exits 0 and closes the port', async () => {
    const service = await startMainProcess({ DATA_DIR: tempDir(), DEMO_SITE_URL: `${slowSite.url}books/` });
    const scrape = fetch(`${service.base}/scrape`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    await new Promise((r) => setTimeout(r, 300));
    const stopping = Date.now();
    service.child.kill('SIGTERM');
    const res = await scrape;
    assert.equal(res.status, 200, 'the scrape in flight completed');
    assert.equal(((await res.json()) as { count: number }).count, 20);
    const { code } = await service.exited;
    const took = Date.now() - stopping;
    assert.equal(code, 0, service.output());
    assert.ok(took < 10_000, `stopped in ${took} ms`);
    assert.equal(await listening(Number(new URL(service.base).port)), false);
  });

  test('a scrape longer than the grace period is stopped, answered 503 and logged; exit 0 within 10 s', async () => {
    const dir = tempDir();
    const service = await startMainProcess({ DATA_DIR: dir, DEMO_SITE_URL: `${site.url}slow` });
    const scrape = fetch(`${service.base}/scrape`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ timeout_ms: 60_000 }),
    });
    await new Promise((r) => setTimeout(r, 300));
    const stopping = Date.now();
    service.child.kill('SIGTERM');
    const res = await scrape;
    assert.equal(res.status, 503);
    const { code } = await service.exited;
    assert.equal(code, 0, service.output());
    assert.ok(Date.now() - stopping < 10_000);
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

  test('SIGKILL mid-scrape: the data directory reopens, with all of the run\'s products or none', async () => {
    const dir = tempDir();
    const service = await startMainProcess({ DATA_DIR: dir, DEMO_SITE_URL: `${slowSite.url}books/` });
    const scrape = fetch(`${service.base}/scrape`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ max_pages: 3 }),
    }).catch(() => undefined);
    await new Promise((r) => setTimeout(r, 1_000));
    service.child.kill('SIGKILL');
    await service.exited;
    await scrape;
    // The lock of the killed process is stale and taken over; PostgreSQL recovers its WAL.
    const db = await createPgliteDatabase(dir);
    try {
      const [products] = await db.query<{ n: number }>('SELECT count(*)::int AS n FROM products');
      assert.ok([0, 60].includes(products!.n), `products: ${products!.n}`);
      const logs = await db.query<{ document: { count: number; products: unknown[] } }>('SELECT document FROM scrape_logs');
      for (const { document } of logs) assert.ok(Array.isArray(document.products), 'no half-written document');
    } finally {
      await db.close();
    }
  });
});
