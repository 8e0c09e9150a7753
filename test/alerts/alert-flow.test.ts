// Alerts end to end on each backend: a change fires a rule in its own transaction, the delivery job sends it to a local receiver or SMTP server, retries, disables, digests.
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { SMTPServer } from 'smtp-server';
import type { Alert } from '../../src/alerts/rules/alert-api-schema.js';
import { backends, type mainServiceOn, warnIfNoPostgres, openService, type OpenService } from '../helpers.js';
import { until } from '../wait.js';
import { startReceiver, type Receiver } from './receiver.js';

warnIfNoPostgres();

type Service = Awaited<ReturnType<typeof mainServiceOn>>;

for (const backend of backends()) {
  describe(`alerts end to end on ${backend.name}`, () => {
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

    const inject = (method: string, url: string, payload?: unknown) =>
      service.app.inject({ method: method as 'GET', url, ...(payload === undefined ? {} : { payload: payload as object }) });
    const created = async (url: string, payload: unknown) => {
      const res = await inject('POST', url, payload);
      assert.equal(res.statusCode, 201, res.body);
      return res.json();
    };
    const ntfy = (name: string, topic: string) => created('/channels', { name, config: { kind: 'ntfy', server_url: `${receiver.base}/`, topic } });
    const alertsOf = async (query: string) => (await inject('GET', `/alerts?${query}`)).json() as Alert[];

    test('a price drop fires the rule once: the channel gets the message, GET /alerts has the product, rule, values before and after, and the delivery', async () => {
      const channel = await ntfy('phone', 'drops-4f2a');
      const product = await created('/products', { title: 'Espresso machine', price: 250, currency: 'EUR', availability: 'in_stock' });
      const rule = await created('/alert-rules', {
        name: 'Espresso under 200',
        scope: { type: 'product', product_id: product.id },
        condition: { type: 'price_at_or_below', target: 200 },
        cooldown_minutes: 60,
        digest: 'immediate',
        channel_ids: [channel.id],
        enabled: true,
      });
      assert.equal((await inject('PATCH', `/products/${product.id}`, { price: 180 })).statusCode, 200);
      const message = await until('the ntfy message', () => receiver.received.find((r) => r.body.topic === 'drops-4f2a'));
      assert.equal(message.path, '/');
      assert.match(String(message.body.title), /Price alert: .*Espresso machine/);
      assert.match(String(message.body.message), /at or below the target/);
      assert.equal(message.body.click, `https://prices.example/ui/products/${product.id}`);

      const [alert] = await until('the delivery recorded as succeeded', async () => {
        const list = await alertsOf(`rule_id=${rule.id}`);
        return list[0]?.deliveries?.[0]?.status === 'succeeded' ? list : undefined;
      });
      assert.equal(alert!.product.id, product.id);
      assert.equal(alert!.product.title, 'Espresso machine');
      assert.deepEqual(alert!.rule, { id: rule.id, name: 'Espresso under 200', condition: 'price_at_or_below' });
      assert.equal(alert!.before?.price, 250);
      assert.equal(alert!.after?.price, 180);
      assert.equal(alert!.event.type, 'price.changed');
      assert.equal(alert!.deliveries[0]!.channel_id, channel.id);
      assert.equal(alert!.deliveries[0]!.attempts, 1);
      assert.equal(alert!.deliveries[0]!.response_status, 200);

      // The same price again is no change; a further drop within the cool-down fires nothing.
      assert.equal((await inject('PATCH', `/products/${product.id}`, { price: 180 })).statusCode, 200);
      assert.equal((await inject('PATCH', `/products/${product.id}`, { price: 170 })).statusCode, 200);
      // The feed shows a change once no older transaction of the database is still open (another test
      // file shares the database): wait for it rather than read once.
      await until('both price changes in the feed', async () => (await inject('GET', `/events?product_id=${product.id}&type=price.changed`)).json().length === 2);
      assert.equal((await alertsOf(`rule_id=${rule.id}`)).length, 1, 'one alert: the second change met the cool-down');
      assert.equal(receiver.received.filter((r) => r.body.topic === 'drops-4f2a').length, 1);
    });

    test('no alert for a rolled-back change; the same change committed fires', async () => {
      const channel = await ntfy('rollback', 'rollback-7c1d');
      await created('/alert-rules', {
        name: 'Any price change of the rollback shop',
        scope: { type: 'source', source: 'https://rollback.example/list' },
        condition: { type: 'price_changed' },
        cooldown_minutes: 0,
        channel_ids: [channel.id],
      });
      const { db, recorder } = service.context;
      const item = (price: number) => ({
        scrape_key: 'https://rollback.example/p/1',
        title: 'Grinder',
        price,
        currency: 'EUR',
        description: null,
        source_url: 'https://rollback.example/p/1',
      });
      const run = (id: string) => ({ id, source: 'https://rollback.example/list', kind: 'scrape' as const });
      await db.transaction((tx) => recorder.recordScraped([item(90)], run('r1'), tx));
      await assert.rejects(
        db.transaction(async (tx) => {
          const stored = await recorder.recordScraped([item(80)], run('r2'), tx);
          assert.equal(stored.events.length, 1, 'the change was seen inside the transaction');
          throw new Error('the run failed after storing');
        }),
        /the run failed after storing/,
      );
      const firings = async () =>
        (await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM alert_firings WHERE firing->>'rule_name' = 'Any price change of the rollback shop'`))[0]!.n;
      const deliveries = async () => (await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM alert_deliveries WHERE channel_id = $1`, [channel.id]))[0]!.n;
      assert.equal(await firings(), 0, 'no firing survived the rollback');
      assert.equal(await deliveries(), 0, 'no delivery either');
      const queued = await db.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM ${service.config.jobs.queueSchema}.job WHERE name = 'alert-delivery' AND data->>'delivery_id' IS NOT NULL AND created_on > now() - interval '1 hour'`,
      );
      const before = queued[0]!.n;
      const committed = await db.transaction((tx) => recorder.recordScraped([item(80)], run('r3'), tx));
      assert.equal(await firings(), 1, 'the committed change fired');
      // The same event judged again (another process, a retried job): its dedupe key keeps the one firing.
      const again = await db.transaction((tx) => service.context.alerts.evaluator.evaluate(committed.events, tx));
      assert.deepEqual(again, [], 'nothing new was written');
      assert.equal(await firings(), 1);
      await until('its message', () => receiver.received.find((r) => r.body.topic === 'rollback-7c1d'));
      const after = (
        await db.query<{ n: number }>(
          `SELECT count(*)::int AS n FROM ${service.config.jobs.queueSchema}.job WHERE name = 'alert-delivery' AND created_on > now() - interval '1 hour'`,
        )
      )[0]!.n;
      assert.equal(after, before + 1, 'exactly one delivery was ever queued for it');
    });

    test('a failing channel is retried on its schedule, then disabled with its reason; GET /channels shows it', async () => {
      const failing = await startReceiver();
      opened.own(failing);
      failing.answer = { status: 503, body: 'upstream busy' };
      const channel = await created('/channels', { name: 'broken', config: { kind: 'gotify', server_url: `${failing.base}/gotify`, token: 'AgotifyS3cretTok' } });
      const product = await created('/products', { title: 'Kettle', price: 40, currency: 'EUR', availability: 'out_of_stock' });
      await created('/alert-rules', {
        name: 'Kettle back',
        scope: { type: 'product', product_id: product.id },
        condition: { type: 'back_in_stock' },
        cooldown_minutes: 0,
        channel_ids: [channel.id],
      });
      await inject('PATCH', `/products/${product.id}`, { availability: 'in_stock' });
      const disabled = await until('the channel disabled', async () => {
        const shown = (await inject('GET', `/channels/${channel.id}`)).json();
        return shown.enabled === false ? shown : undefined;
      });
      assert.equal(failing.received.length, 3, 'the first attempt and two retries (ALERT_RETRY_DELAYS_MS=50,50)');
      assert.match(disabled.disabled_reason, /failed 3 times.*HTTP 503/);
      assert.doesNotMatch(JSON.stringify(disabled), /AgotifyS3cretTok/);
      const listed = (await inject('GET', '/channels')).json().find((c: { id: string }) => c.id === channel.id);
      assert.equal(listed.disabled_reason, disabled.disabled_reason);
      const [alert] = await alertsOf(`product_id=${product.id}`);
      assert.equal(alert!.deliveries[0]!.status, 'failed');
      assert.equal(alert!.deliveries[0]!.attempts, 3);
      assert.equal(alert!.deliveries[0]!.response_status, 503);
      // A later firing for a disabled channel is recorded as skipped, with why; enabling it clears the reason.
      await inject('PATCH', `/products/${product.id}`, { availability: 'out_of_stock' });
      await inject('PATCH', `/products/${product.id}`, { availability: 'in_stock' });
      const [latest] = await until('the second alert', async () => {
        const list = await alertsOf(`product_id=${product.id}`);
        return list.length === 2 ? list : undefined;
      });
      assert.equal(latest!.deliveries[0]!.status, 'skipped');
      assert.match(latest!.deliveries[0]!.error ?? '', /The channel is disabled: Delivery failed 3 times/);
      const enabled = (await inject('PATCH', `/channels/${channel.id}`, { enabled: true })).json();
      assert.equal(enabled.enabled, true);
      assert.equal(enabled.disabled_reason, null);
    });

    test('a 4xx is final: the channel is disabled after one attempt', async () => {
      const gone = await startReceiver();
      opened.own(gone);
      gone.answer = { status: 404, body: 'channel_not_found' };
      const channel = await created('/channels', { name: 'archived slack', config: { kind: 'slack', webhook_url: `${gone.base}/services/T0/B0/Zx9SecretSlackToken0123` } });
      const product = await created('/products', { title: 'Scale', price: 20, currency: 'EUR' });
      await created('/alert-rules', { name: 'Scale changes', scope: { type: 'product', product_id: product.id }, condition: { type: 'price_changed' }, channel_ids: [channel.id] });
      await inject('PATCH', `/products/${product.id}`, { price: 19 });
      const disabled = await until('the channel disabled', async () => {
        const shown = (await inject('GET', `/channels/${channel.id}`)).json();
        return shown.enabled === false ? shown : undefined;
      });
      assert.equal(gone.received.length, 1);
      assert.match(disabled.disabled_reason, /will not succeed by trying again: Slack answered HTTP 404/);
      assert.doesNotMatch(disabled.disabled_reason, /Zx9SecretSlackToken0123/);
    });

    test("e-mail: the SMTP server in the test receives the alert through the service's own client, with the chart", async () => {
      const mails: Array<{ raw: string; to: string[]; user: unknown }> = [];
      const smtp = new SMTPServer({
        logger: false,
        disabledCommands: ['STARTTLS'],
        allowInsecureAuth: true,
        onAuth(auth, _session, callback) {
          if (auth.username === 'alerts' && auth.password === 'smtp-Pa55word!') callback(null, { user: auth.username });
          else callback(new Error('Invalid credentials'));
        },
        onData(stream, session, callback) {
          const chunks: Buffer[] = [];
          stream.on('data', (c: Buffer) => chunks.push(c));
          stream.on('end', () => {
            mails.push({ raw: Buffer.concat(chunks).toString('utf8'), to: session.envelope.rcptTo.map((r) => r.address), user: session.user });
            callback();
          });
        },
      });
      await new Promise<void>((resolve) => smtp.listen(0, '127.0.0.1', resolve));
      opened.onClose(() => new Promise<void>((resolve) => smtp.close(() => resolve())));
      const port = (smtp.server.address() as AddressInfo).port;
      const channel = await created('/channels', {
        name: 'mail',
        config: { kind: 'email', host: '127.0.0.1', port, security: 'none', username: 'alerts', password: 'smtp-Pa55word!', from: 'alerts@prices.test', to: ['me@home.test'] },
      });
      assert.equal(channel.config.password, '***');
      const product = await created('/products', { title: 'Milk frother', price: 60, currency: 'EUR' });
      await inject('PATCH', `/products/${product.id}`, { price: 55 });
      await created('/alert-rules', {
        name: 'Frother drop',
        scope: { type: 'product', product_id: product.id },
        condition: { type: 'price_drop', baseline: 'previous', min_percent: 10 },
        channel_ids: [channel.id],
      });
      await inject('PATCH', `/products/${product.id}`, { price: 45 });
      const mail = await until('the mail', () => mails[0]);
      assert.deepEqual(mail.to, ['me@home.test']);
      assert.equal(mail.user, 'alerts', 'the login was used');
      // Quoted-printable, its soft line breaks joined: the text as it was written.
      const raw = mail.raw.replace(/=\r\n/g, '');
      assert.match(raw, /Subject: =\?UTF-8\?Q\?Price_drop=3A_=E2=81=A8Milk_frother/, 'the subject, MIME-encoded');
      assert.match(mail.raw, /multipart\/alternative/);
      assert.match(mail.raw, /Content-Type: image\/png/);
      assert.match(mail.raw, /Content-ID: <price-chart@alerts>/);
      assert.match(raw, new RegExp(`https://prices.example/ui/products/${product.id}`));
      assert.match(raw, /dropped by =E2=82=AC10\.00 \(18\.2 %\)/);
    });

    test('a daily digest: firings wait for their period, then go out as one message, once', async () => {
      const channel = await ntfy('digest', 'digest-9e3b');
      const product = await created('/products', { title: 'Teapot', price: 30, currency: 'EUR' });
      const rule = await created('/alert-rules', {
        name: 'Teapot, daily',
        scope: { type: 'product', product_id: product.id },
        condition: { type: 'price_changed' },
        cooldown_minutes: 0,
        digest: 'daily',
        channel_ids: [channel.id],
      });
      await inject('PATCH', `/products/${product.id}`, { price: 28 });
      await inject('PATCH', `/products/${product.id}`, { price: 25 });
      const waiting = await alertsOf(`rule_id=${rule.id}`);
      assert.equal(waiting.length, 2);
      assert.deepEqual(
        waiting.map((a) => a.deliveries.length),
        [0, 0],
        'nothing sent before the period ends',
      );
      const { digests } = service.context.alerts;
      assert.equal(await digests.sendDue(new Date()), 0, 'not due yet');
      const tomorrow = new Date(Date.now() + 86_400_000 + 60_000);
      assert.equal(await digests.sendDue(tomorrow), 1, 'one digest for the rule and day');
      assert.equal(await digests.sendDue(tomorrow), 0, 'and only one');
      const message = await until('the digest message', () => receiver.received.find((r) => r.body.topic === 'digest-9e3b'));
      assert.match(String(message.body.title), /Daily digest: 2 alerts/);
      const sent = await until('both alerts showing the digest delivery', async () => {
        const list = await alertsOf(`rule_id=${rule.id}`);
        return list.every((a) => a.deliveries[0]?.status === 'succeeded') ? list : undefined;
      });
      assert.equal(sent[0]!.deliveries[0]!.digest, true);
      assert.equal(sent[0]!.deliveries[0]!.id, sent[1]!.deliveries[0]!.id, 'one delivery for both');
    });

    test('a rule scoped to a tag: a scrape job with tags tags its products, and their changes fire', async () => {
      const channel = await ntfy('tagged', 'tagged-5a7c');
      await created('/alert-rules', { name: 'Watch list', scope: { type: 'tag', tag: 'My Watch List ' }, condition: { type: 'price_changed' }, channel_ids: [channel.id] });
      const { db, recorder } = service.context;
      const item = (price: number) => ({
        scrape_key: 'https://tagged.example/p/9',
        title: 'Moka pot',
        price,
        currency: 'EUR',
        description: null,
        source_url: 'https://tagged.example/p/9',
      });
      const run = (id: string, tags: string[]) => ({ id, source: 'https://tagged.example/', kind: 'scrape' as const, tags });
      await db.transaction((tx) => recorder.recordScraped([item(35)], run('t1', ['my watch list']), tx));
      const [product] = (await inject('GET', '/products?tag=MY%20WATCH%20LIST')).json();
      assert.equal(product.title, 'Moka pot');
      await db.transaction((tx) => recorder.recordScraped([item(32)], run('t2', []), tx));
      const message = await until('the message', () => receiver.received.find((r) => r.body.topic === 'tagged-5a7c'));
      assert.match(String(message.body.message), /35\.00.*32\.00/s);
    });
  });
}
