// A service's Retry-After beats the alert backoff on each backend: a 429 or 503 asking for longer than ALERT_RETRY_DELAYS_MS gets its next attempt no earlier, as the delivery record and the queued retry show.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { backends, type mainServiceOn, warnIfNoPostgres, openService, type OpenService } from '../helpers.js';
import { until } from '../wait.js';
import { startReceiver, type Receiver } from './receiver.js';

warnIfNoPostgres();

type Service = Awaited<ReturnType<typeof mainServiceOn>>;

interface Recorded {
  status: string;
  attempts: number;
  response_status: number | null;
  /** ms since the epoch */
  next_attempt_at: number | null;
  /** When the attempt was recorded: after its answer came. */
  updated_at: number;
  /** When the queued retry may start. */
  retry_after: number | null;
}

for (const backend of backends()) {
  describe(`Retry-After against the alert backoff on ${backend.name}`, () => {
    let service: Service;
    let receiver: Receiver;
    let opened: OpenService;

    before(async () => {
      receiver = await startReceiver();
      // Retries 50 ms apart: any Retry-After of a second or more is the longer wait.
      service = opened = await openService(backend, { SCRAPE_ALLOW_PRIVATE_NETWORKS: 'true', ALERT_RETRY_DELAYS_MS: '50,50,50' }, { work: true });
      opened.own(receiver);
    });
    after(() => opened.close());

    const created = async (url: string, payload: unknown) => {
      const res = await service.app.inject({ method: 'POST', url, payload: payload as object });
      assert.equal(res.statusCode, 201, res.body);
      return res.json();
    };

    /** The channel's one delivery as recorded, with the start time of the retry queued for it. */
    const recorded = async (channelId: string): Promise<Recorded | undefined> => {
      const { db, config } = service.context;
      const [row] = await db.query<Recorded>(
        `SELECT d.status, d.attempts, d.response_status,
                (extract(epoch FROM d.next_attempt_at) * 1000)::float8 AS next_attempt_at, (extract(epoch FROM d.updated_at) * 1000)::float8 AS updated_at,
                (SELECT (extract(epoch FROM max(j.start_after)) * 1000)::float8 FROM ${config.jobs.queueSchema}.job j
                  WHERE j.name = 'alert-delivery' AND j.data->>'delivery_id' = d.id::text AND j.state IN ('created', 'retry')) AS retry_after
           FROM alert_deliveries d WHERE d.channel_id = $1`,
        [channelId],
      );
      return row;
    };

    /**
     * A product whose price change fires a rule with `channel`; the receiver holds the first attempt
     * and answers it with `status` and `retryAfter` (what it says depending on when it answers),
     * every later one with 200. Answers the first attempt as recorded, then waits for the retry's success.
     */
    const firstAttempt = async (channel: { id: string }, path: string, status: number, retryAfter: () => string) => {
      const product = await created('/products', { title: `Grinder ${path}`, price: 90, currency: 'EUR' });
      await created('/alert-rules', {
        name: `changes ${path}`,
        scope: { type: 'product', product_id: product.id },
        condition: { type: 'price_changed' },
        cooldown_minutes: 0,
        channel_ids: [channel.id],
      });
      const held = receiver.hold();
      await service.app.inject({ method: 'PATCH', url: `/products/${product.id}`, payload: { price: 85 } });
      await until('the first attempt at the receiver', () => receiver.waiting() === 1);
      const said = retryAfter();
      receiver.answer = { status, headers: { 'retry-after': said }, body: 'slow down' };
      held.release();
      receiver.answer = { status: 200 };
      const first = await until('the first attempt recorded', async () => {
        const row = await recorded(channel.id);
        return row !== undefined && row.attempts === 1 ? row : undefined;
      });
      const retried = await until('the retry recorded as succeeded', async () => {
        const row = await recorded(channel.id);
        return row?.status === 'succeeded' ? row : undefined;
      });
      assert.equal(retried.attempts, 2, 'one retry, once the service allowed it');
      return { first, said };
    };

    test('ntfy answers 429 with Retry-After: 2 (seconds): the next attempt is recorded and queued 2 s after the attempt at the earliest, not 50 ms', async () => {
      const channel = await created('/channels', { name: 'ntfy', config: { kind: 'ntfy', server_url: `${receiver.base}/`, topic: 'busy-topic-1' } });
      const { first } = await firstAttempt(channel, 'ntfy', 429, () => '2');
      assert.equal(first.status, 'retrying');
      assert.equal(first.response_status, 429);
      assert.ok(
        first.next_attempt_at !== null && first.next_attempt_at - first.updated_at >= 2000,
        `next attempt ${first.next_attempt_at! - first.updated_at} ms after the attempt`,
      );
      assert.equal(first.retry_after, first.next_attempt_at, 'the retry is queued for the time the record shows');
    });

    test('Gotify answers 503 with Retry-After as an HTTP date: the next attempt is recorded and queued no earlier than that date', async () => {
      const channel = await created('/channels', { name: 'gotify', config: { kind: 'gotify', server_url: `${receiver.base}/gotify`, token: 'AgotifyTokenForRetry' } });
      const { first, said } = await firstAttempt(channel, 'gotify', 503, () => new Date(Date.now() + 3000).toUTCString());
      assert.equal(first.status, 'retrying');
      assert.equal(first.response_status, 503);
      assert.ok(
        first.next_attempt_at !== null && first.next_attempt_at >= Date.parse(said),
        `next attempt at ${new Date(first.next_attempt_at!).toISOString()}, asked not before ${said}`,
      );
      assert.equal(first.retry_after, first.next_attempt_at, 'the retry is queued for the time the record shows');
    });

    test("a webhook channel's receiver answering 429 with Retry-After: 2 is waited for too", async () => {
      const hook = await created('/webhooks', { url: `${receiver.base}/hook`, events: ['product.gone'] });
      const channel = await created('/channels', { name: 'webhook', config: { kind: 'webhook', webhook_id: hook.id } });
      const { first } = await firstAttempt(channel, 'webhook', 429, () => '2');
      assert.equal(first.status, 'retrying');
      assert.ok(
        first.next_attempt_at !== null && first.next_attempt_at - first.updated_at >= 2000,
        `next attempt ${first.next_attempt_at! - first.updated_at} ms after the attempt`,
      );
      assert.equal(first.retry_after, first.next_attempt_at, 'the retry is queued for the time the record shows');
    });
  });
}
