// AutoThrottle: a crawled host is paced by how it answers, through the database every worker shares; off, it costs nothing.
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import type { Database } from '../../src/db/queryable.js';
import type { App } from '../../src/http/base-app.js';
import { AUTOTHROTTLE_START_DELAY_MS, createHostPace } from '../../src/jobs/host-politeness.js';
import { backends, warnIfNoPostgres, openService, type OpenService } from '../helpers.js';
import { until } from '../wait.js';

warnIfNoPostgres();

const PAGES = 12;
const LATENCY_MS = 50;
const RETRY_AFTER_S = 2;

interface Host {
  url: string;
  host: string;
  /** Every request, as it arrived: path, time, and the status it was answered with. */
  requests: Array<{ path: string; at: number; status: number }>;
  /** The most requests answered at one moment. */
  maxInFlight: () => number;
  close(): Promise<void>;
}

/** A small site: a listing linking PAGES pages, each answered after LATENCY_MS; `limited` answers 429 with Retry-After the first time. */
async function startHost(limited: string | null): Promise<Host> {
  const requests: Host['requests'] = [];
  let inFlight = 0;
  let most = 0;
  const server: Server = createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    inFlight += 1;
    most = Math.max(most, inFlight);
    const at = Date.now();
    setTimeout(() => {
      inFlight -= 1;
      const first = !requests.some((r) => r.path === path);
      let status = 200;
      let body = '';
      const headers: Record<string, string> = { 'content-type': 'text/html; charset=utf-8' };
      if (path === limited && first) {
        status = 429;
        headers['retry-after'] = String(RETRY_AFTER_S);
      } else if (path === '/') {
        body = Array.from({ length: PAGES }, (_, i) => `<a href="/p/${i + 1}">Page ${i + 1}</a>`).join('');
      } else if (/^\/p\/\d+$/.test(path)) {
        body = `<article><h1>Page ${path}</h1><p>${'Text of the page. '.repeat(20)}</p></article>`;
      } else {
        status = 404;
      }
      requests.push({ path, at, status });
      res.writeHead(status, headers);
      res.end(`<!doctype html><html><head><title>${path}</title></head><body>${body}</body></html>`);
    }, LATENCY_MS);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/`,
    host: `127.0.0.1:${port}`,
    requests,
    maxInFlight: () => most,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

for (const backend of backends()) {
  describe(`a host's pace on ${backend.name}`, () => {
    let db: Database;
    before(async () => {
      db = await backend.open();
    });
    after(() => db.close());
    /** robots.txt as the pace reads it: a Crawl-delay, or none. */
    const robots = (crawlDelaySeconds: number | null) => ({ robots: async () => ({ crawlDelaySeconds, sitemaps: [] }) });
    const row = async (host: string) =>
      (
        await db.query<{ delay_ms: number | null; ahead_ms: number }>(
          'SELECT delay_ms, extract(epoch FROM next_at - now())::float8 * 1000 AS ahead_ms FROM host_politeness WHERE host = $1',
          [host],
        )
      )[0];
    const settings = { targetConcurrency: 2, maxDelayMs: 10_000 };
    const ok = (latencyMs: number) => ({ latencyMs, status: 200, retryAfterMs: undefined });

    test('off and without a Crawl-delay: every slot is free at once and nothing is read or written', async () => {
      const pace = createHostPace(db, robots(null));
      assert.equal(await pace.slot('http://free.example/a', false), 0);
      await pace.answered('http://free.example/a', false, { latencyMs: 10, status: 429, retryAfterMs: 5000 });
      assert.equal(await row('free.example'), undefined);
    });

    test('a new host starts at the start pace; answers move it halfway toward latency / target, never under the Crawl-delay', async () => {
      const pace = createHostPace(db, robots(null), settings);
      const started = performance.now();
      assert.equal(await pace.slot('http://fast.example/1', false), 0);
      const second = await pace.slot('http://fast.example/2', false);
      // The start pace after the first slot, less what passed between the two (a loaded machine took over 100 ms).
      const between = performance.now() - started;
      assert.ok(second >= AUTOTHROTTLE_START_DELAY_MS - between - 1 && second <= AUTOTHROTTLE_START_DELAY_MS, `second slot ${second} ms away, ${between} ms after the first`);
      await pace.answered('http://fast.example/1', false, ok(200)); // toward 200 / 2 = 100
      assert.equal((await row('fast.example'))!.delay_ms, (AUTOTHROTTLE_START_DELAY_MS + 100) / 2);
      for (let i = 0; i < 20; i++) await pace.answered('http://fast.example/1', false, ok(200));
      assert.ok(Math.abs((await row('fast.example'))!.delay_ms! - 100) < 1);
      const floored = createHostPace(db, robots(3), settings);
      await floored.answered('http://fast.example/1', false, ok(200));
      assert.equal((await row('fast.example'))!.delay_ms, 3000, "robots.txt's Crawl-delay is a floor");
    });

    test('an error answer never speeds a host up; a 429 or 503 doubles its pace, at least to Retry-After, holds the host until then, and is capped', async () => {
      const pace = createHostPace(db, robots(null), settings);
      await pace.slot('http://busy.example/1', false);
      await pace.answered('http://busy.example/1', false, { latencyMs: 10, status: 500, retryAfterMs: undefined });
      assert.equal((await row('busy.example'))!.delay_ms, AUTOTHROTTLE_START_DELAY_MS);
      const limited = performance.now();
      await pace.answered('http://busy.example/1', false, { latencyMs: 10, status: 429, retryAfterMs: 4000 });
      const held = (await row('busy.example'))!;
      assert.equal(held.delay_ms, 4000);
      // Held until Retry-After from the answer, less what has passed since (a loaded machine is slow).
      assert.ok(held.ahead_ms >= 4000 - (performance.now() - limited) - 1, `the host is held ${held.ahead_ms} ms ahead`);
      const waitMs = await pace.slot('http://busy.example/2', false);
      assert.ok(waitMs >= 4000 - (performance.now() - limited) - 1, `the next slot waits for Retry-After: ${waitMs} ms`);
      await pace.answered('http://busy.example/1', false, { latencyMs: 10, status: 503, retryAfterMs: undefined });
      assert.equal((await row('busy.example'))!.delay_ms, 8000);
      await pace.answered('http://busy.example/1', false, { latencyMs: 10, status: 503, retryAfterMs: 3_600_000 });
      assert.equal((await row('busy.example'))!.delay_ms, settings.maxDelayMs);
    });

    test('off again, a pace AutoThrottle left is not read: only a Crawl-delay paces the host', async () => {
      const on = createHostPace(db, robots(null), settings);
      await on.slot('http://left.example/1', false);
      await on.answered('http://left.example/1', false, { latencyMs: 10, status: 429, retryAfterMs: 9000 });
      const off = createHostPace(db, robots(1));
      await db.query(`UPDATE host_politeness SET next_at = now() WHERE host = 'left.example'`);
      const started = performance.now();
      assert.equal(await off.slot('http://left.example/2', false), 0);
      const next = await off.slot('http://left.example/3', false);
      const between = performance.now() - started;
      assert.ok(next >= 1000 - between - 1 && next <= 1000, `paced by the 1 s Crawl-delay, not the 9 s left behind: ${next} ms, ${between} ms after`);
    });
  });

  for (const autothrottle of [true, false]) {
    describe(`crawl with AutoThrottle ${autothrottle ? 'on' : 'off'} on ${backend.name}`, () => {
      let app: App;
      let db: Database;
      let opened: OpenService;

      before(async () => {
        const env = {
          SCRAPE_ALLOW_PRIVATE_NETWORKS: 'true',
          WORKER_CONCURRENCY: '4',
          ...(autothrottle ? { CRAWL_AUTOTHROTTLE: 'true', CRAWL_AUTOTHROTTLE_TARGET_CONCURRENCY: '1' } : {}),
        };
        const service = (opened = await openService(backend, env, { work: true, queueTiming: { retryDelaySeconds: 1 } }));
        db = opened.db;
        app = service.app;
      });
      after(() => opened.close());

      const crawl = async (site: Host) => {
        const res = await app.inject({ method: 'POST', url: '/jobs', payload: { url: site.url, crawl: { max_pages: 50, sitemap: false } } });
        assert.equal(res.statusCode, 202, res.body);
        const id = res.json().id as string;
        return until(
          'the crawl to end',
          async () => {
            const job = (await app.inject({ url: `/jobs/${id}` })).json();
            return ['succeeded', 'failed', 'cancelled'].includes(job.status) ? job : false;
          },
          { withinMs: 120_000, everyMs: 100 },
        );
      };
      const paceOf = async (host: string) => (await db.query<{ delay_ms: number | null }>('SELECT delay_ms FROM host_politeness WHERE host = $1', [host]))[0]?.delay_ms;

      if (autothrottle) {
        test('a 429 with Retry-After: the page is asked again no sooner than the host said; about one request in flight on average; fast answers speed the host up again', async () => {
          const site = await startHost('/p/2');
          opened.own(site);
          const job = await crawl(site);
          const log = JSON.stringify(site.requests);
          assert.equal(job.status, 'succeeded', JSON.stringify(job));
          assert.equal(job.progress.pages_done, PAGES + 1, JSON.stringify(job.progress));
          assert.equal(job.progress.pages_failed, 0, 'the page answered 429 is fetched again, not failed');
          const limited = site.requests.filter((r) => r.path === '/p/2');
          assert.deepEqual(
            limited.map((r) => r.status),
            [429, 200],
          );
          // Asked again no sooner than the host said (the 429 was answered LATENCY_MS after it arrived).
          assert.ok(limited[1]!.at - (limited[0]!.at + LATENCY_MS) >= RETRY_AFTER_S * 1000 - 50, `asked again ${limited[1]!.at - limited[0]!.at} ms after: ${log}`);
          // Four fetch slots, one request in flight aimed at: on average the host had at most about one.
          const span = site.requests.at(-1)!.at + LATENCY_MS - site.requests[0]!.at;
          const average = (site.requests.length * LATENCY_MS) / span;
          assert.ok(average <= 1.1, `${average} requests in flight on average: ${log}`);
          const pace = await paceOf(site.host);
          assert.ok(pace !== undefined && pace !== null && pace < RETRY_AFTER_S * 1000, `the pace after fast answers: ${pace} ms`);
        });
      } else {
        test('off, and without a Crawl-delay, a crawl reads and writes no pace: no host row, every page fetched', async () => {
          const site = await startHost('/p/2');
          opened.own(site);
          const job = await crawl(site);
          assert.equal(job.status, 'succeeded', JSON.stringify(job));
          assert.equal(job.progress.pages_done, PAGES + 1);
          assert.equal(await paceOf(site.host), undefined);
          // A 429 is worth asking again (the queue's retry), not a page given up on.
          assert.deepEqual(
            site.requests.filter((r) => r.path === '/p/2').map((r) => r.status),
            [429, 200],
          );
        });
      }
    });
  }
}
