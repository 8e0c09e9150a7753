// Webhook fan-out bounded: subscriptions capped in all and per target URL (requests one at a time and many at once), and one delivery per target and event.
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import pg from 'pg';
import type { Database, PostgresDatabase } from '../../src/db/database.js';
import type { App } from '../../src/http/base-app.js';
import { assertProblem, backends, mainServiceOn, warnIfNoPostgres } from '../helpers.js';
import { until } from '../wait.js';

warnIfNoPostgres();

/** A receiver that answers 204 and keeps each request's `webhook-id` and path. */
async function startReceiver() {
  const received: Array<{ path: string; id: string }> = [];
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      received.push({ path: req.url ?? '', id: String(req.headers['webhook-id']) });
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    received,
    base,
    close: () => {
      server.closeAllConnections();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

for (const backend of backends()) {
  describe(`webhook limits on ${backend.name}`, () => {
    let app: App;
    let db: Database;
    let queueSchema: string;
    let receiver: Awaited<ReturnType<typeof startReceiver>>;
    const closers: Array<() => Promise<void>> = [];

    before(async () => {
      receiver = await startReceiver();
      db = await backend.open();
      closers.push(
        () => db.close(),
        () => receiver.close(),
      );
      const env = { SCRAPE_ALLOW_PRIVATE_NETWORKS: 'true', WEBHOOKS_PER_URL: '3', WEBHOOKS_MAX: '5', WEBHOOK_RETRY_DELAYS_MS: '200' };
      const service = await mainServiceOn(db, { after: (fn) => closers.unshift(fn) }, env, { work: true });
      app = service.app;
      queueSchema = service.config.jobs.queueSchema;
    });
    after(async () => {
      for (const close of closers) await close();
    });

    const subscribe = (url: string) => app.inject({ method: 'POST', url: '/webhooks', payload: { url, events: ['product.created', 'price.changed'] } });

    test('subscriptions beyond WEBHOOKS_PER_URL or WEBHOOKS_MAX are 422 limit-reached and store nothing; PATCH to a full URL too', async () => {
      const one = `${receiver.base}/one`;
      for (let i = 0; i < 3; i++) assert.equal((await subscribe(one)).statusCode, 201);
      const perUrl = assertProblem(await subscribe(one), 422);
      assert.equal(perUrl.type, 'urn:data-aggregator:problem:limit-reached');
      assert.match(perUrl.detail, /WEBHOOKS_PER_URL allows \(3\)/);
      const other = (await subscribe(`${receiver.base}/two`)).json();
      assert.equal((await subscribe(`${receiver.base}/three`)).statusCode, 201);
      const total = assertProblem(await subscribe(`${receiver.base}/four`), 422);
      assert.match(total.detail, /WEBHOOKS_MAX allows \(5\)/);
      assertProblem(await app.inject({ method: 'PATCH', url: `/webhooks/${other.id}`, payload: { url: one } }), 422);
      assert.equal((await app.inject({ url: '/webhooks?limit=100' })).json().length, 5);
      // A PATCH that keeps its own URL is no new subscription.
      assert.equal((await app.inject({ method: 'PATCH', url: `/webhooks/${other.id}`, payload: { url: `${receiver.base}/two` } })).statusCode, 200);
    });

    test('three subscriptions to one URL: one POST /products is delivered there once', async () => {
      const res = await app.inject({ method: 'POST', url: '/products', payload: { title: 'Lamp', price: 10, currency: 'EUR', source_url: 'https://shop.example/lamp' } });
      assert.equal(res.statusCode, 201, res.body);
      // Every delivery queued for the event is over before counting what arrived.
      await until('the deliveries', async () => {
        const [row] = await db.query<{ n: number }>(
          `SELECT count(*)::int AS n FROM ${queueSchema}.job WHERE name = 'webhook-delivery' AND state IN ('created', 'retry', 'active')`,
        );
        return row!.n === 0 && receiver.received.length >= 3 ? true : undefined;
      });
      const byPath = (path: string) => receiver.received.filter((r) => r.path === path).length;
      assert.deepEqual([byPath('/one'), byPath('/two'), byPath('/three')], [1, 1, 1], JSON.stringify(receiver.received));
    });
  });
}

/**
 * Opens every connection the pool may hold, at once: transactions wait for each other until the pool
 * is full (a new connection would wait behind the table lock the test takes next).
 */
async function fillPool(db: PostgresDatabase, asking: number): Promise<void> {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  let inside = 0;
  const all = Promise.all(
    Array.from({ length: asking }, () =>
      db.transaction(async (tx) => {
        await tx.query('SELECT 1');
        inside += 1;
        await opened;
      }),
    ),
  );
  await until('the pool full', () => {
    const stats = db.poolStats();
    return inside === stats.total && (stats.waiting > 0 || inside === asking);
  });
  open();
  await all;
}

for (const backend of backends()) {
  describe(`webhook limits under concurrent POSTs on ${backend.name}`, () => {
    let app: App;
    let db: Database;
    const closers: Array<() => Promise<void>> = [];

    before(async () => {
      db = await backend.open();
      closers.push(() => db.close());
      const env = { SCRAPE_ALLOW_PRIVATE_NETWORKS: 'true', WEBHOOKS_PER_URL: '3', WEBHOOKS_MAX: '6' };
      ({ app } = await mainServiceOn(db, { after: (fn) => closers.unshift(fn) }, env));
    });
    after(async () => {
      for (const close of closers) await close();
    });

    /**
     * POSTs a subscription to each URL, all at once. On PostgreSQL the requests are first held at the
     * webhooks table (another session locks it) until each has a connection waiting there or is
     * queued for one, then let go together: every connection of the pool counts at the same moment,
     * whatever the machine's speed. PGlite runs one transaction at a time; there they only arrive together.
     */
    const atOnce = async (urls: string[]) => {
      const post = () => Promise.all(urls.map((url) => app.inject({ method: 'POST', url: '/webhooks', payload: { url, events: ['price.changed'] } })));
      if (db.backend === 'pglite') return post();
      const service = db as PostgresDatabase;
      await fillPool(service, urls.length);
      const holder = new pg.Client({ connectionString: service.connectionString });
      await holder.connect();
      try {
        await holder.query('BEGIN');
        await holder.query('LOCK TABLE webhooks IN ACCESS EXCLUSIVE MODE');
        const answers = post();
        // Looked at often: the requests queued for a connection give up after the pool's connect timeout.
        await until(
          'every request waiting at the locked table or for a connection',
          async () => {
            const [row] = (await holder.query(`SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`)).rows;
            const stats = service.poolStats();
            return row.n >= 2 && row.n === stats.total && row.n + stats.waiting === urls.length;
          },
          { everyMs: 10 },
        );
        await holder.query('COMMIT');
        return await answers;
      } finally {
        await holder.end();
      }
    };

    const outcome = (answers: Array<{ statusCode: number; body: string }>, setting: string) => {
      const created = answers.filter((a) => a.statusCode === 201).length;
      for (const refused of answers.filter((a) => a.statusCode !== 201)) {
        const problem = assertProblem(refused as Parameters<typeof assertProblem>[0], 422);
        assert.equal(problem.type, 'urn:data-aggregator:problem:limit-reached');
        assert.match(problem.detail, new RegExp(`${setting} allows`));
      }
      return created;
    };
    const stored = async () => (await db.query<{ n: number }>('SELECT count(*)::int AS n FROM webhooks'))[0]!.n;

    test('12 POST /webhooks to one URL at once: WEBHOOKS_PER_URL (3) are made, the other 9 are 422 limit-reached', async () => {
      const answers = await atOnce(Array.from({ length: 12 }, () => 'http://127.0.0.1:9/same'));
      assert.equal(outcome(answers, 'WEBHOOKS_PER_URL'), 3);
      assert.equal(await stored(), 3);
    });

    test('12 POST /webhooks to twelve URLs at once with 3 made: WEBHOOKS_MAX (6) is reached, never passed', async () => {
      const answers = await atOnce(Array.from({ length: 12 }, (_, i) => `http://127.0.0.1:9/other-${i}`));
      assert.equal(outcome(answers, 'WEBHOOKS_MAX'), 3);
      assert.equal(await stored(), 6);
      assert.equal((await app.inject({ url: '/webhooks?limit=100' })).json().length, 6);
    });
  });
}
