// The posts client against a fake JSONPlaceholder on 127.0.0.1: validation, timeouts, cache, single-flight, stale fallback.
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, beforeEach, describe, test } from 'node:test';
import { createPostsClient, type PostsClient, type PostsClientOptions } from '../../src/external-posts/posts-client.js';
import { UpstreamFailed, UpstreamTimeout } from '../../src/problems.js';

type Mode = 'good' | 'error-503' | 'slow' | 'slow-body' | 'invalid-json' | 'object' | 'array-of-numbers' | 'huge' | 'huge-chunked';

const POSTS = [
  { userId: 1, id: 1, title: 'sunt aut facere', body: 'quia et suscipit' },
  { userId: 1, id: 2, title: 'qui est esse', body: 'est rerum tempore' },
  { userId: 2, id: 11, title: 'et ea vero quia', body: 'delectus reiciendis' },
];
const LINK = '<http://jsonplaceholder.test/posts?_page=1&_limit=2>; rel="first", <http://jsonplaceholder.test/posts?_page=2&_limit=2>; rel="next"';

/** A JSONPlaceholder look-alike whose behaviour each test switches, counting the requests it gets. */
class FakeUpstream {
  mode: Mode = 'good';
  /** Delay before a good answer, so concurrent requests overlap. */
  delayMs = 0;
  requests: string[] = [];
  url = '';
  private readonly server: Server = createServer((req, res) => this.handle(req, res));

  async start(): Promise<void> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/posts`;
  }

  async stop(): Promise<void> {
    // Hanging "slow" answers and idle keep-alive sockets must not hold the test run open.
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  reset(): void {
    this.mode = 'good';
    this.delayMs = 0;
    this.requests = [];
  }

  private handle(req: IncomingMessage, res: ServerResponse): void {
    this.requests.push(req.url ?? '');
    const later = (ms: number, fn: () => void) => {
      const timer = setTimeout(fn, ms);
      res.on('close', () => clearTimeout(timer));
    };
    switch (this.mode) {
      case 'good': {
        const query = new URL(req.url ?? '/', 'http://x').searchParams;
        const userId = query.get('userId');
        const posts = POSTS.filter((p) => userId === null || String(p.userId) === userId);
        const send = () => {
          res.writeHead(200, { 'content-type': 'application/json', 'x-total-count': String(posts.length), link: LINK });
          res.end(JSON.stringify(posts));
        };
        if (this.delayMs > 0) later(this.delayMs, send);
        else send();
        return;
      }
      case 'error-503':
        res.writeHead(503, { 'content-type': 'text/plain' }).end('down for maintenance');
        return;
      case 'slow':
        later(5_000, () => res.writeHead(200, { 'content-type': 'application/json' }).end('[]'));
        return;
      case 'slow-body':
        res.writeHead(200, { 'content-type': 'application/json' });
        res.write('[{"id":1}');
        later(5_000, () => res.end(']'));
        return;
      case 'invalid-json':
        res.writeHead(200, { 'content-type': 'application/json' }).end('[{"id": 1,');
        return;
      case 'object':
        res.writeHead(200, { 'content-type': 'application/json' }).end('{"posts": []}');
        return;
      case 'array-of-numbers':
        res.writeHead(200, { 'content-type': 'application/json' }).end('[1, 2, 3]');
        return;
      case 'huge':
        res.writeHead(200, { 'content-type': 'application/json' }).end(`[${'{"id":1},'.repeat(20_000)}{"id":2}]`);
        return;
      case 'huge-chunked':
        // No Content-Length: the cap must be enforced while reading.
        res.writeHead(200, { 'content-type': 'application/json' });
        for (let i = 0; i < 20; i++) res.write('{"id":1},'.repeat(1_000));
        res.end('{"id":2}]');
        return;
    }
  }
}

/** A port nothing listens on: bound once, then released. */
async function deadPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

describe('posts client', () => {
  const upstream = new FakeUpstream();
  const clients: PostsClient[] = [];
  let clock = 1_000_000;

  /** A client on the fake upstream with a hand-moved clock; closed when the suite ends. */
  function client(options: Partial<PostsClientOptions> = {}): PostsClient {
    const c = createPostsClient({ url: upstream.url, timeoutMs: 2_000, cacheTtlMs: 60_000, now: () => clock, ...options });
    clients.push(c);
    return c;
  }

  before(() => upstream.start());
  beforeEach(() => upstream.reset());
  after(async () => {
    await Promise.all(clients.map((c) => c.close()));
    await upstream.stop();
  });

  test('a good answer gives the posts and the paging headers: miss, then hit without asking again', async () => {
    const posts = client();
    const first = await posts.get({ _limit: '10' });
    assert.equal(first.cache, 'miss');
    assert.deepEqual(first.posts, POSTS);
    assert.deepEqual(first.headers, { 'x-total-count': '3', link: LINK });
    assert.equal(first.fetchedAt, clock);

    const second = await posts.get({ _limit: '10' });
    assert.equal(second.cache, 'hit');
    assert.deepEqual(second.posts, POSTS);
    assert.deepEqual(second.headers, first.headers);
    assert.equal(second.fetchedAt, first.fetchedAt);
    assert.deepEqual(upstream.requests, ['/posts?_limit=10']);
  });

  test('parameters are forwarded sorted, so their order does not split the cache', async () => {
    const posts = client();
    await posts.get({ userId: '1', _limit: '5' });
    const again = await posts.get({ _limit: '5', userId: '1' });
    assert.equal(again.cache, 'hit');
    assert.deepEqual(upstream.requests, ['/posts?_limit=5&userId=1']);
  });

  test('after the TTL the upstream is asked again', async () => {
    const posts = client({ cacheTtlMs: 1_000 });
    const first = await posts.get({});
    clock += 999;
    assert.equal((await posts.get({})).cache, 'hit');
    clock += 1;
    const refreshed = await posts.get({});
    assert.equal(refreshed.cache, 'miss');
    assert.equal(refreshed.fetchedAt, first.fetchedAt + 1_000);
    assert.equal(upstream.requests.length, 2);
  });

  test('when the upstream then fails, the old copy is served as stale, whatever its age', async () => {
    const posts = client({ cacheTtlMs: 1_000 });
    const first = await posts.get({ userId: '1' });
    clock += 86_400_000;
    upstream.mode = 'error-503';
    const stale = await posts.get({ userId: '1' });
    assert.equal(stale.cache, 'stale');
    assert.deepEqual(stale.posts, first.posts);
    assert.deepEqual(stale.headers, first.headers);
    assert.equal(stale.fetchedAt, first.fetchedAt);
    assert.ok(stale.staleBecause instanceof UpstreamFailed);
    assert.equal(upstream.requests.length, 2);

    // Recovery replaces the copy.
    upstream.mode = 'good';
    assert.equal((await posts.get({ userId: '1' })).cache, 'miss');
  });

  test('a slow upstream after the TTL also falls back to the stale copy', async () => {
    const posts = client({ cacheTtlMs: 1_000, timeoutMs: 300 });
    await posts.get({});
    clock += 5_000;
    upstream.mode = 'slow';
    const stale = await posts.get({});
    assert.equal(stale.cache, 'stale');
    assert.ok(stale.staleBecause instanceof UpstreamTimeout);
  });

  test('503 with no copy is UpstreamFailed (502) naming the status', async () => {
    upstream.mode = 'error-503';
    await assert.rejects(client().get({}), (error: unknown) => {
      assert.ok(error instanceof UpstreamFailed);
      assert.equal(error.status, 502);
      assert.match(error.message, /status 503/);
      return true;
    });
  });

  for (const [mode, message] of [
    ['invalid-json', /invalid JSON/],
    ['object', /not an array/],
    ['array-of-numbers', /other than objects/],
  ] as const) {
    test(`${mode} is UpstreamFailed: ${message.source}`, async () => {
      upstream.mode = mode;
      await assert.rejects(client().get({}), (error: unknown) => {
        assert.ok(error instanceof UpstreamFailed);
        assert.match(error.message, message);
        return true;
      });
    });
  }

  for (const mode of ['huge', 'huge-chunked'] as const) {
    test(`a body over the size cap is UpstreamFailed (${mode})`, async () => {
      upstream.mode = mode;
      await assert.rejects(client({ maxBodyBytes: 64 * 1024 }).get({}), (error: unknown) => {
        assert.ok(error instanceof UpstreamFailed);
        assert.match(error.message, /larger than 65536 bytes/);
        return true;
      });
    });
  }

  // The slow upstream answers after 5 s: a 504 naming 300 ms is the client's own timer ending the request first.
  test('no answer within timeoutMs 300 is UpstreamTimeout (504) at that timeout', async () => {
    upstream.mode = 'slow';
    await assert.rejects(client({ timeoutMs: 300 }).get({}), (error: unknown) => {
      assert.ok(error instanceof UpstreamTimeout);
      assert.equal(error.status, 504);
      assert.match(error.message, /300 ms/);
      return true;
    });
  });

  test('headers in time but a body that stalls is UpstreamTimeout too, at the same timeout', async () => {
    upstream.mode = 'slow-body';
    await assert.rejects(client({ timeoutMs: 300 }).get({}), (error: unknown) => error instanceof UpstreamTimeout && /300 ms/.test(error.message));
  });

  test('a closed port is UpstreamFailed', async () => {
    const port = await deadPort();
    const posts = client({ url: `http://127.0.0.1:${port}/posts` });
    await assert.rejects(posts.get({}), (error: unknown) => {
      assert.ok(error instanceof UpstreamFailed);
      assert.match(error.message, /could not be reached \(ECONNREFUSED\)/);
      return true;
    });
  });

  test('10 concurrent misses for one query share a single upstream request', async () => {
    upstream.delayMs = 100;
    const posts = client();
    const answers = await Promise.all(Array.from({ length: 10 }, () => posts.get({ userId: '2' })));
    assert.equal(upstream.requests.length, 1);
    for (const answer of answers) {
      assert.equal(answer.cache, 'miss');
      assert.deepEqual(answer.posts, [POSTS[2]]);
    }
    assert.equal((await posts.get({ userId: '2' })).cache, 'hit');
  });

  test('concurrent misses that fail all fail, with one upstream request', async () => {
    upstream.mode = 'error-503';
    const posts = client();
    const results = await Promise.allSettled(Array.from({ length: 5 }, () => posts.get({})));
    assert.equal(upstream.requests.length, 1);
    for (const r of results) assert.ok(r.status === 'rejected' && r.reason instanceof UpstreamFailed);
    // A failure is not cached: the next call asks again.
    upstream.mode = 'good';
    assert.equal((await posts.get({})).cache, 'miss');
  });

  test('distinct queries are cached separately', async () => {
    const posts = client();
    const one = await posts.get({ userId: '1' });
    const two = await posts.get({ userId: '2' });
    assert.deepEqual(one.posts, POSTS.slice(0, 2));
    assert.deepEqual(two.posts, [POSTS[2]]);
    assert.equal((await posts.get({ userId: '1' })).cache, 'hit');
    assert.equal((await posts.get({ userId: '2' })).cache, 'hit');
    assert.deepEqual(upstream.requests, ['/posts?userId=1', '/posts?userId=2']);
  });

  test('the cache holds at most maxEntries queries and drops the one fetched longest ago', async () => {
    const posts = client({ maxEntries: 2 });
    await posts.get({ _page: '1' });
    await posts.get({ _page: '2' });
    await posts.get({ _page: '3' });
    assert.equal((await posts.get({ _page: '3' })).cache, 'hit');
    assert.equal((await posts.get({ _page: '2' })).cache, 'hit');
    assert.equal((await posts.get({ _page: '1' })).cache, 'miss');
    assert.equal(upstream.requests.length, 4);
  });

  test('parameters in the configured URL are kept', async () => {
    const posts = client({ url: `${upstream.url}?source=test` });
    await posts.get({ _limit: '1' });
    assert.deepEqual(upstream.requests, ['/posts?source=test&_limit=1']);
  });
});
