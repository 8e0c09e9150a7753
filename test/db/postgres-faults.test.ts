// PostgreSQL stopping, crashing and freezing under load: 503 problems while it is gone (no request waits it out), recovery without an app restart, no lost acknowledged writes.
import assert from 'node:assert/strict';
import { after, before, describe, test, type TestContext } from 'node:test';
import type { InjectOptions } from 'fastify';
import pg from 'pg';
import { createPostgresDatabase, type PostgresDatabase, type PostgresOptions } from '../../src/db/database.js';
import { migrate } from '../../src/db/migrate.js';
import type { App } from '../../src/http/base-app.js';
import { startThrowawayPostgres, type ThrowawayPostgres } from '../fixtures/throwaway-postgres.js';
import { mainAppOn, noPostgresBinaries } from '../helpers.js';

const WRITERS = 4;
/** Hard cap on each test's load, whatever happens to the scenario driving it. */
const LOAD_LIMIT_MS = 50_000;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

interface Outcome {
  kind: 'write' | 'read';
  /** The phases of the scenario when the request was sent and when its answer came. */
  sent: string;
  answered: string;
  status: number;
  ms: number;
  contentType: string;
  retryAfter: string | undefined;
  body: string;
  title?: string;
  id?: number;
}

interface Health {
  status: string;
  checks: { relational: { status: string; detail?: string } };
}

/** The main app on its own pool to `server`, with writes unthrottled so the load is real. */
async function appOn(server: ThrowawayPostgres, t: TestContext, options: PostgresOptions) {
  const idleClientErrors: string[] = [];
  const db = createPostgresDatabase(server.url, { ...options, onError: (error) => idleClientErrors.push(error.message) });
  t.after(() => db.close());
  await migrate(db);
  const app = await mainAppOn(db, t, { RATE_LIMIT_WRITES_PER_MINUTE: '0' });
  await app.ready(); // plugin start-up takes seconds on a busy machine; it is not what these tests time
  return { db, app, idleClientErrors };
}

/**
 * WRITERS loops creating uniquely titled products and one loop listing them, recording every
 * answer, until `stop()`. `phase` labels the requests sent from then on.
 */
function startLoad(app: App, prefix: string) {
  const outcomes: Outcome[] = [];
  /** Requests sent and not answered yet, by the phase they were sent in. */
  const pending: string[] = [];
  let phase = 'up';
  let loading = true;
  const deadline = Date.now() + LOAD_LIMIT_MS;
  const keepLoading = () => loading && Date.now() < deadline;
  const send = async (kind: Outcome['kind'], request: InjectOptions, title?: string) => {
    const sent = phase;
    const started = performance.now();
    pending.push(sent);
    const res = await app.inject(request).finally(() => pending.splice(pending.indexOf(sent), 1));
    const outcome: Outcome = {
      kind,
      sent,
      answered: phase,
      status: res.statusCode,
      ms: performance.now() - started,
      contentType: String(res.headers['content-type'] ?? ''),
      retryAfter: res.headers['retry-after'] === undefined ? undefined : String(res.headers['retry-after']),
      body: res.body,
    };
    if (res.statusCode === 201) {
      outcome.title = title;
      outcome.id = (res.json() as { id: number }).id;
    }
    outcomes.push(outcome);
    return outcome;
  };
  const writer = async (w: number) => {
    for (let i = 0; keepLoading(); i++) {
      const title = `${prefix} w${w} #${i}`;
      const { status } = await send('write', { method: 'POST', url: '/products', payload: { title, price: i } }, title);
      if (status !== 201) await sleep(20); // a client backing off a little, so the record stays readable
    }
  };
  const reader = async () => {
    while (keepLoading()) {
      const { status } = await send('read', { method: 'GET', url: '/products?limit=5&sort=-id' });
      await sleep(status === 200 ? 5 : 20);
    }
  };
  const running = Promise.all([...Array.from({ length: WRITERS }, (_, w) => writer(w)), reader()]);

  const writesAnswered = (p: string, status: number) => outcomes.filter((o) => o.kind === 'write' && o.sent === p && o.status === status);
  return {
    outcomes,
    writesAnswered,
    /** Writes both sent and answered 201 in phase `p` (one sent late in an outage may succeed after it). */
    acknowledgedDuring: (p: string) => writesAnswered(p, 201).filter((o) => o.answered === p),
    enter(next: string) {
      phase = next;
    },
    /** Waits (hang guard `withinMs`) until `count` writes sent in this phase were answered `status`. */
    async writesReach(status: 201 | 503, count: number, withinMs = 20_000) {
      const p = phase;
      const until = Date.now() + withinMs;
      while (writesAnswered(p, status).length < count) {
        if (Date.now() > until) assert.fail(`not ${count} writes answered ${status} in phase ${p}: ${JSON.stringify(outcomes.at(-1))}`);
        await sleep(50);
      }
    },
    /**
     * Waits until every request sent before this phase has been answered. In an outage that is the
     * proof that no request waits it out: the outage lasts until they are all answered (or the test's
     * hang guard ends it).
     */
    async earlierAnswered() {
      const p = phase;
      while (pending.some((sent) => sent !== p)) await sleep(20);
    },
    async stop() {
      loading = false;
      await running;
    },
  };
}

/** Polls /health until it answers `status` (hang guard `withinMs`). */
async function healthBecomes(app: App, status: 200 | 503, withinMs: number, server: ThrowawayPostgres) {
  const deadline = Date.now() + withinMs;
  for (;;) {
    const res = await app.inject({ method: 'GET', url: '/health' });
    const body = res.json() as Health;
    if (res.statusCode === status) return { body };
    if (Date.now() > deadline) assert.fail(`/health still ${res.statusCode} after ${withinMs} ms: ${res.body}\n${server.log()}`);
    await sleep(100);
  }
}

async function assertDegraded(app: App, server: ThrowawayPostgres) {
  const degraded = await healthBecomes(app, 503, 20_000, server);
  assert.equal(degraded.body.status, 'degraded');
  assert.equal(degraded.body.checks.relational.status, 'down', JSON.stringify(degraded.body));
}

async function assertHealthy(app: App, server: ThrowawayPostgres) {
  const ok = await healthBecomes(app, 200, 20_000, server);
  assert.equal(ok.body.status, 'ok');
  assert.equal(ok.body.checks.relational.status, 'up');
}

/**
 * What must hold whatever the fault: only successes and 503 problems, every request sent during an
 * outage answered during it (none waited for the server to come back), the pool not left waiting,
 * every 201 stored under its id. Returns the figures for the report.
 */
async function assertOutcomes(outcomes: Outcome[], db: PostgresDatabase, server: ThrowawayPostgres, prefix: string, outages: Record<string, readonly string[]>) {
  const unexpected = outcomes.filter((o) => !(o.status === 503 || o.status === (o.kind === 'write' ? 201 : 200)));
  assert.deepEqual(
    unexpected.slice(0, 5).map((o) => `${o.kind} ${o.status} ${o.body}`),
    [],
    `${unexpected.length} answers were neither success nor 503`,
  );
  const failed = outcomes.filter((o) => o.status === 503);
  for (const o of failed) {
    assert.match(o.contentType, /^application\/problem\+json/, o.body);
    const problem = JSON.parse(o.body) as { status: number; type: string };
    assert.equal(problem.status, 503);
    assert.equal(problem.type, 'urn:data-aggregator:problem:service-unavailable');
    assert.equal(o.retryAfter, '1', `503 with Retry-After: ${o.body}`);
  }
  // `outages`: for each phase in which the server was gone, the phases in which it was still gone.
  const waitedOut = outcomes.filter((o) => outages[o.sent] !== undefined && !outages[o.sent]!.includes(o.answered));
  assert.deepEqual(
    waitedOut.map((o) => `${o.kind} sent ${o.sent}, answered ${o.answered}`),
    [],
    'requests that waited for the server to come back',
  );

  const pool = db.poolStats();
  assert.equal(pool.waiting, 0, `no request waits for a connection at the end: ${JSON.stringify(pool)}`);

  const acknowledged = outcomes.filter((o) => o.kind === 'write' && o.status === 201);
  const direct = new pg.Client({ connectionString: server.url });
  await direct.connect();
  let stored: Map<string, number>;
  try {
    const { rows } = await direct.query<{ id: number; title: string }>('SELECT id, title FROM products WHERE starts_with(title, $1)', [`${prefix} w`]);
    stored = new Map(rows.map((r) => [r.title, r.id]));
  } finally {
    await direct.end();
  }
  const lost = acknowledged.filter((o) => stored.get(o.title!) !== o.id);
  assert.deepEqual(
    lost.map((o) => `${o.id} ${o.title}`),
    [],
    'acknowledged writes missing afterwards',
  );

  const writes = outcomes.filter((o) => o.kind === 'write').length;
  return (
    `requests ${outcomes.length} (writes ${writes}, reads ${outcomes.length - writes}); ` +
    `2xx writes verified present ${acknowledged.length}/${acknowledged.length}; ` +
    `rows stored without a 2xx (ambiguous commits) ${stored.size - acknowledged.length}; ` +
    `503s ${failed.length} (writes ${failed.filter((o) => o.kind === 'write').length}); pool at end ${JSON.stringify(pool)}`
  );
}

describe('PostgreSQL restarts and outages', { skip: noPostgresBinaries }, () => {
  let server: ThrowawayPostgres;
  before(async () => {
    server = await startThrowawayPostgres();
  });
  after(async () => {
    await server?.remove();
  });

  test('under write load, a fast stop and a crash-like stop give 503 problems that never wait for the server, /health follows, ' +
    'the app recovers by itself and every write answered 201 is in the database', { timeout: 120_000 }, async (t) => {
    const { db, app, idleClientErrors } = await appOn(server, t, { connectionTimeoutMillis: 1_000 });
    const load = startLoad(app, 'restart-test');
    /**
     * Stops the server, checks /health reports it, and keeps it down until every request sent before
     * has been answered and each writer has met a 503; restarts, checks recovery.
     */
    const outage = async (mode: 'fast' | 'immediate') => {
      load.enter(`${mode} stop`);
      await server.stop(mode);
      load.enter(`down after ${mode} stop`);
      await assertDegraded(app, server);
      await load.earlierAnswered();
      await load.writesReach(503, WRITERS);
      assert.equal((await app.inject({ method: 'GET', url: '/health' })).statusCode, 503, 'still degraded while stopped');
      // Still down: whatever was sent while down is answered before the server is back.
      load.enter(`still down after ${mode} stop`);
      await load.earlierAnswered();
      load.enter(`${mode} restart`);
      await server.start();
      await assertHealthy(app, server);
      load.enter(`recovered from ${mode} stop`);
      await load.writesReach(201, 20);
    };
    try {
      await load.writesReach(201, 20);
      await assertHealthy(app, server);
      await outage('fast');
      await outage('immediate');
    } finally {
      await load.stop();
    }

    for (const mode of ['fast', 'immediate']) {
      const p = `down after ${mode} stop`;
      assert.ok(load.writesAnswered(p, 503).length > 0, `writes sent while ${p} were answered 503`);
      assert.deepEqual(load.acknowledgedDuring(p), [], `no write acknowledged while ${p}`);
    }
    const figures = await assertOutcomes(load.outcomes, db, server, 'restart-test', {
      'down after fast stop': ['down after fast stop', 'still down after fast stop'],
      'down after immediate stop': ['down after immediate stop', 'still down after immediate stop'],
    });
    t.diagnostic(`${figures}; idle-client errors ${idleClientErrors.length}`);
  });

  test('a server that stops answering without closing connections (frozen, like a partition) gives 503s ' +
    'at the client query timeout, no request waits out the freeze, and the app recovers when it answers again', { timeout: 120_000 }, async (t) => {
    // A small query timeout keeps the test short; production derives it from the statement timeout.
    const { db, app } = await appOn(server, t, { connectionTimeoutMillis: 1_000, queryTimeoutMillis: 1_000 });
    const load = startLoad(app, 'freeze-test');
    try {
      await load.writesReach(201, 20);
      load.enter('frozen');
      server.pause();
      try {
        await assertDegraded(app, server);
        // The freeze lasts until the requests in flight when it began are answered (none may sit
        // it out) and each writer has met a 503: a request waiting for the server hangs the test.
        await load.earlierAnswered();
        await load.writesReach(503, WRITERS);
        load.enter('still frozen');
        await load.earlierAnswered();
      } finally {
        server.resume();
      }
      load.enter('resumed');
      await assertHealthy(app, server);
      await load.writesReach(201, 20);
    } finally {
      await load.stop();
    }

    assert.deepEqual(load.acknowledgedDuring('frozen'), [], 'no write acknowledged while frozen');
    t.diagnostic(await assertOutcomes(load.outcomes, db, server, 'freeze-test', { frozen: ['frozen', 'still frozen'] }));
  });
});
