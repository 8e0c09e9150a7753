// Access control, rate limits, security headers, CORS and metrics of the main service.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Database } from '../../src/db/database.js';
import { startFixtureSite } from '../fixtures/site.js';
import { assertProblem, backends, mainAppOn } from '../helpers.js';

describe('main service protection', () => {
  let db: Database;
  const closers: Array<() => Promise<void>> = [];
  const later = { after: (fn: () => Promise<void>) => closers.push(fn) };
  before(async () => {
    db = await backends()[0]!.open();
  });
  after(async () => {
    for (const close of closers) await close();
    await db.close();
  });

  test('with API_KEY set, writes need the key (Bearer or X-API-Key) and product reads stay open', async () => {
    const app = await mainAppOn(db, later, { API_KEY: 's3cret-key' });
    const create = { method: 'POST' as const, url: '/products', payload: { title: 'Keyed', price: 1 } };
    const none = await app.inject(create);
    assert.equal(none.statusCode, 401);
    assert.match(String(none.headers['content-type']), /problem\+json/);
    assert.equal(none.headers['www-authenticate'], 'Bearer');
    const wrong = await app.inject({ ...create, headers: { authorization: 'Bearer s3cret-kez' } });
    assert.equal(wrong.statusCode, 401);
    const longer = await app.inject({ ...create, headers: { 'x-api-key': 's3cret-key-and-more' } });
    assert.equal(longer.statusCode, 401);
    const bearer = await app.inject({ ...create, headers: { authorization: 'Bearer s3cret-key' } });
    assert.equal(bearer.statusCode, 201);
    const header = await app.inject({ ...create, headers: { 'x-api-key': 's3cret-key' } });
    assert.equal(header.statusCode, 201);
    const id = bearer.json().id;
    for (const [method, url] of [
      ['PUT', `/products/${id}`],
      ['PATCH', `/products/${id}`],
      ['DELETE', `/products/${id}`],
      ['POST', '/scrape'],
    ] as const) {
      const res = await app.inject({ method, url, payload: { price: 2 } });
      assert.equal(res.statusCode, 401, `${method} ${url}`);
    }
    assert.equal((await app.inject({ url: '/products' })).statusCode, 200);
    assert.equal((await app.inject({ url: `/products/${id}` })).statusCode, 200);
    const spec = (await app.inject({ url: '/openapi.json' })).json();
    assert.ok(spec.components.securitySchemes.bearer, '/docs offers Authorize');
    assert.deepEqual(spec.paths['/products'].post.security, [{ bearer: [] }, { apiKey: [] }]);
    assert.equal(spec.paths['/products'].get.security, undefined);
  });

  test('with API_KEY set, reads that expose operations need it too: scrape logs, metrics, jobs, schedules, webhooks', async () => {
    const app = await mainAppOn(db, later, { API_KEY: 's3cret-key' });
    const key = { 'x-api-key': 's3cret-key' };
    const id = '00000000-0000-4000-8000-000000000000';
    for (const url of [
      '/scrape-logs',
      `/scrape-logs/${id}`,
      '/metrics',
      '/jobs',
      '/schedules',
      '/webhooks',
      // Where messages go, what is watched and what fired.
      '/channels',
      `/channels/${id}`,
      '/alert-rules',
      `/alert-rules/${id}`,
      '/alerts',
      '/alerts/1',
      '/source-tags',
    ]) {
      const without = await app.inject({ url });
      assert.equal(without.statusCode, 401, url);
      assert.match(without.json().detail, /API key/);
      assert.notEqual((await app.inject({ url, headers: key })).statusCode, 401, `${url} with the key`);
    }
    // Open whatever the key: health, the API's description, the dashboard, and the products' data.
    for (const url of ['/', '/health', '/openapi.json', '/docs', '/ui', '/ui/products', '/ui/assets/app.js', '/products', '/events']) {
      assert.notEqual((await app.inject({ url })).statusCode, 401, url);
    }
    const spec = (await app.inject({ url: '/openapi.json' })).json();
    assert.deepEqual(spec.paths['/scrape-logs'].get.security, [{ bearer: [] }, { apiKey: [] }]);
  });

  test("with API_KEY set, the open tag reads leave out the tag's sources (what is watched where); with the key they show them", async () => {
    const app = await mainAppOn(db, later, { API_KEY: 's3cret-key' });
    const key = { 'x-api-key': 's3cret-key' };
    const set = await app.inject({ method: 'PUT', url: '/source-tags', headers: key, payload: { source: 'https://shop.example/secret-supplier/', tags: ['suppliers'] } });
    assert.equal(set.statusCode, 200, set.body);
    for (const url of ['/tags', '/tags/suppliers']) {
      const open = await app.inject({ url });
      assert.equal(open.statusCode, 200, url);
      assert.doesNotMatch(open.body, /secret-supplier/, `${url} without the key`);
      assert.match((await app.inject({ url, headers: key })).body, /secret-supplier/, `${url} with the key`);
      assert.doesNotMatch((await app.inject({ url, headers: { 'x-api-key': 'wrong' } })).body, /secret-supplier/, `${url} with a wrong key`);
    }
    const listed = (await app.inject({ url: '/tags' })).json();
    assert.deepEqual(
      listed.map((t: { name: string }) => t.name),
      ['suppliers'],
      'the tag itself stays readable',
    );
  });

  test("API_KEY_READS=true: every read needs the key except health, docs and the dashboard's files", async () => {
    const app = await mainAppOn(db, later, { API_KEY: 's3cret-key', API_KEY_READS: 'true' });
    for (const url of ['/products', '/products/1', '/events', '/products/1/history', '/external/posts']) {
      assert.equal((await app.inject({ url })).statusCode, 401, url);
    }
    assert.equal((await app.inject({ url: '/products', headers: { authorization: 'Bearer s3cret-key' } })).statusCode, 200);
    for (const url of ['/', '/health', '/openapi.json', '/ui/products']) assert.notEqual((await app.inject({ url })).statusCode, 401, url);
    // A CORS preflight carries no credentials and is not refused for lacking them.
    assert.notEqual((await app.inject({ method: 'OPTIONS', url: '/products' })).statusCode, 401);
  });

  test('TRUST_PROXY: behind a trusted proxy each client (X-Forwarded-For) has its own rate-limit bucket; untrusted, the header is ignored', async () => {
    const limited = (extra: Record<string, string>) => mainAppOn(db, later, { RATE_LIMIT_WRITES_PER_MINUTE: '1', ...extra });
    const write = (app: Awaited<ReturnType<typeof limited>>, client: string) =>
      app.inject({ method: 'POST', url: '/products', payload: { title: 'p', price: 1 }, remoteAddress: '10.0.0.2', headers: { 'x-forwarded-for': client } });
    const trusting = await limited({ TRUST_PROXY: '10.0.0.2' });
    assert.equal((await write(trusting, '203.0.113.7')).statusCode, 201);
    assert.equal((await write(trusting, '203.0.113.7')).statusCode, 429, 'the same client again');
    assert.equal((await write(trusting, '198.51.100.9')).statusCode, 201, 'another client behind the same proxy');
    const untrusting = await limited({});
    assert.equal((await write(untrusting, '203.0.113.7')).statusCode, 201);
    assert.equal((await write(untrusting, '198.51.100.9')).statusCode, 429, 'without TRUST_PROXY everyone behind the proxy is one client');
  });

  test('without API_KEY nothing asks for one', async () => {
    const app = await mainAppOn(db, later);
    const res = await app.inject({ method: 'POST', url: '/products', payload: { title: 'Open', price: 1 } });
    assert.equal(res.statusCode, 201);
  });

  test('POST /scrape and writes are rate limited per client with a 429 problem and Retry-After', async () => {
    const app = await mainAppOn(db, later, {
      RATE_LIMIT_SCRAPE_PER_MINUTE: '2',
      RATE_LIMIT_WRITES_PER_MINUTE: '3',
      DEMO_SITE_URL: 'http://127.0.0.1:9/',
    });
    const scrape = () => app.inject({ method: 'POST', url: '/scrape', payload: { url: 'ftp://x/' } });
    assert.equal((await scrape()).statusCode, 422);
    assert.equal((await scrape()).statusCode, 422);
    const limited = await scrape();
    assert.equal(limited.statusCode, 429);
    assert.match(String(limited.headers['content-type']), /problem\+json/);
    assert.ok(Number(limited.headers['retry-after']) >= 1);
    const write = () => app.inject({ method: 'POST', url: '/products', payload: { title: 'w', price: 1 } });
    for (let i = 0; i < 3; i++) assert.equal((await write()).statusCode, 201);
    assert.equal((await write()).statusCode, 429);
    assert.equal((await app.inject({ url: '/products?limit=1' })).statusCode, 200, 'reads are not limited');
  });

  test('a burst of scrapes is bounded: beyond the running and queued ones, 503 with Retry-After', async () => {
    const site = await startFixtureSite();
    closers.push(() => site.close());
    // One run at a time, four may wait (SCRAPE_CONCURRENCY x 4).
    const app = await mainAppOn(db, later, {
      SCRAPE_CONCURRENCY: '1',
      SCRAPE_ALLOW_PRIVATE_NETWORKS: 'true',
      RATE_LIMIT_SCRAPE_PER_MINUTE: '0',
    });
    const burst = await Promise.all(Array.from({ length: 8 }, () => app.inject({ method: 'POST', url: '/scrape', payload: { url: `${site.url}slow`, timeout_ms: 300 } })));
    const statuses = burst.map((r) => r.statusCode).sort();
    assert.deepEqual(statuses, [503, 503, 503, 504, 504, 504, 504, 504], 'one ran, four waited and ran, three were refused');
    const refused = burst.find((r) => r.statusCode === 503)!;
    assert.equal(refused.headers['retry-after'], '5');
    assert.match(refused.json().detail, /All 1 scrape slots are busy and 4 runs are waiting/);
  });

  test('security headers on every answer, errors found before routing included, with a CSP Swagger UI works under', async () => {
    const app = await mainAppOn(db, later);
    // The last one is refused before routing (a malformed percent-encoding): a 400 that skips the hooks.
    for (const url of ['/products?limit=1', '/docs', '/nowhere', '/products/%E0%A4%A']) {
      const res = await app.inject({ url });
      assert.equal(res.headers['x-content-type-options'], 'nosniff', url);
      assert.ok(res.headers['content-security-policy'], url);
      assert.equal(res.headers['x-frame-options'], 'SAMEORIGIN', url);
      assert.ok(res.headers['x-request-id'], url);
    }
    assert.equal((await app.inject({ url: '/products/%E0%A4%A' })).statusCode, 400);
    const csp = String((await app.inject({ url: '/docs' })).headers['content-security-policy']);
    assert.match(csp, /script-src 'self'/);
    assert.match(csp, /img-src 'self' data:/);
  });

  test("DNS rebinding: a host name that is not the service's is 421; IP addresses, localhost and ALLOWED_HOSTS are answered", async () => {
    const app = await mainAppOn(db, later);
    const get = (host: string) => app.inject({ url: '/products?limit=1', headers: { host } });
    for (const host of ['rebound.attacker.example', 'rebound.attacker.example:8000', 'agg.example']) {
      const res = await get(host);
      assert.match(assertProblem(res, 421).detail, /ALLOWED_HOSTS/, host);
      assert.equal(res.headers['x-content-type-options'], 'nosniff', 'refused answers carry the security headers too');
    }
    for (const host of ['127.0.0.1:8000', 'localhost:8000', 'LOCALHOST', '[::1]:8000', '10.0.0.7']) assert.equal((await get(host)).statusCode, 200, host);
    const named = await mainAppOn(db, later, { ALLOWED_HOSTS: 'agg.example, Admin.Example.' });
    for (const host of ['agg.example', 'agg.example:443', 'admin.example']) {
      assert.equal((await named.inject({ url: '/products?limit=1', headers: { host } })).statusCode, 200, host);
    }
    assert.equal((await named.inject({ url: '/products?limit=1', headers: { host: 'other.example' } })).statusCode, 421);
    // The name the auxiliary service uses for the main one is the service's own.
    const compose = await mainAppOn(db, later, { MAIN_SERVICE_URL: 'http://main:8000' });
    assert.equal((await compose.inject({ url: '/products?limit=1', headers: { host: 'main:8000' } })).statusCode, 200);
  });

  test('a state-changing request a browser marks cross-site, or from an origin not allowed, is 403; reads, scripts and allowed origins pass', async () => {
    const app = await mainAppOn(db, later, { CORS_ORIGINS: 'https://app.example' });
    const host = '127.0.0.1:8000';
    const create = (headers: Record<string, string>) => app.inject({ method: 'POST', url: '/products', payload: { title: 'Cross', price: 1 }, headers: { host, ...headers } });
    assert.match(assertProblem(await create({ 'sec-fetch-site': 'cross-site', origin: 'https://evil.example' }), 403).detail, /another site/);
    assert.match(assertProblem(await create({ origin: 'https://evil.example' }), 403).detail, /Origin https:\/\/evil\.example/);
    assertProblem(await create({ origin: 'null' }), 403);
    assert.equal((await create({})).statusCode, 201, 'a script sends no Origin');
    assert.equal((await create({ origin: `http://${host}`, 'sec-fetch-site': 'same-origin' })).statusCode, 201, 'the dashboard, same origin');
    assert.equal((await create({ origin: 'https://app.example', 'sec-fetch-site': 'cross-site' })).statusCode, 201, 'an origin in CORS_ORIGINS');
    assert.equal(
      (await app.inject({ url: '/products?limit=1', headers: { host, origin: 'https://evil.example', 'sec-fetch-site': 'cross-site' } })).statusCode,
      200,
      'reads: CORS decides what a page may read',
    );
    // What fetch(..., {method: 'POST', mode: 'no-cors'}) sends: no preflight, an Origin, a text/plain or no body.
    const scrapes = Number((await app.inject({ url: '/scrape-logs?limit=1' })).headers['x-total-count']);
    assertProblem(await app.inject({ method: 'POST', url: '/scrape', headers: { host, origin: 'https://evil.example', 'sec-fetch-site': 'cross-site' } }), 403);
    assertProblem(await app.inject({ method: 'POST', url: '/scrape', headers: { host } }), 415);
    assert.equal(Number((await app.inject({ url: '/scrape-logs?limit=1' })).headers['x-total-count']), scrapes, 'nothing ran');
  });

  test('CORS only for the configured origins', async () => {
    const none = await mainAppOn(db, later);
    const plain = await none.inject({ url: '/products?limit=1', headers: { origin: 'https://app.example' } });
    assert.equal(plain.headers['access-control-allow-origin'], undefined);
    const app = await mainAppOn(db, later, { CORS_ORIGINS: 'https://app.example, https://admin.example' });
    const allowed = await app.inject({ url: '/products?limit=1', headers: { origin: 'https://app.example' } });
    assert.equal(allowed.headers['access-control-allow-origin'], 'https://app.example');
    assert.match(String(allowed.headers['access-control-expose-headers']), /x-total-count/);
    const other = await app.inject({ url: '/products?limit=1', headers: { origin: 'https://evil.example' } });
    assert.equal(other.headers['access-control-allow-origin'], undefined);
    const preflight = await app.inject({
      method: 'OPTIONS',
      url: '/products',
      headers: { origin: 'https://admin.example', 'access-control-request-method': 'POST' },
    });
    assert.equal(preflight.statusCode, 204);
  });

  test('GET /metrics counts requests by route and status; each app has its own registry', async () => {
    const one = await mainAppOn(db, later);
    const two = await mainAppOn(db, later);
    await one.inject({ url: '/products/999999' });
    await one.inject({ url: '/products/999999' });
    await one.inject({ method: 'POST', url: '/scrape', payload: { url: 'ftp://x/' } });
    await one.inject({ url: '/no/such/route' });
    await one.inject({ url: '/docs' });
    const text = (await one.inject({ url: '/metrics' })).body;
    assert.match(text, /http_requests_total\{method="GET",route="\/products\/:id",status="404",service="main"\} 2/);
    assert.match(text, /http_requests_total\{method="POST",route="\/scrape",status="422",service="main"\} 1/);
    assert.match(text, /http_requests_total\{method="GET",route="unmatched",status="404",service="main"\} 1/);
    assert.match(text, /http_requests_total\{method="GET",route="\/docs",status="\d+",service="main"\} 1/, 'plugin routes are counted under their full path');
    assert.doesNotMatch(text, /route="\/no\/such\/route"/, 'raw URLs never become labels');
    assert.match(text, /scrape_runs_total\{mode="static",outcome="failed_422",service="main"\} 1/);
    assert.match(text, /http_request_duration_seconds_bucket/);
    assert.match(text, /process_resident_memory_bytes/);
    const other = (await two.inject({ url: '/metrics' })).body;
    assert.doesNotMatch(other, /route="\/products\/:id",status="404"/);
  });
});
