// The main service as a whole: a real socket, the docs, health, and behaviour when the database is missing or down.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { createPgliteDatabase, createPostgresDatabase } from '../../src/db/database.js';
import { DirectoryLocked } from '../../src/db/dir-lock.js';
import type { App } from '../../src/http/base-app.js';
import { backends, mainAppOn } from '../helpers.js';

/** Response bodies of our own API, read as loosely typed JSON for assertions. */
// biome-ignore lint/suspicious/noExplicitAny: assertions read our own answers' fields without a schema each
const readJson = async (res: Response): Promise<any> => res.json();

describe('main service on a real socket (PGlite)', () => {
  let app: App;
  let base: string;
  const closers: Array<() => Promise<void>> = [];
  before(async () => {
    const db = await backends()[0]!.open();
    app = await mainAppOn(db, { after: (fn) => closers.push(fn) });
    closers.push(() => db.close());
    await app.listen({ host: '127.0.0.1', port: 0 });
    const address = app.server.address();
    assert.ok(address && typeof address === 'object');
    base = `http://127.0.0.1:${address.port}`;
  });
  after(async () => {
    for (const close of closers) await close();
  });

  test('create, read, update and delete over HTTP', async () => {
    const created = await fetch(`${base}/products`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ title: 'Socket lamp', price: 24.99, currency: 'EUR' }),
    });
    assert.equal(created.status, 201);
    const product = await readJson(created);
    assert.equal(created.headers.get('location'), `/products/${product.id}`);
    assert.match(created.headers.get('x-request-id') ?? '', /^[0-9a-f-]{36}$/);
    const got = await fetch(`${base}${created.headers.get('location')}`);
    assert.deepEqual(await readJson(got), { ...product, provenance: null, last_seen_at: null, gone_at: null, tags: [] });
    const put = await fetch(`${base}/products/${product.id}`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ price: 19.99 }),
    });
    assert.equal((await readJson(put)).price, 19.99);
    const del = await fetch(`${base}/products/${product.id}`, { method: 'DELETE' });
    assert.deepEqual(await readJson(del), { id: product.id, deleted: true });
    const gone = await fetch(`${base}/products/${product.id}`);
    assert.equal(gone.status, 404);
    assert.equal(gone.headers.get('content-type'), 'application/problem+json; charset=utf-8');
  });

  test('GET / welcomes with links and lists every endpoint', async () => {
    const welcome = await readJson(await fetch(`${base}/`));
    assert.equal(welcome.docs, '/docs');
    assert.equal(welcome.openapi, '/openapi.json');
    const listed = welcome.endpoints.map((e: { method: string; path: string }) => `${e.method} ${e.path}`);
    for (const route of [
      'GET /health',
      'GET /products',
      'POST /products',
      'GET /products/{id}',
      'PUT /products/{id}',
      'PATCH /products/{id}',
      'DELETE /products/{id}',
      'POST /scrape',
      'GET /scrape-logs',
      'GET /scrape-logs/{id}',
    ]) {
      assert.ok(listed.includes(route), `${route} listed`);
    }
  });

  test('GET /health reports each store with backend and latency', async () => {
    const res = await fetch(`${base}/health`);
    assert.equal(res.status, 200);
    const health = await readJson(res);
    assert.equal(health.status, 'ok');
    assert.equal(health.checks.relational.backend, 'pglite');
    assert.equal(health.checks.relational.status, 'up');
    assert.equal(typeof health.checks.relational.latency_ms, 'number');
    assert.equal(health.checks.document.backend, 'pglite-jsonb');
    assert.equal(health.checks.browser.backend, 'chromium');
  });

  test('/docs serves Swagger UI and its assets from the package, without a CDN', async () => {
    const page = await fetch(`${base}/docs`);
    assert.equal(page.status, 200);
    const html = await page.text();
    assert.match(html, /swagger-ui/);
    assert.doesNotMatch(html, /https?:\/\/(?!127\.0\.0\.1)[^"']*\.(js|css)/, 'no asset from another host');
    const assets = [...html.matchAll(/(?:src|href)="([^"]+\.(?:js|css))"/g)].map((m) => m[1]!);
    assert.ok(assets.length >= 3, `assets referenced: ${assets.join(', ')}`);
    for (const asset of assets) {
      const res = await fetch(new URL(asset, `${base}/docs`));
      assert.equal(res.status, 200, asset);
      assert.ok((await res.arrayBuffer()).byteLength > 100, asset);
    }
    const spec = await fetch(`${base}/docs/json`);
    assert.equal(spec.status, 200, 'the UI loads the spec from ./json');
  });

  test('/openapi.json documents every route with schemas and examples', async () => {
    const spec = await readJson(await fetch(`${base}/openapi.json`));
    assert.match(spec.openapi, /^3\./);
    const documented = Object.entries(spec.paths).flatMap(([path, ops]) => Object.keys(ops as object).map((m) => `${m.toUpperCase()} ${path}`));
    const welcome = await readJson(await fetch(`${base}/`));
    for (const e of welcome.endpoints) assert.ok(documented.includes(`${e.method} ${e.path}`), `${e.method} ${e.path} documented`);
    const create = spec.paths['/products'].post;
    const body = create.requestBody.content['application/json'].schema;
    assert.deepEqual(body.required.sort(), ['price', 'title']);
    assert.equal(create.requestBody.content['application/json'].example.title, 'A Light in the Attic', 'request example present');
    assert.ok(create.responses['201'] && create.responses['422']);
    assert.ok(spec.paths['/scrape'].post.requestBody);
  });
});

describe('when the database is missing or down', () => {
  // The hang guard is the test's timeout: every request must be answered, each within the pool's 1 s connect timeout.
  test('a PostgreSQL server that is not there: 503 problems, degraded health, no hang', { timeout: 60_000 }, async (t) => {
    const db = createPostgresDatabase('postgres://postgres@127.0.0.1:1/nowhere', { connectionTimeoutMillis: 1_000 });
    const app = await mainAppOn(db, t);
    t.after(() => db.close());
    const list = await app.inject({ url: '/products' });
    assert.equal(list.statusCode, 503, list.body);
    assert.match(list.headers['content-type'] as string, /problem\+json/);
    assert.equal(list.headers['retry-after'], '1');
    const create = await app.inject({ method: 'POST', url: '/products', payload: { title: 'x', price: 1 } });
    assert.equal(create.statusCode, 503);
    const health = await app.inject({ url: '/health' });
    assert.equal(health.statusCode, 503);
    assert.equal(health.json().status, 'degraded');
    assert.equal(health.json().checks.relational.status, 'down');
  });

  test('tables never created: 503 telling to run npm run db:init, not 500', async (t) => {
    const db = await createPgliteDatabase(); // not migrated
    t.after(() => db.close());
    const app = await mainAppOn(db, t);
    const res = await app.inject({ url: '/products' });
    assert.equal(res.statusCode, 503);
    assert.match(res.json().detail, /npm run db:init/);
    assert.equal((await app.inject({ url: '/scrape-logs' })).statusCode, 503);
  });
});

describe('the embedded database directory', () => {
  test('survives a close and reopen with its data', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'pglite-'));
    try {
      const first = await createPgliteDatabase(dir);
      await first.exec("CREATE TABLE kept (v text); INSERT INTO kept VALUES ('still here')");
      await first.close();
      const second = await createPgliteDatabase(dir);
      assert.deepEqual(await second.query('SELECT v FROM kept'), [{ v: 'still here' }]);
      await second.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test("is locked: a second opener fails fast with a clear message; a dead owner's lock is taken over", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'pglite-'));
    try {
      // A live process (our parent) holds the lock.
      writeFileSync(join(dir, 'pglite.lock'), String(process.ppid));
      await assert.rejects(createPgliteDatabase(dir), (error: Error) => {
        assert.ok(error instanceof DirectoryLocked);
        assert.match(error.message, new RegExp(`in use by process ${process.ppid}`));
        assert.match(error.message, /DATA_DIR/);
        return true;
      });
      // A pid that cannot be alive: the lock is stale.
      writeFileSync(join(dir, 'pglite.lock'), '2147483646');
      const db = await createPgliteDatabase(dir);
      await assert.rejects(createPgliteDatabase(dir), DirectoryLocked, 'the same process cannot open it twice either');
      await db.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('a stale lock naming our own pid (a container restart) or a reused pid does not block start-up', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'pglite-'));
    try {
      // An earlier process with the pid this one now has (normal after a container restart).
      writeFileSync(join(dir, 'pglite.lock'), `${process.pid} 1`);
      const first = await createPgliteDatabase(dir);
      await first.close();
      // A live pid, but the process behind it started at another time than the lock's owner: reused.
      writeFileSync(join(dir, 'pglite.lock'), `${process.ppid} 1`);
      const second = await createPgliteDatabase(dir);
      await second.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
