// The inputs the route fuzzer found breaking the contract, each a fixed case on every backend, so they stay fixed whatever the fuzzer draws.
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { after, before, describe, test } from 'node:test';
import { backends, warnIfNoPostgres } from '../helpers.js';
import { type Answer, checkAnswer, namedPaths, within } from './fuzz-contract.js';
import { KEYED, type Services, startServices } from './fuzz-services.js';

warnIfNoPostgres();

for (const backend of backends()) {
  describe(`inputs the route fuzzer found, on ${backend.name}`, () => {
    let s: Services;
    before(async () => {
      s = await startServices(backend);
    });
    after(async () => {
      await s?.close();
    });

    const send = async (method: 'GET' | 'DELETE', url: string): Promise<Answer> => {
      // A bound, so a stream opened by mistake fails the test instead of holding it.
      const res = await within(10_000, s.main.inject({ method, url, headers: KEYED }), () => url);
      checkAnswer({ service: 'main', method, url, headers: KEYED, allowed5xx: [] }, res);
      return res;
    };
    const get = (url: string) => send('GET', url);

    // Ajv takes "Infinity" and 1e400 for an integer, and nothing bounded these: PostgreSQL's bigint refused them (500).
    for (const [url, field] of [
      ['/alerts/Infinity', '/params/id'],
      ['/alerts/1e400', '/params/id'],
      ['/alerts/99999999999999999999', '/params/id'],
      ['/alerts?before=Infinity', '/querystring/before'],
      ['/alerts?before=9223372036854775808', '/querystring/before'],
      ['/events?after=99999999999999999999', '/querystring/after'],
      ['/events?before=Infinity', '/querystring/before'],
      ['/events/stream?after=1e400', '/querystring/after'],
      // 36 hex digits and dashes, but no UUID: PostgreSQL's uuid refused it (500).
      ['/jobs?schedule_id=-aA00AaAa0AAa-aAAAA-AA0Aa-aA00AA0A-A', '/querystring/schedule_id'],
    ] as const) {
      test(`GET ${url} is a 422 naming ${field}, not a 500`, async () => {
        const res = await get(url);
        assert.equal(res.statusCode, 422, res.body);
        assert.ok(namedPaths(JSON.parse(res.body)).includes(field), res.body);
      });
    }

    // PostgreSQL text cannot hold U+0000: a tag named with one was a failed query (500).
    for (const [method, url, field] of [
      ['GET', '/tags/%00', '/params/name'],
      ['DELETE', '/tags/a%00b', '/params/name'],
      ['DELETE', '/products/1/tags/%00', '/params/tag'],
      ['DELETE', '/articles/1/tags/%00', '/params/tag'],
    ] as const) {
      test(`${method} ${url} is a 422 naming ${field}, not a 500`, async () => {
        const res = await send(method, url);
        assert.equal(res.statusCode, 422, res.body);
        assert.ok(namedPaths(JSON.parse(res.body)).includes(field), res.body);
      });
    }

    // JSONB holds neither U+0000 nor an unpaired surrogate, and these fields went into JSONB columns unchecked (500).
    for (const [url, body, field] of [
      ['/jobs', { selectors: { item: 'a', title: 'b', price: '\ud800' } }, '/body/selectors/price'],
      ['/jobs', { selectors: { item: '\u0000', title: 'b', price: 'c' } }, '/body/selectors/item'],
      ['/jobs', { url: 'http://127.0.0.1:9/', wait_for: 'x\udfff' }, '/body/wait_for'],
      ['/jobs', { url: 'http://127.0.0.1:9/\ud800' }, '/body/url'],
      ['/jobs', { url: 'http://127.0.0.1:9/', tags: ['a\ud800'] }, '/body/tags/0'],
      ['/schedules', { every_minutes: 60, job: { url: 'http://127.0.0.1:9/', wait_for: '\ud800' } }, '/body/job/wait_for'],
      ['/site-rules', { host_pattern: 'shop.invalid', fields: { price: { selector: '\ud800' } } }, '/body/fields/price/selector'],
      ['/site-rules', { host_pattern: 'shop.invalid', fields: { sku: { json_path: "$['\u0000']" } } }, '/body/fields/sku/json_path'],
      ['/webhooks', { url: 'http://127.0.0.1:9/hook', events: ['*'], filter: { source: '\ud800' } }, '/body/filter/source'],
      [
        '/alert-rules',
        { name: 'r', scope: { type: 'tag', tag: '\ud800' }, condition: { type: 'price_changed' }, cooldown_minutes: 0, digest: 'immediate', channel_ids: [], enabled: true },
        '/body/scope/tag',
      ],
    ] as const) {
      test(`POST ${url} with ${JSON.stringify(body)} is a 422 naming ${field}, not a 500`, async () => {
        const payload = JSON.stringify(body);
        const res = await s.main.inject({ method: 'POST', url, headers: { ...KEYED, 'content-type': 'application/json' }, payload });
        checkAnswer({ service: 'main', method: 'POST', url, payload, allowed5xx: [] }, res);
        assert.equal(res.statusCode, 422, res.body);
        assert.ok(namedPaths(JSON.parse(res.body)).includes(field), res.body);
      });
    }

    // A refused target or channel URL is a 422 like any other: it names the field that holds it.
    for (const [url, body, field] of [
      ['/scrape', { url: 'a' }, '/body/url'],
      ['/jobs', { url: 'ftp://files.example/x' }, '/body/url'],
      ['/schedules', { every_minutes: 60, job: { url: 'not a url' } }, '/body/job/url'],
      ['/channels', { name: 'c', url: 'nonsense' }, '/body/url'],
    ] as const) {
      test(`POST ${url} with ${JSON.stringify(body)} is a 422 naming ${field}`, async () => {
        const payload = JSON.stringify(body);
        const res = await s.main.inject({ method: 'POST', url, headers: { ...KEYED, 'content-type': 'application/json' }, payload });
        checkAnswer({ service: 'main', method: 'POST', url, payload, allowed5xx: [] }, res);
        assert.equal(res.statusCode, 422, res.body);
        assert.ok(namedPaths(JSON.parse(res.body)).includes(field), res.body);
      });
    }

    test('the largest cursors still answer: GET /events?after=9007199254740991 and /alerts?before=9007199254740991 are 200', async () => {
      assert.equal((await get('/events?after=9007199254740991')).statusCode, 200);
      assert.equal((await get('/alerts?before=9007199254740991')).statusCode, 200);
      assert.equal((await get('/alerts/9007199254740991')).statusCode, 404);
    });

    // Node drops the writes of a HEAD answer, headers and all: the client waited for ever and the stream kept its place.
    test('HEAD /events/stream and HEAD /jobs/{id}/events answer at once, and give their place back', async () => {
      const job = (await get('/jobs?limit=1')).body;
      const jobId = (JSON.parse(job) as Array<{ id: string }>)[0]!.id;
      for (let i = 0; i < 12; i += 1) {
        for (const path of ['/events/stream', `/jobs/${jobId}/events`]) {
          const res = await fetch(s.mainBase + path, { method: 'HEAD', headers: KEYED, signal: AbortSignal.timeout(5_000) });
          assert.equal(res.status, 200, path);
          assert.match(String(res.headers.get('content-type')), /^text\/event-stream/);
        }
      }
      // More HEADs than one client may hold streams (10): every place was given back.
      const controller = new AbortController();
      const res = await fetch(`${s.mainBase}/events/stream`, { headers: KEYED, signal: controller.signal });
      assert.equal(res.status, 200);
      controller.abort();
    });

    // Node's parser answers a request line past 16 KiB before Fastify sees it: it was Fastify's own JSON, relayed as is by the proxy.
    test('a URL past 16 KiB is a 431 problem, from the main service and through the proxy', async () => {
      const long = `/products?q=${'a'.repeat(20_000)}`;
      const answer = await within(
        10_000,
        new Promise<Answer>((resolve, reject) => {
          const req = request(s.mainBase + long, { headers: KEYED }, (res) => {
            let body = '';
            res.on('data', (chunk: Buffer) => {
              body += chunk.toString();
            });
            res.on('end', () => resolve({ statusCode: res.statusCode ?? 0, headers: res.headers, body }));
            // A connection cut before the body's end is an error, not a wait for ever.
            res.on('error', reject);
            res.on('aborted', () => reject(new Error(`the answer was cut short after ${JSON.stringify(body)}`)));
          });
          req.on('error', reject);
          req.end();
        }),
        () => `GET ${long.slice(0, 40)}…`,
      );
      checkAnswer({ service: 'main', method: 'GET', url: long, allowed5xx: [] }, answer);
      assert.equal(answer.statusCode, 431, answer.body);
      const relayed = await s.aux.inject({ url: `/proxy${long}` });
      checkAnswer({ service: 'aux', method: 'GET', url: `/proxy${long}`, allowed5xx: [502, 503, 504] }, relayed);
      assert.equal(relayed.statusCode, 431, relayed.body);
    });
  });
}
