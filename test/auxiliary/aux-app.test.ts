// The auxiliary service: text statistics through inject, and its proxy against a real main service on a real socket.
import assert from 'node:assert/strict';
import { createServer, type Server, type Socket } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { buildAuxApp } from '../../src/auxiliary/app.js';
import { createMainClient, type MainClient } from '../../src/auxiliary/main-client.js';
import type { App } from '../../src/http/base-app.js';
import { assertProblem, backends, mainAppOn } from '../helpers.js';

const json = { 'content-type': 'application/json' };

/** An aux app relaying to `mainUrl`, closed with its client when the suite ends. */
async function auxOn(mainUrl: string, closers: Array<() => Promise<void>>, proxyTimeoutMs = 5_000): Promise<{ app: App; main: MainClient }> {
  const main = createMainClient(mainUrl, proxyTimeoutMs);
  const app = await buildAuxApp({
    config: { logLevel: 'silent', bodyLimitBytes: 1_048_576, requestTimeoutMs: 30_000, mainServiceUrl: mainUrl, proxyTimeoutMs, corsOrigins: [], allowedHosts: [] },
    main,
  });
  closers.push(async () => {
    await app.close();
    await main.close();
  });
  return { app, main };
}

/** A port nothing listens on: bound once, then released. */
async function deadPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** A server that accepts connections and never answers. */
async function hangingServer(): Promise<{ url: string; close(): Promise<void> }> {
  const sockets = new Set<Socket>();
  const server: Server = createServer((socket) => {
    sockets.add(socket);
    socket.on('error', () => {});
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}`,
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

describe('POST /process/text', () => {
  let app: App;
  const closers: Array<() => Promise<void>> = [];
  before(async () => {
    ({ app } = await auxOn(`http://127.0.0.1:${await deadPort()}`, closers));
  });
  after(async () => {
    for (const close of closers) await close();
  });

  test('JSON {text} answers every statistic', async () => {
    const res = await app.inject({ method: 'POST', url: '/process/text', payload: { text: 'Hello world. Hello again!\n\nSecond paragraph here.' } });
    assert.equal(res.statusCode, 200, res.body);
    const stats = res.json();
    assert.equal(stats.word_count, 7);
    assert.equal(stats.sentence_count, 3);
    assert.equal(stats.paragraph_count, 2);
    assert.equal(stats.line_count, 3);
    assert.equal(stats.unique_word_count, 6);
    assert.deepEqual(stats.top_words[0], { word: 'hello', count: 2 });
    for (const key of ['character_count', 'character_count_no_spaces', 'average_word_length', 'reading_time_seconds']) {
      assert.equal(typeof stats[key], 'number', key);
    }
  });

  test('a text/plain body is the text itself, and graphemes count once', async () => {
    const res = await app.inject({
      method: 'POST',
      url: '/process/text',
      payload: 'café 😀',
      headers: { 'content-type': 'text/plain; charset=utf-8' },
    });
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.json().character_count, 6);
    assert.equal(res.json().word_count, 1, 'emoji are not words');
  });

  test('JSON and text/plain give the same answer for the same text', async () => {
    const text = '日本語の文章です。二つ目の文です。';
    const a = await app.inject({ method: 'POST', url: '/process/text', payload: { text } });
    const b = await app.inject({ method: 'POST', url: '/process/text', payload: text, headers: { 'content-type': 'text/plain' } });
    assert.deepEqual(a.json(), b.json());
    assert.equal(a.json().sentence_count, 2);
  });

  test('an empty text is valid and counts zero', async () => {
    const res = await app.inject({ method: 'POST', url: '/process/text', payload: { text: '' } });
    assert.equal(res.statusCode, 200);
    assert.equal(res.json().word_count, 0);
  });

  test('a body over 1 MiB is 413, JSON or plain text', async () => {
    const big = 'a '.repeat(550_000);
    assertProblem(await app.inject({ method: 'POST', url: '/process/text', payload: { text: big } }), 413);
    assertProblem(await app.inject({ method: 'POST', url: '/process/text', payload: big, headers: { 'content-type': 'text/plain' } }), 413);
  });

  test('just under 1 MiB of text is accepted', async () => {
    const text = 'word '.repeat(200_000);
    const res = await app.inject({ method: 'POST', url: '/process/text', payload: text, headers: { 'content-type': 'text/plain' } });
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.json().word_count, 200_000);
  });

  const bad: Array<[string, { payload: unknown; headers?: Record<string, string> }, number, string?]> = [
    ['missing text', { payload: {} }, 422, '/body/text'],
    ['no body at all (and so no content type)', { payload: undefined }, 422, '/body/text'],
    ['text as number', { payload: { text: 42 } }, 422, '/body/text'],
    ['text as null', { payload: { text: null } }, 422, '/body/text'],
    ['text as array', { payload: { text: ['a'] } }, 422, '/body/text'],
    ['unknown field', { payload: { text: 'x', lang: 'en' } }, 422, '/body/lang'],
    ['array body', { payload: ['x'] }, 422, '/body'],
    ['malformed JSON', { payload: '{"text": ', headers: json }, 400],
    ['empty JSON body', { payload: '', headers: json }, 400],
    ['form-encoded body', { payload: 'text=hello', headers: { 'content-type': 'application/x-www-form-urlencoded' } }, 415],
  ];
  for (const [name, request, status, path] of bad) {
    test(`${name} -> ${status}`, async () => {
      const res = await app.inject({ method: 'POST', url: '/process/text', ...(request as { payload: string }) });
      const problem = assertProblem(res, status);
      if (path)
        assert.ok(
          problem.errors.some((e: { path: string }) => e.path === path),
          JSON.stringify(problem.errors),
        );
    });
  }
});

describe('the proxy against a real main service', () => {
  let main: App;
  let mainUrl: string;
  let aux: App;
  const closers: Array<() => Promise<void>> = [];
  before(async () => {
    const db = await backends()[0]!.open();
    main = await mainAppOn(db, { after: (fn) => closers.push(fn) }, { EXTERNAL_POSTS_URL: `http://127.0.0.1:${await deadPort()}/posts` });
    closers.push(() => db.close());
    await main.listen({ host: '127.0.0.1', port: 0 });
    mainUrl = `http://127.0.0.1:${(main.server.address() as { port: number }).port}`;
    ({ app: aux } = await auxOn(mainUrl, closers));
  });
  after(async () => {
    // The aux apps first: their pooled sockets keep the main service's close waiting otherwise.
    for (const close of closers.reverse()) await close();
  });

  test('products created through main appear through the proxy, with X-Total-Count and Link', async () => {
    for (const [title, price] of [
      ['Proxy lamp', 10],
      ['Proxy desk', 120.5],
      ['Proxy chair', 45],
    ] as const) {
      const created = await main.inject({ method: 'POST', url: '/products', payload: { title, price, description: 'proxy-set' } });
      assert.equal(created.statusCode, 201);
    }
    const all = await aux.inject({ url: '/proxy/products?q=proxy-set' });
    assert.equal(all.statusCode, 200, all.body);
    assert.match(String(all.headers['content-type']), /^application\/json/);
    assert.equal(all.headers['x-total-count'], '3');
    assert.deepEqual(
      all.json().map((p: { title: string }) => p.title),
      ['Proxy lamp', 'Proxy desk', 'Proxy chair'],
    );
    assert.match(all.body, /"price":120\.5[,}]/, "the main service's JSON, byte for byte");

    const page = await aux.inject({ url: '/proxy/products?q=proxy-set&limit=2&sort=-price' });
    assert.equal(page.headers['x-total-count'], '3');
    assert.deepEqual(
      page.json().map((p: { title: string }) => p.title),
      ['Proxy desk', 'Proxy chair'],
    );
    assert.equal(page.headers.link, '</proxy/products?q=proxy-set&limit=2&sort=-price&offset=2>; rel="next"');
    const next = await aux.inject({ url: page.headers.link!.toString().slice(1, page.headers.link!.toString().indexOf('>')) });
    assert.deepEqual(
      next.json().map((p: { title: string }) => p.title),
      ['Proxy lamp'],
    );
    assert.equal(next.headers.link, '</proxy/products?q=proxy-set&limit=2&sort=-price&offset=0>; rel="prev"');
  });

  test("one product, and the main service's 404 and 422, pass through as problem+json", async () => {
    const created = (await main.inject({ method: 'POST', url: '/products', payload: { title: 'Single', price: 3 } })).json();
    const one = await aux.inject({ url: `/proxy/products/${created.id}` });
    assert.equal(one.statusCode, 200);
    assert.deepEqual(one.json(), { ...created, provenance: null, last_seen_at: null, gone_at: null, tags: [] });
    const missing = assertProblem(await aux.inject({ url: '/proxy/products/2000000000' }), 404);
    assert.match(missing.detail, /2000000000/);
    assertProblem(await aux.inject({ url: '/proxy/products/abc' }), 422);
    const invalid = assertProblem(await aux.inject({ url: '/proxy/products?limit=0&colour=red' }), 422);
    const paths = invalid.errors.map((e: { path: string }) => e.path);
    assert.ok(paths.includes('/querystring/limit') && paths.includes('/querystring/colour'), JSON.stringify(paths));
  });

  test('the query string reaches main unchanged, encoding included', async () => {
    await main.inject({ method: 'POST', url: '/products', payload: { title: 'Crème brûlée & co', price: 7 } });
    const res = await aux.inject({ url: '/proxy/products?q=cr%C3%A8me%20br%C3%BBl%C3%A9e%20%26%20co' });
    assert.equal(res.statusCode, 200);
    assert.deepEqual(
      res.json().map((p: { title: string }) => p.title),
      ['Crème brûlée & co'],
    );
  });

  test("external posts: the main service's 502 (upstream down) and 422 pass through", async () => {
    const down = assertProblem(await aux.inject({ url: '/proxy/external-posts?limit=2' }), 502);
    assert.match(down.type, /upstream-failed/);
    const invalid = assertProblem(await aux.inject({ url: '/proxy/external-posts?limit=500' }), 422);
    assert.equal(invalid.errors[0].path, '/querystring/limit');
  });

  test('GET /health says ok with main up and its latency', async () => {
    const res = await aux.inject({ url: '/health' });
    assert.equal(res.statusCode, 200);
    const health = res.json();
    assert.equal(health.status, 'ok');
    assert.equal(health.main_service.url, mainUrl);
    assert.equal(health.main_service.status, 'up');
    assert.equal(typeof health.main_service.latency_ms, 'number');
  });

  test('over a real socket: keep-alive and headers survive two hops', async () => {
    await aux.listen({ host: '127.0.0.1', port: 0 });
    const auxUrl = `http://127.0.0.1:${(aux.server.address() as { port: number }).port}`;
    const res = await fetch(`${auxUrl}/proxy/products?limit=1`);
    assert.equal(res.status, 200);
    assert.ok(Number(res.headers.get('x-total-count')) >= 1);
    assert.match(res.headers.get('link') ?? '', /^<\/proxy\/products\?limit=1&offset=1>; rel="next"/);
    assert.equal(((await res.json()) as unknown[]).length, 1);
  });
});

describe('the proxy when the main service is down or slow', () => {
  const closers: Array<() => Promise<void>> = [];
  after(async () => {
    for (const close of closers.reverse()) await close();
  });

  test('unreachable main: 502 naming its URL; /health 200 degraded', async () => {
    const url = `http://127.0.0.1:${await deadPort()}`;
    const { app } = await auxOn(url, closers);
    for (const path of ['/proxy/products', '/proxy/external-posts?limit=1', '/proxy/products/1']) {
      const problem = assertProblem(await app.inject({ url: path }), 502);
      assert.ok(problem.detail.includes(url), problem.detail);
    }
    const health = await app.inject({ url: '/health' });
    assert.equal(health.statusCode, 200);
    assert.equal(health.json().status, 'degraded');
    assert.equal(health.json().main_service.status, 'down');
    assert.equal(health.json().main_service.url, url);
  });

  test('hanging main: 504 when its configured proxyTimeoutMs runs out; /health degraded', async () => {
    const hanging = await hangingServer();
    closers.push(hanging.close);
    const { app } = await auxOn(hanging.url, closers, 300);
    // The main service never answers, so only the timer can end the request: the one configured here.
    const problem = assertProblem(await app.inject({ url: '/proxy/products' }), 504);
    assert.match(problem.detail, /did not answer within 300 ms/);
    assert.ok(problem.detail.includes(hanging.url));
    assertProblem(await app.inject({ url: '/proxy/external-posts' }), 504);
    const health = await app.inject({ url: '/health' });
    assert.equal(health.json().status, 'degraded');
    assert.equal(health.json().main_service.status, 'down');
  });

  test('the raw query string and the request id reach the main service; only relevant headers come back', async () => {
    const { createServer: createHttpServer } = await import('node:http');
    const seen: Array<{ url: string; requestId: unknown }> = [];
    const server = createHttpServer((req, res) => {
      seen.push({ url: req.url ?? '', requestId: req.headers['x-request-id'] });
      res
        .writeHead(200, {
          'content-type': 'application/json; charset=utf-8',
          'x-total-count': '1',
          'x-cache': 'STALE',
          age: '42',
          warning: '110 - "Response is stale"',
          'set-cookie': 'session=secret',
          'x-internal': 'no',
        })
        .end('[{"id":1}]');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    closers.push(() => new Promise<void>((resolve) => server.close(() => resolve())));
    const url = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
    const { app } = await auxOn(url, closers);
    const res = await app.inject({ url: '/proxy/external-posts?userId=1&userId=2&x=%20a+b', headers: { 'x-request-id': 'trace-me-123' } });
    assert.equal(res.statusCode, 200);
    assert.equal(res.body, '[{"id":1}]');
    assert.deepEqual(seen, [{ url: '/external/posts?userId=1&userId=2&x=%20a+b', requestId: 'trace-me-123' }]);
    assert.equal(res.headers['x-cache'], 'STALE');
    assert.equal(res.headers.age, '42');
    assert.equal(res.headers.warning, '110 - "Response is stale"');
    assert.equal(res.headers['x-total-count'], '1');
    assert.equal(res.headers['set-cookie'], undefined);
    assert.equal(res.headers['x-internal'], undefined);
  });

  test('a main service that answers /health with 503 counts as down', async () => {
    const { createServer: createHttpServer } = await import('node:http');
    const server = createHttpServer((_req, res) => {
      res.writeHead(503, { 'content-type': 'application/json' }).end('{"status":"degraded"}');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    closers.push(() => new Promise<void>((resolve) => server.close(() => resolve())));
    const url = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
    const { app } = await auxOn(url, closers);
    const health = (await app.inject({ url: '/health' })).json();
    assert.equal(health.status, 'degraded');
    assert.match(health.main_service.detail, /503/);
  });
});

describe('auxiliary meta routes', () => {
  let app: App;
  const closers: Array<() => Promise<void>> = [];
  before(async () => {
    ({ app } = await auxOn(`http://127.0.0.1:${await deadPort()}`, closers));
  });
  after(async () => {
    for (const close of closers) await close();
  });

  test('GET / lists the endpoints and links the docs', async () => {
    const welcome = (await app.inject({ url: '/' })).json();
    assert.equal(welcome.docs, '/docs');
    assert.equal(welcome.openapi, '/openapi.json');
    const listed = welcome.endpoints.map((e: { method: string; path: string }) => `${e.method} ${e.path}`);
    assert.deepEqual(listed.sort(), ['GET /', 'GET /health', 'GET /proxy/external-posts', 'GET /proxy/products', 'GET /proxy/products/{id}', 'POST /process/text']);
  });

  test('/openapi.json documents the aux routes with both body types; /docs serves HTML', async () => {
    const spec = (await app.inject({ url: '/openapi.json' })).json();
    assert.match(spec.openapi, /^3\./);
    for (const path of ['/health', '/process/text', '/proxy/products', '/proxy/products/{id}', '/proxy/external-posts']) {
      assert.ok(spec.paths[path], `${path} documented`);
    }
    const body = spec.paths['/process/text'].post.requestBody.content;
    assert.ok(body['application/json'] && body['text/plain'], Object.keys(body).join());
    assert.ok(spec.paths['/process/text'].post.responses['413']);
    assert.ok(spec.paths['/proxy/products'].get.responses['504']);
    const docs = await app.inject({ url: '/docs' });
    const html = docs.statusCode === 302 ? await app.inject({ url: String(docs.headers.location) }) : docs;
    assert.equal(html.statusCode, 200);
    assert.match(String(html.headers['content-type']), /text\/html/);
  });

  test('unknown routes are 404 problems', async () => {
    assertProblem(await app.inject({ url: '/proxy/nothing' }), 404);
  });
});
