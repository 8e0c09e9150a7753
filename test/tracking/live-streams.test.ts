// Live event streams under load: one read per change for many listeners, bounded per client and in all, and a client that stops reading costs a bounded amount and is let go.
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import type { Database } from '../../src/db/queryable.js';
import { createLiveEvents } from '../../src/tracking/live-events.js';
import { createLiveFeed } from '../../src/tracking/live-feed.js';
import { createTracker, type Tracker } from '../../src/tracking/tracking-store.js';
import { assertProblem, backends, mainServiceOn, warnIfNoPostgres } from '../helpers.js';
import { until } from '../wait.js';

warnIfNoPostgres();

/** Events written straight into the feed, `count` at a time in one statement. */
async function writeEvents(db: Database, count: number, type = 'price.changed'): Promise<void> {
  await db.query(
    `INSERT INTO events (type, product_id, source, run_id, data)
     SELECT $1, NULL, 'https://shop.example/', NULL, jsonb_build_object('n', g, 'padding', repeat('x', 200)) FROM generate_series(1, $2) AS g`,
    [type, count],
  );
}

for (const backend of backends()) {
  describe(`live streams on ${backend.name}`, () => {
    let db: Database;
    const closers: Array<() => Promise<void>> = [];
    before(async () => {
      db = await backend.open();
      closers.push(() => db.close());
    });
    after(async () => {
      for (const close of closers) await close();
    });

    test('a hundred listeners of the same events share each read: one read per change and filter, not per listener', async () => {
      let reads = 0;
      const real = createTracker(db, { goneAfterRuns: 3 });
      const tracker: Pick<Tracker, 'events' | 'lastEventId'> = {
        events: (query) => {
          reads++;
          return real.events(query);
        },
        lastEventId: () => real.lastEventId(),
      };
      const live = createLiveEvents();
      const feed = createLiveFeed(tracker, live, { pollMs: 60_000 });
      const stop = new AbortController();
      const cursor = await real.lastEventId();
      const received: number[] = [];
      const follow = async (filter: { type?: string[] }) => {
        let n = 0;
        for await (const _event of feed.follow(filter, cursor, stop.signal)) {
          n++;
          if (n === 5) break;
        }
        received.push(n);
      };
      const followers = [...Array.from({ length: 100 }, () => follow({})), ...Array.from({ length: 50 }, () => follow({ type: ['price.changed'] }))];
      await until('the listeners to have joined', () => feed.groups() === 2);
      const readsBefore = reads;
      for (let i = 0; i < 5; i++) {
        await writeEvents(db, 1);
        live.published([{}]);
      }
      await Promise.all(followers);
      stop.abort();
      assert.deepEqual([...new Set(received)], [5], 'every listener got its five events');
      // Two groups (two filters); each change is one read per group, however many listen.
      assert.ok(reads - readsBefore <= 2 * 5 + 2, `${reads - readsBefore} reads for 5 changes and 150 listeners`);
    });

    test('a client that connects with an old cursor and never reads is let go; its memory stays bounded; others are answered meanwhile', { timeout: 120_000 }, async () => {
      const { app, context } = await mainServiceOn(db, { after: (fn) => closers.unshift(fn) }, { STREAM_STALL_MS: '1000' });
      await app.listen({ port: 0, host: '127.0.0.1' });
      const { port } = app.server.address() as AddressInfo;
      const cursor = await context.tracking.tracker.lastEventId();
      await writeEvents(db, 20_000); // about 6 MB of backlog
      const socket = connect(port, '127.0.0.1');
      socket.on('error', () => undefined);
      await new Promise((resolve) => socket.once('connect', resolve));
      socket.pause(); // never reads
      socket.write(`GET /events/stream HTTP/1.1\r\nHost: 127.0.0.1\r\nLast-Event-ID: ${cursor}\r\n\r\n`);
      await until('the stream to be followed', () => context.tracking.feed.groups() === 1);
      // Meanwhile the service answers.
      assert.equal((await fetch(`http://127.0.0.1:${port}/health`)).status, 200);
      // It stopped reading: once its socket is full and it has read nothing for a second, the stream ends.
      await until('the stalled stream to be let go', () => context.tracking.feed.groups() === 0);
      socket.destroy();
    });

    test('streams are bounded per client and in all, and need the API key when one is set', async () => {
      const { app } = await mainServiceOn(db, { after: (fn) => closers.unshift(fn) }, { STREAMS_PER_CLIENT: '2', STREAMS_MAX: '3', TRUST_PROXY: 'true' });
      await app.listen({ port: 0, host: '127.0.0.1' });
      const base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
      const open: AbortController[] = [];
      /** A stream opened by `client` (as the trusted proxy in front names it). */
      const stream = async (client: string) => {
        const controller = new AbortController();
        const res = await fetch(`${base}/events/stream`, { headers: { 'x-forwarded-for': client }, signal: controller.signal });
        if (res.status === 200) open.push(controller);
        return res;
      };
      try {
        assert.equal((await stream('10.0.0.1')).status, 200);
        assert.equal((await stream('10.0.0.1')).status, 200);
        const third = await stream('10.0.0.1');
        assert.equal(third.status, 429);
        assert.match(((await third.json()) as { detail: string }).detail, /already has 2 live streams open/);
        assert.equal((await stream('10.0.0.2')).status, 200, 'another client has room of its own');
        const full = await stream('10.0.0.3');
        assert.equal(full.status, 503, 'until the total is reached');
        assert.ok(full.headers.get('retry-after'));
        await full.body?.cancel();
        // A stream that ends gives its place back.
        open.shift()!.abort();
        await until('the place to come back', async () => {
          const res = await stream('10.0.0.4');
          if (res.status !== 200) await res.body?.cancel();
          return res.status === 200;
        });
      } finally {
        for (const controller of open) controller.abort();
      }
      const keyed = await mainServiceOn(db, { after: (fn) => closers.unshift(fn) }, { API_KEY: 'k3y-0123456789' });
      assertProblem(await keyed.app.inject({ url: '/events/stream' }), 401);
      assert.equal((await keyed.app.inject({ url: '/events?limit=1' })).statusCode, 200, 'the paged feed stays a read like the products');
    });
  });
}
