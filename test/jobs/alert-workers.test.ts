// Alerts across real worker processes on one PostgreSQL: one firing and one message however many workers see the change, the digest calendar once, a period ended now by an operator digested once, a delivery outliving a killed worker.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import pg from 'pg';
import { startReceiver, type Receiver } from '../alerts/receiver.js';
import { startShop, type Shop } from '../alerts/shop.js';
import { startMainProcess, startWorkerProcess, type ServiceProcess, type WorkerProcess } from '../process-helpers.js';
import { until } from '../wait.js';

const pgUrl = process.env.TEST_DATABASE_URL ?? process.env.DATABASE_URL;
const skip = pgUrl === undefined ? 'several processes share one database only on PostgreSQL: set DATABASE_URL or TEST_DATABASE_URL' : false;

describe('alerts with several worker processes on one PostgreSQL', { skip }, () => {
  let database: string;
  let url: string;
  let admin: pg.Client;
  let api: ServiceProcess;
  let receiver: Receiver;
  let shop: Shop;
  const workers: WorkerProcess[] = [];

  const env = () => ({ DATABASE_URL: url, SCRAPE_ALLOW_PRIVATE_NETWORKS: 'true', WORKER_CONCURRENCY: '4', LOG_LEVEL: 'info', SCRAPE_OBEY_ROBOTS: 'false' });
  const worker = async () => {
    const started = await startWorkerProcess(env());
    workers.push(started);
    return started;
  };
  const query = async <R>(sql: string, params: unknown[] = []): Promise<R[]> => {
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      return (await client.query(sql, params)).rows as R[];
    } finally {
      await client.end();
    }
  };
  const call = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(`${api.base}${path}`, {
      method,
      ...(body === undefined ? {} : { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }),
    });
    // biome-ignore lint/suspicious/noExplicitAny: answers of several shapes, each read field by field below
    return { status: res.status, body: (await res.json()) as any };
  };
  /** Queues `n` scrape jobs of the shop page at once and waits until every one has ended. */
  const scrapeTimes = async (n: number) => {
    const ids = await Promise.all(Array.from({ length: n }, async () => (await call('POST', '/jobs', { url: shop.url })).body.id as string));
    await until(
      `${n} jobs to end`,
      async () => {
        const rows = await query<{ n: number }>(`SELECT count(*)::int AS n FROM jobs WHERE id = ANY ($1::uuid[]) AND status IN ('succeeded', 'failed')`, [ids]);
        return rows[0]!.n === n;
      },
      { withinMs: 120_000, everyMs: 200 },
    );
    const failed = await query<{ error: unknown }>(`SELECT error FROM jobs WHERE id = ANY ($1::uuid[]) AND status = 'failed'`, [ids]);
    assert.deepEqual(failed, [], 'every scrape succeeded');
  };

  before(async () => {
    database = `alert_workers_${randomBytes(5).toString('hex')}`;
    admin = new pg.Client({ connectionString: pgUrl });
    await admin.connect();
    await admin.query(`CREATE DATABASE ${database}`);
    const parsed = new URL(pgUrl!);
    parsed.pathname = `/${database}`;
    url = parsed.href;
    receiver = await startReceiver();
    shop = await startShop('Espresso machine', 250);
    api = await startMainProcess({ DATABASE_URL: url, WORKERS: '0', SCRAPE_ALLOW_PRIVATE_NETWORKS: 'true' });
  });

  after(async () => {
    for (const w of workers) if (w.child.exitCode === null) w.child.kill('SIGKILL');
    api?.child.kill('SIGKILL');
    await Promise.all([...workers.map((w) => w.exited), api?.exited]);
    await receiver?.close();
    await shop?.close();
    await admin.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`).catch(() => undefined);
    await admin.end();
  });

  test('two workers scrape a changed page six times at once: one event, one firing, one message', async () => {
    await Promise.all([worker(), worker()]);
    await scrapeTimes(1);
    const [product] = (await call('GET', '/products')).body;
    assert.equal(product.price, 250);
    const channel = (await call('POST', '/channels', { name: 'phone', config: { kind: 'ntfy', server_url: `${receiver.base}/`, topic: 'workers-1' } })).body;
    const rule = await call('POST', '/alert-rules', {
      name: 'Espresso under 200',
      scope: { type: 'product', product_id: product.id },
      condition: { type: 'price_at_or_below', target: 200 },
      cooldown_minutes: 0,
      channel_ids: [channel.id],
    });
    assert.equal(rule.status, 201, JSON.stringify(rule.body));
    shop.price = 180;
    await scrapeTimes(6);
    const events = await query<{ n: number }>(`SELECT count(*)::int AS n FROM events WHERE product_id = $1 AND type = 'price.changed'`, [product.id]);
    assert.equal(events[0]!.n, 1, 'the change was seen once');
    await until('the message', () => receiver.received.find((r) => r.body.topic === 'workers-1'));
    await until('the delivery settled', async () => (await query<{ status: string }>(`SELECT status FROM alert_deliveries`))[0]?.status === 'succeeded');
    const firings = await query<{ n: number }>('SELECT count(*)::int AS n FROM alert_firings WHERE rule_id = $1', [rule.body.id]);
    assert.equal(firings[0]!.n, 1, 'one firing');
    assert.equal(receiver.received.filter((r) => r.body.topic === 'workers-1').length, 1, 'one message');
  });

  test('the digest calendar fires on the queue: a due daily digest goes out once with two workers', async () => {
    const [product] = (await call('GET', '/products')).body;
    const channel = (await call('POST', '/channels', { name: 'digest', config: { kind: 'ntfy', server_url: `${receiver.base}/`, topic: 'workers-digest' } })).body;
    const rule = (
      await call('POST', '/alert-rules', {
        name: 'Daily changes',
        scope: { type: 'all' },
        condition: { type: 'price_changed' },
        cooldown_minutes: 0,
        digest: 'daily',
        channel_ids: [channel.id],
      })
    ).body;
    shop.price = 170;
    await scrapeTimes(2);
    const [waiting] = await query<{ n: number }>('SELECT count(*)::int AS n FROM alert_firings WHERE rule_id = $1 AND digest_id IS NULL', [rule.id]);
    assert.equal(waiting!.n, 1);
    // The day is over (as far as this firing knows): the next tick of the calendar, on any worker, sends it.
    await query(`UPDATE alert_firings SET digest_due_at = now() - interval '1 second' WHERE rule_id = $1`, [rule.id]);
    const message = await until('the digest', () => receiver.received.find((r) => r.body.topic === 'workers-digest'), { withinMs: 150_000, everyMs: 250 });
    assert.match(String(message.body.title), /Daily digest: 1 alert/);
    assert.match(String(message.body.message), /Espresso machine/);
    const schedule = await query<{ n: number }>(`SELECT count(*)::int AS n FROM pgboss.schedule WHERE name = 'alert-digest'`);
    assert.equal(schedule[0]!.n, 1, 'one calendar entry, whichever workers put it there');
    // Another tick passes; still one digest.
    const firstTick = await query<{ n: number }>(`SELECT count(*)::int AS n FROM pgboss.job WHERE name = 'alert-digest'`);
    await until(
      'another tick of the calendar',
      async () => (await query<{ n: number }>(`SELECT count(*)::int AS n FROM pgboss.job WHERE name = 'alert-digest'`))[0]!.n > firstTick[0]!.n,
      {
        withinMs: 150_000,
        everyMs: 500,
      },
    );
    const digests = await query<{ n: number }>('SELECT count(*)::int AS n FROM alert_digests WHERE rule_id = $1', [rule.id]);
    assert.equal(digests[0]!.n, 1);
    assert.equal(receiver.received.filter((r) => r.body.topic === 'workers-digest').length, 1, 'one digest message');
    assert.equal(product.title, 'Espresso machine');
  });

  test('POST /alerts/digests/send four times at once with two workers: the daily period ends now and its digest goes out once, whichever worker takes it', async () => {
    const [product] = (await call('GET', '/products')).body;
    const channel = (await call('POST', '/channels', { name: 'digest now', config: { kind: 'ntfy', server_url: `${receiver.base}/`, topic: 'workers-now' } })).body;
    const rule = (
      await call('POST', '/alert-rules', {
        name: 'Espresso machine, daily',
        scope: { type: 'product', product_id: product.id },
        condition: { type: 'price_changed' },
        cooldown_minutes: 0,
        digest: 'daily',
        channel_ids: [channel.id],
      })
    ).body;
    shop.price = 160;
    await scrapeTimes(1);
    const [waiting] = await query<{ n: number }>('SELECT count(*)::int AS n FROM alert_firings WHERE rule_id = $1 AND digest_id IS NULL', [rule.id]);
    assert.equal(waiting!.n, 1, 'the alert waits for the end of the day');
    const answers = await Promise.all(Array.from({ length: 4 }, () => call('POST', '/alerts/digests/send?period=daily')));
    assert.deepEqual(
      answers.map((a) => a.status),
      [202, 202, 202, 202],
    );
    const message = await until('the digest', () => receiver.received.find((r) => r.body.topic === 'workers-now'), { withinMs: 120_000, everyMs: 100 });
    assert.match(String(message.body.title), /Daily digest: 1 alert/);
    // Every run of the sender the requests queued is over, on whichever worker, and the digest's delivery settled.
    await until(
      'the queued digest runs done and the delivery settled',
      async () => {
        const [runs] = await query<{ n: number }>(
          `SELECT count(*)::int AS n FROM pgboss.job WHERE name = 'alert-digest' AND data ? 'until' AND state IN ('created', 'retry', 'active')`,
        );
        const [delivery] = await query<{ status: string }>('SELECT status FROM alert_deliveries WHERE channel_id = $1', [channel.id]);
        return runs!.n === 0 && delivery?.status === 'succeeded';
      },
      { withinMs: 120_000, everyMs: 200 },
    );
    const [runs] = await query<{ n: number }>(`SELECT count(*)::int AS n FROM pgboss.job WHERE name = 'alert-digest' AND data ? 'until' AND state = 'completed'`);
    assert.ok(runs!.n >= 1, 'the requests queued runs of the sender, which the workers completed');
    const digests = await query<{ n: number }>('SELECT count(*)::int AS n FROM alert_digests WHERE rule_id = $1', [rule.id]);
    assert.equal(digests[0]!.n, 1, 'one digest');
    assert.equal((await query<{ n: number }>('SELECT count(*)::int AS n FROM alert_deliveries WHERE channel_id = $1', [channel.id]))[0]!.n, 1, 'one delivery');
    assert.equal(receiver.received.filter((r) => r.body.topic === 'workers-now').length, 1, 'one message');
  });

  test('kill -9 of the worker sending an alert: the delivery is not lost, another worker sends it', async () => {
    for (const w of workers) if (w.child.exitCode === null) w.child.kill('SIGKILL');
    await Promise.all(workers.map((w) => w.exited));
    const victim = await worker();
    const channel = (await call('POST', '/channels', { name: 'held', config: { kind: 'ntfy', server_url: `${receiver.base}/`, topic: 'workers-held' } })).body;
    await call('POST', '/alert-rules', { name: 'Back in stock', scope: { type: 'all' }, condition: { type: 'out_of_stock' }, cooldown_minutes: 0, channel_ids: [channel.id] });
    const held = receiver.hold();
    shop.inStock = false;
    await scrapeTimes(1);
    await until('the victim to be sending the alert', () => receiver.waiting() > 0);
    victim.child.kill('SIGKILL');
    await victim.exited;
    held.release();
    const [before] = await query<{ status: string; attempts: number }>(`SELECT d.status, d.attempts FROM alert_deliveries d WHERE d.channel_id = $1`, [channel.id]);
    assert.equal(before!.status, 'pending', 'the victim died before recording an outcome');
    await worker();
    await until(
      'the survivor to deliver it',
      async () => (await query<{ status: string }>(`SELECT status FROM alert_deliveries WHERE channel_id = $1`, [channel.id]))[0]?.status === 'succeeded',
      {
        withinMs: 120_000,
        everyMs: 250,
      },
    );
    assert.ok(receiver.received.some((r) => r.body.topic === 'workers-held'));
  });
});
