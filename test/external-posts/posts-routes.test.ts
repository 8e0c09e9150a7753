// GET /external/posts through the main app, against a fake placeholder-posts upstream on 127.0.0.1.
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { after, before, describe, test } from 'node:test';
import type { App } from '../../src/http/base-app.js';
import { backends, mainAppOn } from '../helpers.js';
import { until } from '../wait.js';

type Mode = 'good' | 'down' | 'garbage' | 'not-array' | 'slow';

const POSTS = Array.from({ length: 4 }, (_, i) => ({ userId: 1 + (i % 2), id: i + 1, title: `title ${i + 1}`, body: `body ${i + 1}` }));
// Long enough that a loaded machine still answers the good cases in time, short enough for the slow case.
const TIMEOUT_MS = 1_000;
const TTL_MS = 1_000;

function assertProblem(res: { statusCode: number; headers: Record<string, unknown>; body: string }, status: number) {
  assert.equal(res.statusCode, status, res.body);
  assert.match(String(res.headers['content-type']), /^application\/problem\+json/);
  const body = JSON.parse(res.body);
  assert.equal(body.status, status);
  assert.doesNotMatch(res.body, /at .*\.(ts|js):\d+/, 'no stack trace');
  return body;
}

describe('GET /external/posts', () => {
  let app: App;
  // The fake upstream's behaviour and what it was asked, switched by each test.
  const upstream = { mode: 'good' as Mode, queries: [] as Array<Record<string, string>> };
  const closers: Array<() => Promise<void>> = [];

  before(async () => {
    const server = createServer((req: IncomingMessage, res: ServerResponse) => {
      const url = new URL(req.url ?? '/', 'http://upstream');
      upstream.queries.push(Object.fromEntries(url.searchParams));
      switch (upstream.mode) {
        case 'good':
          res.writeHead(200, {
            'content-type': 'application/json; charset=utf-8',
            'x-total-count': '100',
            link: '<http://upstream/posts?_page=1&_limit=2>; rel="first", <http://upstream/posts?_page=2&_limit=2>; rel="next"',
          });
          return res.end(JSON.stringify(POSTS));
        case 'down':
          res.writeHead(503, { 'content-type': 'text/plain' });
          return res.end('maintenance');
        case 'garbage':
          res.writeHead(200, { 'content-type': 'application/json' });
          return res.end('<html>not json</html>');
        case 'not-array':
          res.writeHead(200, { 'content-type': 'application/json' });
          return res.end('{"posts": []}');
        case 'slow':
          // Never answers in time; the socket is destroyed when the server closes.
          return;
      }
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as { port: number };
    closers.push(async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    });

    const db = await backends()[0]!.open();
    app = await mainAppOn(
      db,
      { after: (fn) => closers.unshift(fn) },
      {
        EXTERNAL_POSTS_URL: `http://127.0.0.1:${port}/posts`,
        EXTERNAL_POSTS_TIMEOUT_MS: String(TIMEOUT_MS),
        EXTERNAL_POSTS_CACHE_TTL_MS: String(TTL_MS),
      },
    );
    closers.push(() => db.close());
  });
  after(async () => {
    for (const close of closers) await close();
  });

  test('a miss fetches and relays the array with X-Total-Count and Link; a repeat is a cache hit', async () => {
    upstream.mode = 'good';
    upstream.queries.length = 0;
    const first = await app.inject({ url: '/external/posts?limit=2' });
    assert.equal(first.statusCode, 200, first.body);
    assert.deepEqual(first.json(), POSTS);
    assert.equal(first.headers['x-cache'], 'MISS');
    assert.equal(first.headers['x-total-count'], '100');
    assert.match(String(first.headers.link), /rel="next"/);
    assert.equal(first.headers.warning, undefined);
    assert.deepEqual(upstream.queries, [{ _limit: '2' }], 'limit is sent as _limit');

    const second = await app.inject({ url: '/external/posts?limit=2' });
    assert.equal(second.headers['x-cache'], 'HIT');
    assert.equal(second.headers['x-total-count'], '100');
    assert.match(String(second.headers.age), /^\d+$/);
    assert.deepEqual(second.json(), POSTS);
    assert.equal(upstream.queries.length, 1, 'the hit did not reach the upstream');
  });

  test('when the upstream fails after the TTL, the stale copy is served and says so', async () => {
    upstream.mode = 'good';
    assert.equal((await app.inject({ url: '/external/posts?userId=3' })).headers['x-cache'], 'MISS');
    upstream.mode = 'down';
    // A fresh copy is a HIT and asks nothing of the upstream; once past its TTL it is asked, fails, and the copy is served stale.
    const stale = await until('the copy to pass its TTL', async () => {
      const res = await app.inject({ url: '/external/posts?userId=3' });
      return res.headers['x-cache'] === 'HIT' ? false : res;
    });
    assert.equal(stale.statusCode, 200, stale.body);
    assert.deepEqual(stale.json(), POSTS);
    assert.equal(stale.headers['x-cache'], 'STALE');
    assert.equal(stale.headers.warning, '110 - "Response is stale"');
    assert.ok(Number(stale.headers.age) >= 1, `Age ${stale.headers.age}`);
    assert.equal(stale.headers['x-total-count'], '100', 'the copy keeps its headers');
    assert.match(String(stale.headers.link), /rel="first"/);
  });

  test('upstream down with no copy: 502', async () => {
    upstream.mode = 'down';
    const problem = assertProblem(await app.inject({ url: '/external/posts?userId=76' }), 502);
    assert.match(problem.detail, /503/);
  });

  test('upstream sends invalid JSON or a non-array with no copy: 502', async () => {
    upstream.mode = 'garbage';
    assert.match(assertProblem(await app.inject({ url: '/external/posts?userId=77' }), 502).detail, /invalid JSON/);
    upstream.mode = 'not-array';
    assert.match(assertProblem(await app.inject({ url: '/external/posts?userId=77' }), 502).detail, /not an array/);
  });

  test('a slow upstream with no copy: 504 at the configured timeout', { timeout: 60_000 }, async () => {
    // The upstream never answers: only the configured timer can end the request, and the detail names it.
    upstream.mode = 'slow';
    const problem = assertProblem(await app.inject({ url: '/external/posts?userId=78' }), 504);
    assert.match(problem.detail, new RegExp(`${TIMEOUT_MS} ms`));
  });

  test("userId and JSONPlaceholder's own paging parameters pass through; limit wins over _limit", async () => {
    upstream.mode = 'good';
    upstream.queries.length = 0;
    await app.inject({ url: '/external/posts?userId=2&_page=3&_limit=5' });
    await app.inject({ url: '/external/posts?_start=10&_end=20' });
    await app.inject({ url: '/external/posts?limit=7&_limit=50&userId=1' });
    assert.deepEqual(upstream.queries, [
      { userId: '2', _page: '3', _limit: '5' },
      { _start: '10', _end: '20' },
      { _limit: '7', userId: '1' },
    ]);
  });

  const bad: Array<[string, string]> = [
    ['limit=0', 'limit'],
    ['limit=101', 'limit'],
    ['limit=abc', 'limit'],
    ['limit=1.5', 'limit'],
    ['userId=0', 'userId'],
    ['userId=-3', 'userId'],
    ['userId=x', 'userId'],
    ['_page=-1', '_page'],
    ['_limit=ten', '_limit'],
    ['_start=1.5', '_start'],
    ['_end=-2', '_end'],
    ['colour=red', 'colour'],
    ['_sort=title', '_sort'],
  ];
  for (const [query, field] of bad) {
    test(`?${query} -> 422 naming ${field}, without asking the upstream`, async () => {
      upstream.queries.length = 0;
      const problem = assertProblem(await app.inject({ url: `/external/posts?${query}` }), 422);
      assert.ok(
        problem.errors.some((e: { path: string }) => e.path === `/querystring/${field}`),
        JSON.stringify(problem.errors),
      );
      assert.equal(upstream.queries.length, 0);
    });
  }

  test('the route is documented under "external" and listed on the welcome page', async () => {
    const spec = (await app.inject({ url: '/openapi.json' })).json();
    const op = spec.paths['/external/posts'].get;
    assert.deepEqual(op.tags, ['external']);
    const names = op.parameters.map((p: { name: string }) => p.name).sort();
    assert.deepEqual(names, ['_end', '_limit', '_page', '_start', 'limit', 'userId']);
    for (const status of ['200', '422', '502', '504']) assert.ok(op.responses[status], status);
    const welcome = (await app.inject({ url: '/' })).json();
    assert.ok(welcome.endpoints.some((e: { method: string; path: string }) => e.method === 'GET' && e.path === '/external/posts'));
  });
});
