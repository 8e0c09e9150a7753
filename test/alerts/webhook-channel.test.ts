// An alert channel of kind webhook on each backend: a firing reaches a registered webhook's receiver as an `alert.fired` message signed per Standard Webhooks with that webhook's secret, retried under one webhook-id.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Webhook as Verifier, WebhookVerificationError } from 'standardwebhooks';
import type { Alert } from '../../src/alerts/rules/alert-api-schema.js';
import { backends, type mainServiceOn, warnIfNoPostgres, openService, type OpenService } from '../helpers.js';
import { until } from '../wait.js';
import { startReceiver, type Received, type Receiver } from './receiver.js';

warnIfNoPostgres();

type Service = Awaited<ReturnType<typeof mainServiceOn>>;

/** The payload of a received message, verified against `secret` the way a receiver would (throws if the signature does not hold). */
function verified(secret: string, message: Received): { type: string; timestamp: string; data: Record<string, unknown> } {
  return new Verifier(secret).verify(message.raw, message.headers as Record<string, string>) as never;
}

for (const backend of backends()) {
  describe(`the webhook alert channel on ${backend.name}`, () => {
    let service: Service;
    let receiver: Receiver;
    let opened: OpenService;

    before(async () => {
      receiver = await startReceiver();
      service = opened = await openService(
        backend,
        { SCRAPE_ALLOW_PRIVATE_NETWORKS: 'true', ALERT_RETRY_DELAYS_MS: '50,50', PUBLIC_URL: 'https://prices.example' },
        { work: true },
      );
      opened.own(receiver);
    });
    after(() => opened.close());

    const created = async (url: string, payload: unknown) => {
      const res = await service.app.inject({ method: 'POST', url, payload: payload as object });
      assert.equal(res.statusCode, 201, res.body);
      return res.json();
    };
    /** A webhook on the receiver (listening to an event no test makes: only alert messages reach it) and a channel through it. */
    const webhookChannel = async (path: string) => {
      const hook = await created('/webhooks', { url: `${receiver.base}${path}`, events: ['product.gone'] });
      const channel = await created('/channels', { name: `webhook ${path}`, config: { kind: 'webhook', webhook_id: hook.id } });
      return { hook, channel };
    };
    const alertOf = async (ruleId: string) => ((await service.app.inject({ url: `/alerts?rule_id=${ruleId}` })).json() as Alert[])[0];

    test("a price at or below the target: the webhook's receiver gets one alert.fired message, signed with the webhook's secret, naming the rule, product and values", async () => {
      const { hook, channel } = await webhookChannel('/signed');
      assert.match(hook.secret, /^whsec_/);
      const product = await created('/products', { title: 'Espresso machine', price: 250, currency: 'EUR', availability: 'in_stock' });
      const rule = await created('/alert-rules', {
        name: 'Espresso under 200',
        scope: { type: 'product', product_id: product.id },
        condition: { type: 'price_at_or_below', target: 200 },
        cooldown_minutes: 0,
        channel_ids: [channel.id],
      });
      assert.equal((await service.app.inject({ method: 'PATCH', url: `/products/${product.id}`, payload: { price: 180 } })).statusCode, 200);

      const message = await until('the alert message', () => receiver.received.find((r) => r.path === '/signed'));
      const payload = verified(hook.secret, message);
      assert.equal(payload.type, 'alert.fired');
      const data = payload.data as {
        dedupe_key: string;
        rule: { id: string; name: string; condition: string };
        product: { id: number; title: string; dashboard_url: string };
        event: { type: string };
        before: { price: number };
        after: { price: number };
        why: string;
      };
      assert.equal(message.headers['webhook-id'], `alert_${data.dedupe_key}`, 'receivers deduplicate on the firing');
      assert.deepEqual(data.rule, { id: rule.id, name: 'Espresso under 200', condition: 'price_at_or_below' });
      assert.equal(data.product.id, product.id);
      assert.equal(data.product.title, 'Espresso machine');
      assert.equal(data.product.dashboard_url, `https://prices.example/ui/products/${product.id}`);
      assert.equal(data.event.type, 'price.changed');
      assert.deepEqual([data.before.price, data.after.price], [250, 180]);
      assert.match(data.why, /at or below/);
      // Only the webhook's own secret verifies it; a change to the body breaks the signature.
      const stranger = `whsec_${Buffer.alloc(32, 7).toString('base64')}`;
      assert.throws(() => verified(stranger, message), WebhookVerificationError);
      assert.throws(() => verified(hook.secret, { ...message, raw: message.raw.replace('"price":180', '"price":18') }), WebhookVerificationError);

      const alert = await until('the delivery recorded as succeeded', async () => {
        const shown = await alertOf(rule.id);
        return shown?.deliveries[0]?.status === 'succeeded' ? shown : undefined;
      });
      assert.equal(alert.deliveries[0]!.channel_id, channel.id);
      assert.equal(alert.deliveries[0]!.response_status, 200);
      assert.equal(receiver.received.filter((r) => r.path === '/signed').length, 1, 'one message');
    });

    test('a receiver answering 503 gets the alert again on the alert schedule, under the same webhook-id and freshly signed', async () => {
      const { hook, channel } = await webhookChannel('/flaky');
      const product = await created('/products', { title: 'Kettle', price: 40, currency: 'EUR', availability: 'out_of_stock' });
      const rule = await created('/alert-rules', {
        name: 'Kettle back',
        scope: { type: 'product', product_id: product.id },
        condition: { type: 'back_in_stock' },
        cooldown_minutes: 0,
        channel_ids: [channel.id],
      });
      // The first attempt is held, then answered 503; every later one 200.
      const held = receiver.hold();
      await service.app.inject({ method: 'PATCH', url: `/products/${product.id}`, payload: { availability: 'in_stock' } });
      await until('the first attempt at the receiver', () => receiver.waiting() === 1);
      receiver.answer = { status: 503, body: 'busy' };
      held.release();
      receiver.answer = { status: 200 };
      const retrying = await until('the first attempt recorded', async () => {
        const shown = await alertOf(rule.id);
        return shown?.deliveries[0]?.attempts === 1 ? shown : undefined;
      });
      assert.equal(retrying.deliveries[0]!.response_status, 503);
      await until('the retry recorded as succeeded', async () => (await alertOf(rule.id))?.deliveries[0]?.status === 'succeeded');
      const attempts = receiver.received.filter((r) => r.path === '/flaky');
      assert.equal(attempts.length, 2);
      assert.equal(attempts[0]!.headers['webhook-id'], attempts[1]!.headers['webhook-id']);
      for (const attempt of attempts) assert.equal(verified(hook.secret, attempt).type, 'alert.fired');
    });
  });
}
