// Ending a digest period now on each backend: POST /alerts/digests/send makes the waiting alerts one digest per rule at once, through the queue, exactly once; filtered by period and rule; a write behind API_KEY, in /openapi.json.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Alert } from '../../src/alerts/rules/alert-api-schema.js';
import { assertProblem, backends, type mainServiceOn, warnIfNoPostgres, openService, type OpenService } from '../helpers.js';
import { until } from '../wait.js';
import { startReceiver, type Receiver } from './receiver.js';

warnIfNoPostgres();

type Service = Awaited<ReturnType<typeof mainServiceOn>>;

const KEY = 'digest-0perator-key';

for (const backend of backends()) {
  describe(`POST /alerts/digests/send on ${backend.name}`, () => {
    let service: Service;
    let receiver: Receiver;
    let opened: OpenService;

    before(async () => {
      receiver = await startReceiver();
      service = opened = await openService(backend, { SCRAPE_ALLOW_PRIVATE_NETWORKS: 'true', API_KEY: KEY }, { work: true });
      opened.own(receiver);
    });
    after(() => opened.close());

    const inject = (method: string, url: string, payload?: unknown) =>
      service.app.inject({ method: method as 'GET', url, headers: { authorization: `Bearer ${KEY}` }, ...(payload === undefined ? {} : { payload: payload as object }) });
    const created = async (url: string, payload: unknown) => {
      const res = await inject('POST', url, payload);
      assert.equal(res.statusCode, 201, res.body);
      return res.json();
    };
    const send = async (query = '') => {
      const res = await inject('POST', `/alerts/digests/send${query}`);
      assert.equal(res.statusCode, 202, res.body);
      return res.json() as { digests: number; alerts: number };
    };
    const alertsOf = async (ruleId: string) => (await inject('GET', `/alerts?rule_id=${ruleId}`)).json() as Alert[];
    const messagesTo = (topic: string) => receiver.received.filter((r) => r.body.topic === topic);

    /** A product and a rule of `digest` mode watching its price, with a channel to `topic`; `changes` price changes made. */
    const watched = async (title: string, digest: 'daily' | 'weekly', topic: string, changes: number) => {
      const channel = await created('/channels', { name: topic, config: { kind: 'ntfy', server_url: `${receiver.base}/`, topic } });
      const product = await created('/products', { title, price: 100, currency: 'EUR' });
      const rule = await created('/alert-rules', {
        name: `${title}, ${digest}`,
        scope: { type: 'product', product_id: product.id },
        condition: { type: 'price_changed' },
        cooldown_minutes: 0,
        digest,
        channel_ids: [channel.id],
      });
      for (let i = 1; i <= changes; i++) assert.equal((await inject('PATCH', `/products/${product.id}`, { price: 100 - i })).statusCode, 200);
      assert.equal((await alertsOf(rule.id)).length, changes);
      return { product, rule };
    };

    test('the daily periods end now: one digest per rule with what it gathered, sent through the queue once; weekly ones and later alerts wait', async () => {
      const daily = await watched('Teapot', 'daily', 'digest-daily-1', 2);
      const weekly = await watched('Kettle', 'weekly', 'digest-weekly-1', 1);
      assert.deepEqual(await send('?period=daily'), { digests: 1, alerts: 2 });
      const message = await until('the daily digest', () => messagesTo('digest-daily-1')[0]);
      assert.match(String(message.body.title), /Daily digest: 2 alerts/);
      const sent = await until('both alerts showing the digest delivered', async () => {
        const list = await alertsOf(daily.rule.id);
        return list.every((a) => a.deliveries[0]?.status === 'succeeded') ? list : undefined;
      });
      assert.equal(sent[0]!.deliveries[0]!.id, sent[1]!.deliveries[0]!.id, 'one delivery for both');
      assert.equal(sent[0]!.deliveries[0]!.digest, true);

      // Asked again: nothing waits, nothing more is sent.
      assert.deepEqual(await send('?period=daily'), { digests: 0, alerts: 0 });
      assert.deepEqual(
        (await alertsOf(weekly.rule.id)).map((a) => a.deliveries.length),
        [0],
        'the weekly digest still waits for its week',
      );
      // An alert after the period was ended waits for the period's usual end.
      await inject('PATCH', `/products/${daily.product.id}`, { price: 50 });
      const later = await until('the later alert', async () => {
        const list = await alertsOf(daily.rule.id);
        return list.length === 3 ? list[0] : undefined;
      });
      assert.deepEqual(later.deliveries, []);
      assert.equal(await service.context.alerts.digests.sendDue(new Date()), 0, 'not due before the day is over');
      assert.equal(messagesTo('digest-daily-1').length, 1);
    });

    test("rule_id ends one rule's period only; without a period, daily and weekly ones end; five requests at once still make one digest per rule", async () => {
      const one = await watched('Grinder', 'weekly', 'digest-rule-1', 1);
      const other = await watched('Scale', 'daily', 'digest-rule-2', 2);
      assert.deepEqual(await send(`?rule_id=${one.rule.id}`), { digests: 1, alerts: 1 });
      const weekly = await until('the weekly digest', () => messagesTo('digest-rule-1')[0]);
      assert.match(String(weekly.body.title), /Weekly digest: 1 alert/);
      assert.deepEqual(
        (await alertsOf(other.rule.id)).map((a) => a.deliveries.length),
        [0, 0],
        "the other rule's digest waits",
      );

      const third = await watched('Mill', 'weekly', 'digest-rule-3', 1);
      const answers = await Promise.all(Array.from({ length: 5 }, () => send()));
      assert.ok(
        answers.some((a) => a.digests >= 1),
        JSON.stringify(answers),
      );
      await until('the daily digest', () => messagesTo('digest-rule-2')[0]);
      await until('the weekly digest', () => messagesTo('digest-rule-3')[0]);
      // Every run of the sender those requests queued is over before counting.
      const { db, config } = service.context;
      await until(
        'the queued digest runs done',
        async () =>
          (
            await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${config.jobs.queueSchema}.job WHERE name = 'alert-digest' AND state IN ('created', 'retry', 'active')`)
          )[0]!.n === 0,
      );
      const digests = await db.query<{ rule_id: string }>('SELECT rule_id FROM alert_digests WHERE rule_id = ANY ($1::uuid[])', [[one.rule.id, other.rule.id, third.rule.id]]);
      assert.equal(digests.length, 3, 'one digest per rule');
      assert.deepEqual(
        ['digest-rule-1', 'digest-rule-2', 'digest-rule-3'].map((topic) => messagesTo(topic).length),
        [1, 1, 1],
      );
    });

    test('a bad period or rule id is a 422 naming it; without the key a 401; /openapi.json documents it as a write needing the key', async () => {
      const period = assertProblem(await inject('POST', '/alerts/digests/send?period=monthly'), 422);
      assert.match(JSON.stringify(period), /period/);
      const rule = assertProblem(await inject('POST', '/alerts/digests/send?rule_id=42'), 422);
      assert.match(JSON.stringify(rule), /rule_id/);
      assertProblem(await service.app.inject({ method: 'POST', url: '/alerts/digests/send' }), 401);
      const doc = (await service.app.inject({ url: '/openapi.json' })).json();
      const operation = doc.paths['/alerts/digests/send'].post;
      assert.ok(operation.responses['202']);
      assert.deepEqual(operation.parameters.map((p: { name: string }) => p.name).sort(), ['period', 'rule_id']);
      assert.ok(operation.security?.length > 0, 'it needs the key');
    });
  });
}
