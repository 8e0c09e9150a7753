// The products API through app.inject(), on every relational backend, including a table of bad requests.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { InjectOptions } from 'fastify';
import type { Database } from '../../src/db/database.js';
import type { App } from '../../src/http/base-app.js';
import { LIST_BATCH_ROWS } from '../../src/products/product-routes.js';
import { assertProblem, backends, warnIfNoPostgres, openService, type OpenService } from '../helpers.js';

warnIfNoPostgres();

const json = { 'content-type': 'application/json' };

/** [name, request, expected status, field the 422 must name?] */
type BadRequest = [string, { method: string; url: string; payload?: unknown; headers?: Record<string, string> }, number, string?];

const bad: BadRequest[] = [
  ['malformed JSON', { method: 'POST', url: '/products', payload: '{"title": "x", ', headers: json }, 400],
  ['empty body with JSON type', { method: 'POST', url: '/products', payload: '', headers: json }, 400],
  ['text/plain body', { method: 'POST', url: '/products', payload: 'title=x', headers: { 'content-type': 'text/plain' } }, 415],
  ['form body', { method: 'POST', url: '/products', payload: 'title=x&price=1', headers: { 'content-type': 'application/x-www-form-urlencoded' } }, 415],
  ['array body', { method: 'POST', url: '/products', payload: [{ title: 'x', price: 1 }] }, 422, '/body'],
  ['empty object', { method: 'POST', url: '/products', payload: {} }, 422, '/body/title'],
  ['missing price', { method: 'POST', url: '/products', payload: { title: 'x' } }, 422, '/body/price'],
  ['price as string', { method: 'POST', url: '/products', payload: { title: 'x', price: '12.50' } }, 422, '/body/price'],
  ['negative price', { method: 'POST', url: '/products', payload: { title: 'x', price: -0.01 } }, 422, '/body/price'],
  ['NaN price', { method: 'POST', url: '/products', payload: '{"title":"x","price":NaN}', headers: json }, 400],
  ['huge price', { method: 'POST', url: '/products', payload: '{"title":"x","price":1e400}', headers: json }, 422, '/body/price'],
  ['price above bound', { method: 'POST', url: '/products', payload: { title: 'x', price: 1e13 } }, 422, '/body/price'],
  ['null price', { method: 'POST', url: '/products', payload: { title: 'x', price: null } }, 422, '/body/price'],
  ['title as number', { method: 'POST', url: '/products', payload: { title: 42, price: 1 } }, 422, '/body/title'],
  ['empty title', { method: 'POST', url: '/products', payload: { title: '', price: 1 } }, 422, '/body/title'],
  ['blank title', { method: 'POST', url: '/products', payload: { title: '   ', price: 1 } }, 422, '/body/title'],
  ['100 KB title', { method: 'POST', url: '/products', payload: { title: 'x'.repeat(100_000), price: 1 } }, 422, '/body/title'],
  ['unknown field', { method: 'POST', url: '/products', payload: { title: 'x', price: 1, colour: 'red' } }, 422, '/body/colour'],
  ['lowercase currency', { method: 'POST', url: '/products', payload: { title: 'x', price: 1, currency: 'gbp' } }, 422, '/body/currency'],
  ['source_url not a URL', { method: 'POST', url: '/products', payload: { title: 'x', price: 1, source_url: 'not a url' } }, 422, '/body/source_url'],
  ['source_url javascript:', { method: 'POST', url: '/products', payload: { title: 'x', price: 1, source_url: 'javascript:alert(1)' } }, 422, '/body/source_url'],
  ['body over the limit', { method: 'POST', url: '/products', payload: { title: 'x', price: 1, description: 'y'.repeat(1_100_000) } }, 413],
  ['id abc', { method: 'GET', url: '/products/abc' }, 422, '/params/id'],
  ['id -1', { method: 'GET', url: '/products/-1' }, 422, '/params/id'],
  ['id 0', { method: 'GET', url: '/products/0' }, 422, '/params/id'],
  ['id 1.5', { method: 'GET', url: '/products/1.5' }, 422, '/params/id'],
  ['id 20 digits', { method: 'GET', url: '/products/99999999999999999999' }, 422, '/params/id'],
  ['id 300 characters', { method: 'GET', url: `/products/${'9'.repeat(300)}` }, 422, '/params/id'],
  ['PUT id abc', { method: 'PUT', url: '/products/abc', payload: { title: 'x' } }, 422, '/params/id'],
  ['DELETE id -1', { method: 'DELETE', url: '/products/-1' }, 422, '/params/id'],
  ['PUT empty object', { method: 'PUT', url: '/products/1', payload: {} }, 422, '/body'],
  ['PATCH unknown field', { method: 'PATCH', url: '/products/1', payload: { id: 5 } }, 422, '/body/id'],
  ['PUT negative price', { method: 'PUT', url: '/products/1', payload: { price: -5 } }, 422, '/body/price'],
  ['PUT missing product', { method: 'PUT', url: '/products/2000000000', payload: { price: 5 } }, 404],
  ['DELETE missing product', { method: 'DELETE', url: '/products/2000000000' }, 404],
  ['GET missing product', { method: 'GET', url: '/products/2000000000' }, 404],
  ['limit 0', { method: 'GET', url: '/products?limit=0' }, 422, '/querystring/limit'],
  ['limit 1001', { method: 'GET', url: '/products?limit=1001' }, 422, '/querystring/limit'],
  ['offset -1', { method: 'GET', url: '/products?offset=-1' }, 422, '/querystring/offset'],
  ['unknown sort', { method: 'GET', url: '/products?sort=price;DROP' }, 422, '/querystring/sort'],
  ['min_price abc', { method: 'GET', url: '/products?min_price=abc' }, 422, '/querystring/min_price'],
  ['unknown query parameter', { method: 'GET', url: '/products?colour=red' }, 422, '/querystring/colour'],
  ['unknown route', { method: 'GET', url: '/nothing-here' }, 404],
  ['unknown method on products', { method: 'PATCH', url: '/products' }, 404],
];

for (const backend of backends()) {
  describe(`products API on ${backend.name}`, () => {
    let app: App;
    let db: Database;
    let opened: OpenService;
    before(async () => {
      app = (opened = await openService(backend)).app;
      db = opened.db;
    });
    after(() => opened.close());

    test('a 422 for a body of 80,000 unknown fields lists the first 20 and counts the rest, in a small answer', async () => {
      const payload: Record<string, unknown> = { title: 'x', price: 1 };
      for (let i = 0; i < 80_000; i++) payload[`f${i}`] = 1;
      const res = await app.inject({ method: 'POST', url: '/products', payload });
      const problem = assertProblem(res, 422);
      assert.equal(problem.errors.length, 20);
      assert.equal(problem.errors_total, 80_000);
      assert.deepEqual(problem.errors[0], { path: '/body/f0', message: 'is not an allowed field' });
      assert.match(problem.detail, /; and 79980 more$/);
      assert.ok(res.body.length < 5_000, `${res.body.length} bytes`);
    });

    test('POST /products creates a product: 201, Location, exact price', async () => {
      const res = await app.inject({ method: 'POST', url: '/products', payload: { title: 'Widget', price: 19.99, description: 'A widget' } });
      assert.equal(res.statusCode, 201, res.body);
      const p = res.json();
      assert.equal(res.headers.location, `/products/${p.id}`);
      assert.deepEqual(
        { title: p.title, price: p.price, description: p.description, currency: p.currency, source_url: p.source_url },
        { title: 'Widget', price: 19.99, description: 'A widget', currency: null, source_url: null },
      );
      assert.match(p.created_at, /^\d{4}-\d\d-\d\dT/);
      assert.match(res.body, /"price":19\.99[,}]/, 'the JSON text itself says 19.99');
      const got = await app.inject({ url: `/products/${p.id}` });
      assert.equal(got.statusCode, 200);
      assert.deepEqual(got.json(), { ...p, provenance: null, last_seen_at: null, gone_at: null, tags: [] }, 'a product made through the API has no provenance and no tags');
    });

    test('0.1 goes in and 0.1 comes out', async () => {
      const res = await app.inject({ method: 'POST', url: '/products', payload: { title: 'Cheap', price: 0.1 } });
      assert.match(res.body, /"price":0\.1[,}]/);
    });

    test('PUT and PATCH update only the given fields', async () => {
      const p = (await app.inject({ method: 'POST', url: '/products', payload: { title: 'Lamp', price: 10, description: 'bright' } })).json();
      const put = await app.inject({ method: 'PUT', url: `/products/${p.id}`, payload: { price: 12.5 } });
      assert.equal(put.statusCode, 200);
      assert.equal(put.json().price, 12.5);
      assert.equal(put.json().description, 'bright');
      const patch = await app.inject({ method: 'PATCH', url: `/products/${p.id}`, payload: { title: 'Lamp II', currency: 'EUR' } });
      assert.equal(patch.json().title, 'Lamp II');
      assert.equal(patch.json().currency, 'EUR');
      assert.equal(patch.json().price, 12.5);
      const full = await app.inject({
        method: 'PUT',
        url: `/products/${p.id}`,
        payload: { title: 'Lamp III', price: 1, description: null, currency: null, source_url: 'https://shop.example/lamp' },
      });
      assert.deepEqual((({ title, price, description, currency, source_url }) => ({ title, price, description, currency, source_url }))(full.json()), {
        title: 'Lamp III',
        price: 1,
        description: null,
        currency: null,
        source_url: 'https://shop.example/lamp',
      });
    });

    test('DELETE answers {id, deleted: true}, then 404', async () => {
      const p = (await app.inject({ method: 'POST', url: '/products', payload: { title: 'Gone', price: 1 } })).json();
      const del = await app.inject({ method: 'DELETE', url: `/products/${p.id}` });
      assert.equal(del.statusCode, 200);
      assert.deepEqual(del.json(), { id: p.id, deleted: true });
      assertProblem(await app.inject({ method: 'DELETE', url: `/products/${p.id}` }), 404);
      assertProblem(await app.inject({ url: `/products/${p.id}` }), 404);
    });

    test('GET /products pages with X-Total-Count and Link', async () => {
      for (let i = 0; i < 5; i++) {
        await app.inject({ method: 'POST', url: '/products', payload: { title: `Paged ${i}`, price: i, description: 'paging-set' } });
      }
      const all = await app.inject({ url: '/products?q=paging-set' });
      assert.equal(all.headers['x-total-count'], '5');
      assert.equal(all.headers.link, undefined, 'no Link when not paged');
      assert.equal(all.json().length, 5);
      const first = await app.inject({ url: '/products?q=paging-set&limit=2&sort=-price' });
      assert.deepEqual(
        first.json().map((p: { title: string }) => p.title),
        ['Paged 4', 'Paged 3'],
      );
      assert.equal(first.headers['x-total-count'], '5');
      assert.equal(first.headers.link, '</products?q=paging-set&limit=2&sort=-price&offset=2>; rel="next"');
      const middle = await app.inject({ url: '/products?q=paging-set&limit=2&offset=2&sort=-price' });
      assert.equal(middle.headers.link, '</products?q=paging-set&limit=2&offset=4&sort=-price>; rel="next", </products?q=paging-set&limit=2&offset=0&sort=-price>; rel="prev"');
      const last = await app.inject({ url: '/products?q=paging-set&limit=2&offset=4&sort=-price' });
      assert.deepEqual(
        last.json().map((p: { title: string }) => p.title),
        ['Paged 0'],
      );
      assert.doesNotMatch(String(last.headers.link), /next/);
      const past = await app.inject({ url: '/products?q=paging-set&limit=2&offset=10' });
      assert.deepEqual([past.json(), past.headers['x-total-count']], [[], '5'], 'past the end the total is still counted');
      // A page's JSON is built by the database; the unpaged list goes through the schema's serializer.
      const serialized = await app.inject({ url: '/products?sort=-price' });
      const paged = await app.inject({ url: '/products?sort=-price&limit=1000' });
      assert.equal(paged.headers['content-type'], 'application/json; charset=utf-8');
      assert.deepEqual(paged.json(), serialized.json(), 'the same products, field for field');
      assert.equal(paged.payload, serialized.payload, 'and the same text');
      const offsetOnly = await app.inject({ url: '/products?q=paging-set&offset=3' });
      assert.deepEqual([offsetOnly.json().length, offsetOnly.headers['x-total-count']], [2, '5']);
      const cheap = await app.inject({ url: '/products?q=paging-set&min_price=1&max_price=2' });
      assert.deepEqual(
        cheap.json().map((p: { price: number }) => p.price),
        [1, 2],
      );

      // What a client sends is re-encoded: it cannot close the <...> of a link or add a rel of its own.
      const hostile = '>; rel="evil", <https://evil.example/';
      for (let i = 0; i < 2; i++) {
        await app.inject({ method: 'POST', url: '/products', payload: { title: `Hostile ${hostile} ${i}`, price: 1 } });
      }
      const raw = await app.inject({ url: `/products?limit=1&q=${hostile.replace(/ /g, '%20')}` });
      assert.equal(raw.headers['x-total-count'], '2');
      assert.equal(raw.headers.link, '</products?limit=1&q=%3E%3B+rel%3D%22evil%22%2C+%3Chttps%3A%2F%2Fevil.example%2F&offset=1>; rel="next"');
    });

    test('the bad-request table: each gets its 4xx and a problem body, and the service still answers', async () => {
      const existing = (await app.inject({ method: 'POST', url: '/products', payload: { title: 'Target', price: 3 } })).json();
      for (const [name, request, status, field] of bad) {
        const url = request.url.replace('/products/1', `/products/${existing.id}`);
        const res = await app.inject({ ...request, url } as InjectOptions);
        const body = assertProblem(res, status);
        if (field) {
          assert.ok(
            body.errors?.some((e: { path: string }) => e.path === field),
            `${name}: expected an error at ${field}, got ${JSON.stringify(body.errors)}`,
          );
        }
      }
      assert.ok(bad.length >= 25);
      const still = await app.inject({ url: `/products/${existing.id}` });
      assert.equal(still.statusCode, 200);
      assert.equal(still.json().title, 'Target', 'nothing was changed by the bad requests');
    });

    test('a 422 names every bad field at once', async () => {
      const res = await app.inject({ method: 'POST', url: '/products', payload: { title: '', price: -1, currency: 'x', extra: true } });
      const body = assertProblem(res, 422);
      const paths = [...new Set(body.errors.map((e: { path: string }) => e.path))].sort();
      assert.deepEqual(paths, ['/body/currency', '/body/extra', '/body/price', '/body/title']);
    });

    test('GET /products?q= ranks the best matches first unless a sort is asked for, paged and unpaged alike', async () => {
      const ids: number[] = [];
      for (const title of ['Wall planter', 'Planter', 'Planters, set of three', 'Pot', 'Ceramic planter box']) {
        const description = title === 'Pot' ? 'fits any planter' : null;
        ids.push((await app.inject({ method: 'POST', url: '/products', payload: { title, price: 1, description } })).json().id);
      }
      const [wall, planter, planters, pot, box] = ids;
      const titles = async (url: string) => (await app.inject({ url })).json().map((p: { id: number }) => p.id);
      assert.deepEqual(await titles('/products?q=PLANTER'), [planter, planters, wall, box, pot]);
      assert.deepEqual(await titles('/products?q=planter&limit=2&offset=1'), [planters, wall]);
      assert.deepEqual(await titles('/products?q=planter&sort=id'), ids);
      assert.equal((await app.inject({ url: '/products?q=planter&limit=1' })).headers['x-total-count'], '5');
    });

    test('SQL-injection strings are stored verbatim', async () => {
      const title = "x'; DELETE FROM products; --";
      const res = await app.inject({ method: 'POST', url: '/products', payload: { title, price: 1, description: '1 OR 1=1' } });
      assert.equal(res.statusCode, 201);
      assert.equal(res.json().title, title);
      const search = await app.inject({ url: `/products?q=${encodeURIComponent("'; DELETE")}` });
      assert.equal(search.json().length, 1);
      assert.ok(Number(search.headers['x-total-count']) === 1);
    });

    test('an unpaged list longer than a batch is streamed over HTTP: chunked, complete, in order', async () => {
      await db.query(
        `INSERT INTO products (title, price, description)
         SELECT 'Streamed ' || n, (n % 7) + 0.25, 'stream-set' FROM generate_series(1, $1::int) AS n`,
        [LIST_BATCH_ROWS * 2 + 345],
      );
      const address = await app.listen({ port: 0, host: '127.0.0.1' });
      const rows = (await db.query<{ rows: number }>('SELECT count(*)::int AS rows FROM products'))[0]!.rows;
      const res = await fetch(`${address}/products`);
      assert.equal(res.status, 200);
      assert.equal(res.headers.get('transfer-encoding'), 'chunked');
      assert.equal(res.headers.get('content-length'), null);
      assert.match(res.headers.get('content-type') ?? '', /^application\/json/);
      assert.equal(res.headers.get('x-total-count'), String(rows));
      const all = (await res.json()) as Array<Record<string, unknown>>;
      assert.equal(all.length, rows);
      assert.ok(
        all.every((p, i) => i === 0 || (p.id as number) > (all[i - 1]!.id as number)),
        'ids ascending, none repeated',
      );
      assert.deepEqual(Object.keys(all[0]!).sort(), [
        'availability',
        'brand',
        'created_at',
        'currency',
        'description',
        'gtin',
        'id',
        'image_url',
        'list_price',
        'price',
        'sku',
        'source_url',
        'title',
        'updated_at',
      ]);

      // Another order, with a filter and an offset: the same rows as the pages of 1000 give.
      const streamed = (await (await fetch(`${address}/products?q=stream-set&sort=-price&offset=7`)).json()) as Array<{ id: number }>;
      const paged: Array<{ id: number }> = [];
      for (let offset = 7; ; offset += 1000) {
        const page = (await (await fetch(`${address}/products?q=stream-set&sort=-price&offset=${offset}&limit=1000`)).json()) as Array<{ id: number }>;
        paged.push(...page);
        if (page.length < 1000) break;
      }
      assert.equal(streamed.length, LIST_BATCH_ROWS * 2 + 345 - 7);
      assert.deepEqual(
        streamed.map((p) => p.id),
        paged.map((p) => p.id),
      );

      // A page of more than 100 goes out part by part (chunked), a small one whole with its length: the same JSON.
      const large = await fetch(`${address}/products?limit=1000`);
      assert.equal(large.headers.get('transfer-encoding'), 'chunked');
      assert.equal(large.headers.get('x-total-count'), String(rows));
      const largePage = (await large.json()) as Array<Record<string, unknown>>;
      assert.equal(largePage.length, 1000);
      const small = await fetch(`${address}/products?limit=3`);
      const smallText = await small.text();
      assert.equal(small.headers.get('content-length'), String(Buffer.byteLength(smallText)));
      assert.deepEqual(JSON.parse(smallText), largePage.slice(0, 3));
      assert.deepEqual(largePage.slice(0, 1000), all.slice(0, 1000));
    });

    test('an X-Request-Id is echoed; a hostile one is replaced', async () => {
      const res = await app.inject({ url: '/products?limit=1', headers: { 'x-request-id': 'abc-123' } });
      assert.equal(res.headers['x-request-id'], 'abc-123');
      const hostile = await app.inject({ url: '/products?limit=1', headers: { 'x-request-id': 'a\nb c' } });
      assert.notEqual(hostile.headers['x-request-id'], 'a\nb c');
      assert.match(String(hostile.headers['x-request-id']), /^[0-9a-f-]{36}$/);
    });
  });
}
