// Alerts bounded on each backend: many rules cannot break a big scrape, one destination gets each alert once, a hanging destination holds only its own deliveries.
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import type { Alert } from '../../src/alerts/rules/alert-api-schema.js';
import { startFixtureSite, type FixtureSite } from '../fixtures/site.js';
import { assertProblem, backends, type mainServiceOn, warnIfNoPostgres, openService, type OpenService } from '../helpers.js';
import { until } from '../wait.js';
import { startReceiver, type Receiver } from './receiver.js';

warnIfNoPostgres();

type Service = Awaited<ReturnType<typeof mainServiceOn>>;

/** An HTTP server that takes requests and never answers them: a destination that hangs. */
async function startHangingServer(): Promise<{ base: string; seen: () => number; close(): Promise<void> }> {
  let seen = 0;
  const server: Server = createServer(() => {
    seen += 1;
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    seen: () => seen,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

for (const backend of backends()) {
  describe(`alert limits on ${backend.name}`, () => {
    let service: Service;
    let receiver: Receiver;
    let hanging: Awaited<ReturnType<typeof startHangingServer>>;
    let site: FixtureSite;
    let opened: OpenService;

    before(async () => {
      receiver = await startReceiver();
      hanging = await startHangingServer();
      site = await startFixtureSite({ catalogue: { pages: 1, perPage: 500 } });
      service = opened = await openService(
        backend, // Eight worker slots: four alert delivery handlers. A hanging delivery waits out ALERT_TIMEOUT_MS,
        // far longer than any wait below.
        { SCRAPE_ALLOW_PRIVATE_NETWORKS: 'true', SCRAPE_OBEY_ROBOTS: 'false', ALERT_RULES_MAX: '300', ALERT_TIMEOUT_MS: '240000', WORKER_CONCURRENCY: '8' },
        { work: true },
      );
      opened.own(receiver);
      opened.own(hanging);
      opened.own(site);
    });
    after(() => opened.close());

    const inject = (method: string, url: string, payload?: unknown) =>
      service.app.inject({ method: method as 'GET', url, ...(payload === undefined ? {} : { payload: payload as object }) });
    const created = async (url: string, payload: unknown) => {
      const res = await inject('POST', url, payload);
      assert.equal(res.statusCode, 201, res.body);
      return res.json();
    };
    const deleteAll = async (list: string) => {
      for (;;) {
        const page = (await inject('GET', `${list}?limit=100`)).json() as Array<{ id: string }>;
        if (page.length === 0) return;
        for (const item of page) assert.equal((await inject('DELETE', `${list}/${item.id}`)).statusCode, 200);
      }
    };

    test("a delivery is taken back from its worker only after its send's whole deadline (ALERT_TIMEOUT_MS) has passed", async () => {
      const schema = service.config.jobs.queueSchema;
      const [queue] = await service.context.db.query<{ expire_seconds: number }>(`SELECT expire_seconds FROM ${schema}.queue WHERE name = 'alert-delivery'`);
      assert.ok(queue!.expire_seconds >= 240 + 60, `expires after ${queue!.expire_seconds} s`);
    });

    test('300 rules on a tag judge every product of a 500-product scrape: the scrape stores them all; rule 301 is 422 limit-reached', async () => {
      for (let i = 0; i < 300; i++) {
        // Listens to product.created, so every new product meets every rule; none of them fires.
        await created('/alert-rules', { name: `cheap ${i}`, scope: { type: 'tag', tag: 'bulk' }, condition: { type: 'price_at_or_below', target: 0.01 } });
      }
      const refused = assertProblem(await inject('POST', '/alert-rules', { name: 'one more', scope: { type: 'all' }, condition: { type: 'price_changed' } }), 422);
      assert.match(refused.type, /limit-reached/);
      assert.match(refused.detail, /ALERT_RULES_MAX allows \(300\)/);
      const scraped = await inject('POST', '/scrape', { url: `${site.url}books/`, tags: ['bulk'] });
      assert.equal(scraped.statusCode, 200, scraped.body.slice(0, 500));
      assert.equal(scraped.json().created, 500);
      assert.equal((await inject('GET', '/products?tag=bulk&limit=1')).headers['x-total-count'], '500');
      await deleteAll('/alert-rules');
    });

    test('ten channels to one URL and ten rules: a change reaches that URL once; an eleventh channel to it is 422', async () => {
      const topic = 'same-destination';
      const config = { kind: 'ntfy', server_url: `${receiver.base}/`, topic };
      const channels = [];
      for (let i = 0; i < 10; i++)
        channels.push(await created('/channels', { name: `copy ${i}`, config: { ...config, server_url: i % 2 === 0 ? `${receiver.base}/` : receiver.base } }));
      const eleventh = assertProblem(await inject('POST', '/channels', { name: 'one too many', config }), 422);
      assert.match(eleventh.detail, /ALERT_CHANNELS_PER_TARGET allows \(10\)/);
      const elsewhere = await created('/channels', { name: 'other topic', config: { ...config, topic: 'another-topic' } });
      // Moving a channel onto the full destination is refused as well.
      assertProblem(await inject('PATCH', `/channels/${elsewhere.id}`, { config }), 422);

      const product = await created('/products', { title: 'Kettle', price: 40, currency: 'EUR' });
      for (let i = 0; i < 10; i++) {
        await created('/alert-rules', {
          name: `watch ${i}`,
          scope: { type: 'product', product_id: product.id },
          condition: { type: 'price_changed' },
          channel_ids: channels.map((c) => c.id),
        });
      }
      assert.equal((await inject('PATCH', `/products/${product.id}`, { price: 35 })).statusCode, 200);
      const alerts = await until('ten alerts with every delivery settled', async () => {
        const list = (await inject('GET', `/alerts?product_id=${product.id}&limit=100`)).json() as Alert[];
        const settled = list.length === 10 && list.every((a) => a.deliveries.length === 10 && a.deliveries.every((d) => d.status === 'succeeded' || d.status === 'skipped'));
        return settled ? list : undefined;
      });
      const deliveries = alerts.flatMap((a) => a.deliveries);
      assert.equal(deliveries.filter((d) => d.status === 'succeeded').length, 1);
      const skipped = deliveries.filter((d) => d.status === 'skipped');
      assert.equal(skipped.length, 99);
      assert.ok(
        skipped.every((d) => /Sent once to the same destination, through channel "copy \d"/.test(d.error ?? '')),
        JSON.stringify(skipped[0]),
      );
      assert.equal(receiver.received.filter((r) => r.body.topic === topic).length, 1, 'one POST for one change');
      await deleteAll('/alert-rules');
      await deleteAll('/channels');
    });

    test('a destination that never answers holds at most half the delivery handlers: a healthy channel gets all twelve alerts meanwhile', async () => {
      const healthy = await created('/channels', { name: 'healthy', config: { kind: 'ntfy', server_url: `${receiver.base}/`, topic: 'healthy-topic' } });
      const stuck = await created('/channels', { name: 'stuck', config: { kind: 'ntfy', server_url: `${hanging.base}/`, topic: 'stuck-topic' } });
      await created('/alert-rules', { name: 'every change', scope: { type: 'all' }, condition: { type: 'price_changed' }, channel_ids: [stuck.id, healthy.id] });
      const products = [];
      for (let i = 0; i < 12; i++) products.push(await created('/products', { title: `Lamp ${i}`, price: 20 + i, currency: 'EUR' }));
      for (const product of products) assert.equal((await inject('PATCH', `/products/${product.id}`, { price: product.price - 1 })).statusCode, 200);
      await until('twelve alerts at the healthy channel', () => receiver.received.filter((r) => r.body.topic === 'healthy-topic').length === 12, { withinMs: 90_000 });
      assert.ok(hanging.seen() >= 1 && hanging.seen() <= 2, `the hanging destination held ${hanging.seen()} handlers (of 4)`);
      // Its connections dropped: the deliveries held there fail now instead of waiting out ALERT_TIMEOUT_MS.
      await hanging.close();
    });
  });
}
