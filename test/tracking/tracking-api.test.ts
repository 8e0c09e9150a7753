// Tracking end to end: a shop whose prices and stock change between scheduled runs -> history, events, exports, webhooks, live streams.
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { Webhook as Verifier } from 'standardwebhooks';
import type { Database } from '../../src/db/database.js';
import type { App } from '../../src/http/base-app.js';
import type { HistoryPoint, StoredEvent } from '../../src/tracking/tracking-store.js';
import { startFixtureSite } from '../fixtures/site.js';
import { assertProblem, backends, mainServiceOn, warnIfNoPostgres, openService, type OpenService } from '../helpers.js';
import { until } from '../wait.js';

warnIfNoPostgres();

interface Item {
  sku: string;
  name: string;
  price: number;
  list_price?: number;
  stock: 'InStock' | 'OutOfStock';
}

/** A small shop on loopback: one listing page stating its products in JSON-LD, changed by the test between runs. */
async function startShop() {
  const state = { items: [] as Item[], status: 200 };
  const server = createServer((req, res) => {
    if (req.url !== '/shop/') return void res.writeHead(404).end();
    if (state.status !== 200) return void res.writeHead(state.status, { 'content-type': 'text/plain' }).end('down for maintenance');
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const list = state.items.map((item, i) => ({
      '@type': 'ListItem',
      position: i + 1,
      item: {
        '@type': 'Product',
        name: item.name,
        sku: item.sku,
        url: `${base}/shop/p/${item.sku}`,
        offers: {
          '@type': 'Offer',
          price: item.price.toFixed(2),
          priceCurrency: 'GBP',
          availability: `https://schema.org/${item.stock}`,
          ...(item.list_price === undefined
            ? {}
            : { priceSpecification: { '@type': 'UnitPriceSpecification', priceType: 'https://schema.org/ListPrice', price: item.list_price } }),
        },
      },
    }));
    const ld = JSON.stringify({ '@context': 'https://schema.org', '@type': 'ItemList', itemListElement: list });
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    res.end(`<!doctype html><html><head><title>Lamps</title><script type="application/ld+json">${ld}</script></head>
      <body><h1>Lamps</h1><ul>${state.items.map((i) => `<li><a href="/shop/p/${i.sku}">${i.name}</a></li>`).join('')}</ul></body></html>`);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { state, url: `${origin}/shop/`, source: `${origin}/shop`, close: () => closeServer(server) };
}

function closeServer(server: Server): Promise<void> {
  server.closeAllConnections();
  return new Promise((resolve) => server.close(() => resolve()));
}

/** A webhook receiver that answers with the statuses in `plan` in turn (the last one ever after); `hang` never answers. */
async function startReceiver(plan: Array<number | 'hang'>) {
  const received: Array<{ headers: IncomingMessage['headers']; body: string; answered: number | 'hang' }> = [];
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => (body += chunk));
    req.on('end', () => {
      const answer = plan[Math.min(received.length, plan.length - 1)]!;
      received.push({ headers: req.headers, body, answered: answer });
      if (answer !== 'hang') res.writeHead(answer).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { received, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`, close: () => closeServer(server) };
}

type EventBody = StoredEvent;

const ENV = {
  SCRAPE_ALLOW_PRIVATE_NETWORKS: 'true',
  SCRAPE_OBEY_ROBOTS: 'false',
  GONE_AFTER_RUNS: '3',
  WEBHOOK_RETRY_DELAYS_MS: '200,400',
  // Long enough for a loaded machine to answer; the silent receiver's test waits three of these.
  WEBHOOK_TIMEOUT_MS: '3000',
  WORKER_CONCURRENCY: '4',
};

for (const backend of backends()) {
  describe(`tracking on ${backend.name}`, () => {
    let shop: Awaited<ReturnType<typeof startShop>>;
    let app: App;
    let db: Database;
    let scheduleId: string;
    let opened: OpenService;
    const ids: Record<string, number> = {};
    let startedAt: string;

    before(async () => {
      shop = await startShop();
      const service = (opened = await openService(backend, ENV, { work: true, queueTiming: { retryDelaySeconds: 1 } }));
      opened.own(shop);
      db = opened.db;
      app = service.app;
      const schedule = await app.inject({ method: 'POST', url: '/schedules', payload: { name: 'lamps daily', cron: '0 6 * * *', job: { url: shop.url } } });
      assert.equal(schedule.statusCode, 201, schedule.body);
      scheduleId = schedule.json().id;
    });
    after(() => opened.close());

    /** One run of the schedule, as its calendar would start it; answers the ended job. */
    const scheduledRun = async (): Promise<{ id: string; status: string; log_ids: string[] }> => {
      const started = await app.inject({ method: 'POST', url: `/schedules/${scheduleId}/run` });
      assert.equal(started.statusCode, 202, started.body);
      const jobId = started.json().id as string;
      return until(`job ${jobId}`, async () => {
        const job = (await app.inject({ url: `/jobs/${jobId}` })).json();
        return ['succeeded', 'failed', 'cancelled'].includes(job.status) ? job : undefined;
      });
    };
    const events = async (query = ''): Promise<EventBody[]> => {
      const res = await app.inject({ url: `/events${query}` });
      assert.equal(res.statusCode, 200, res.body);
      return res.json();
    };
    const observations = async (): Promise<number> => Number((await db.query<{ n: number }>('SELECT count(*)::int AS n FROM price_observations'))[0]!.n);
    const product = async (id: number) => (await app.inject({ url: `/products/${id}` })).json();

    test('the first scheduled run creates the products: one product.created each, one history point each', async () => {
      startedAt = new Date().toISOString();
      shop.state.items = [
        { sku: 'A-1', name: 'Arc lamp', price: 20, stock: 'InStock' },
        { sku: 'B-2', name: 'Bell lamp', price: 10, stock: 'OutOfStock' },
        { sku: 'C-3', name: 'Cone lamp', price: 5, stock: 'InStock' },
      ];
      const job = await scheduledRun();
      assert.equal(job.status, 'succeeded');
      const created = await events('?type=product.created');
      assert.equal(created.length, 3);
      for (const event of created) {
        assert.equal(event.source, shop.source, 'the source in canonical form');
        assert.ok(event.run_id, 'names the run');
        ids[(event.data as { price: number }).price === 20 ? 'A' : (event.data as { price: number }).price === 10 ? 'B' : 'C'] = event.product_id!;
      }
      assert.deepEqual(created.find((e) => e.product_id === ids.B)!.data, { price: 10, currency: 'GBP', list_price: null, availability: 'out_of_stock', via: 'scrape' });
      assert.equal(await observations(), 3);
      const a = await product(ids.A!);
      assert.ok(a.last_seen_at);
      assert.equal(a.gone_at, null);
    });

    test('a run that sees the same values adds no observation and no event; it only moves last_seen_at', async () => {
      const before = await product(ids.A!);
      const lastEvent = (await events()).at(-1)!.id;
      const job = await scheduledRun();
      assert.equal(job.status, 'succeeded');
      assert.equal(await observations(), 3, 'no new observation rows');
      assert.deepEqual(await events(`?after=${lastEvent}`), []);
      const now = await product(ids.A!);
      assert.ok(now.last_seen_at > before.last_seen_at, `${now.last_seen_at} > ${before.last_seen_at}`);
      const history = (await app.inject({ url: `/products/${ids.A}/history` })).json();
      assert.equal(history.points.length, 1);
      assert.equal(history.points[0].last_seen_at, now.last_seen_at);
      // A scrape job's run is its scrape log (a crawl's is the job itself).
      assert.equal(history.points[0].last_run, job.log_ids.at(-1));
    });

    test('a price drop and a restock become price.changed (old, new, change, percent) and availability.changed (back in stock)', async () => {
      const lastEvent = (await events()).at(-1)!.id;
      shop.state.items = [
        { sku: 'A-1', name: 'Arc lamp', price: 15, list_price: 20, stock: 'InStock' },
        { sku: 'B-2', name: 'Bell lamp', price: 10, stock: 'InStock' },
      ];
      const job = await scheduledRun();
      assert.equal(job.status, 'succeeded');
      const fresh = await events(`?after=${lastEvent}`);
      assert.deepEqual(
        fresh.map((e) => [e.type, e.product_id]),
        [
          ['price.changed', ids.A],
          ['availability.changed', ids.B],
        ],
      );
      assert.deepEqual(fresh[0]!.data, { old: 20, new: 15, currency: 'GBP', change: -5, change_percent: -25, list_price: 20, via: 'scrape' });
      assert.deepEqual(fresh[1]!.data, { old: 'out_of_stock', new: 'in_stock', back_in_stock: true, via: 'scrape' });
      assert.equal(fresh[0]!.run_id, job.log_ids.at(-1));
      assert.equal(await observations(), 5);
    });

    test('the history of a product: its states with first and last sightings and runs, a summary, paging, CSV', async () => {
      const res = await app.inject({ url: `/products/${ids.A}/history` });
      assert.equal(res.statusCode, 200);
      const history = res.json();
      assert.equal(history.product_id, ids.A);
      assert.deepEqual(
        history.points.map((p: { price: number; list_price: number | null; source: string }) => [p.price, p.list_price, p.source]),
        [
          [20, null, 'scrape'],
          [15, 20, 'scrape'],
        ],
      );
      const [first, second] = history.points;
      assert.ok(first.first_seen_at < first.last_seen_at, 'seen by two runs');
      assert.ok(first.last_seen_at < second.first_seen_at);
      assert.notEqual(first.first_run, first.last_run);
      assert.deepEqual({ ...history.summary }, { points: 2, lowest: 15, highest: 20, first_seen_at: first.first_seen_at, last_change_at: second.first_seen_at });
      const paged = (await app.inject({ url: `/products/${ids.A}/history?limit=1&offset=1` })).json();
      assert.deepEqual(paged.points, [second]);
      assert.equal(paged.summary.points, 2, 'the summary covers the range, not the page');
      const ranged = (await app.inject({ url: `/products/${ids.A}/history?from=${encodeURIComponent(second.first_seen_at)}` })).json();
      assert.deepEqual(ranged.points, [second]);
      assert.equal(ranged.summary.lowest, 15);

      const csv = await app.inject({ url: `/products/${ids.A}/history`, headers: { accept: 'text/csv' } });
      assert.equal(csv.statusCode, 200);
      assert.match(String(csv.headers['content-type']), /^text\/csv/);
      const lines = csv.body.trimEnd().split('\r\n');
      assert.equal(lines[0], 'first_seen_at,last_seen_at,price,currency,list_price,availability,first_run,last_run,source');
      assert.equal(lines.length, 3);
      assert.ok(lines[2]!.startsWith(`${second.first_seen_at},`) && lines[2]!.includes(',15,GBP,20,in_stock,'), lines[2]);

      assertProblem(await app.inject({ url: '/products/999999/history' }), 404);
      assertProblem(await app.inject({ url: `/products/${ids.A}/history?from=yesterday` }), 422);
    });

    test('GET /products filters a shopper asks for: price_dropped_since, changed_since, availability; CSV and NDJSON exports', async () => {
      const since = encodeURIComponent(startedAt);
      const dropped = (await app.inject({ url: `/products?price_dropped_since=${since}` })).json();
      assert.deepEqual(
        dropped.map((p: { id: number }) => p.id),
        [ids.A],
      );
      const changed = (await app.inject({ url: `/products?changed_since=${since}` })).json();
      assert.deepEqual(changed.map((p: { id: number }) => p.id).sort(), [ids.A, ids.B].sort());
      const future = encodeURIComponent(new Date(Date.now() + 60_000).toISOString());
      assert.deepEqual((await app.inject({ url: `/products?changed_since=${future}` })).json(), []);
      const inStock = (await app.inject({ url: '/products?availability=in_stock' })).json();
      assert.deepEqual(inStock.map((p: { id: number }) => p.id).sort(), [ids.A, ids.B, ids.C].sort());
      assertProblem(await app.inject({ url: '/products?availability=maybe' }), 422);
      // The shop's products by the URL its runs started from, spelled either way; by currency.
      for (const source of [shop.url, shop.source]) {
        const fromShop = (await app.inject({ url: `/products?source=${encodeURIComponent(source)}` })).json();
        assert.deepEqual(fromShop.map((p: { id: number }) => p.id).sort(), [ids.A, ids.B, ids.C].sort());
      }
      assert.equal((await app.inject({ url: '/products?currency=EUR' })).json().length, 0);
      assert.equal((await app.inject({ url: '/products?currency=GBP' })).json().length, 3);
      assertProblem(await app.inject({ url: '/products?currency=pounds' }), 422);

      // A title a spreadsheet would run as a formula is exported as text.
      const made = await app.inject({
        method: 'POST',
        url: '/products',
        payload: { title: '=HYPERLINK("http://x.test","click")', price: 1.5, description: 'line one\nline "two", three' },
      });
      assert.equal(made.statusCode, 201);
      const csv = await app.inject({ url: '/products?sort=id', headers: { accept: 'text/csv' } });
      assert.match(String(csv.headers['content-type']), /^text\/csv/);
      assert.equal(csv.headers['x-total-count'], '4');
      const lines = csv.body.split('\r\n');
      assert.equal(lines[0], 'id,title,price,currency,description,source_url,list_price,availability,sku,gtin,brand,image_url,created_at,updated_at');
      assert.ok(csv.body.includes(`${made.json().id},"'=HYPERLINK(""http://x.test"",""click"")",1.5,,"line one\nline ""two"", three",`), csv.body);
      const ndjson = await app.inject({ url: '/products?availability=in_stock', headers: { accept: 'application/x-ndjson' } });
      assert.match(String(ndjson.headers['content-type']), /^application\/x-ndjson/);
      const rows = ndjson.body
        .trimEnd()
        .split('\n')
        .map((line) => JSON.parse(line));
      assert.deepEqual(rows.map((p: { id: number }) => p.id).sort(), [ids.A, ids.B, ids.C].sort());
      await app.inject({ method: 'DELETE', url: `/products/${made.json().id}` });
    });

    test('product.gone after 3 successful runs without the product; a failed run in between counts for nothing', async () => {
      // C is missing since the last run: one miss. A run that fails (the shop is down) is no evidence.
      shop.state.status = 503;
      const failed = await scheduledRun();
      assert.equal(failed.status, 'failed');
      shop.state.status = 200;
      assert.equal((await product(ids.C!)).gone_at, null);
      assert.equal((await db.query<{ missed_runs: number }>('SELECT missed_runs FROM products WHERE id = $1', [ids.C]))[0]!.missed_runs, 1);
      assert.equal((await scheduledRun()).status, 'succeeded'); // miss 2
      assert.deepEqual(await events('?type=product.gone'), []);
      const third = await scheduledRun(); // miss 3: gone
      const gone = await events('?type=product.gone');
      assert.equal(gone.length, 1);
      assert.equal(gone[0]!.product_id, ids.C);
      assert.equal(gone[0]!.run_id, third.log_ids.at(-1));
      assert.deepEqual(gone[0]!.data, { missed_runs: 3, source_url: `${shop.url.replace('/shop/', '/shop/p/C-3')}` });
      assert.ok((await product(ids.C!)).gone_at);
      await scheduledRun(); // still missing: no second event
      assert.equal((await events('?type=product.gone')).length, 1);
      // Found again: no longer gone.
      shop.state.items.push({ sku: 'C-3', name: 'Cone lamp', price: 5, stock: 'InStock' });
      await scheduledRun();
      assert.equal((await product(ids.C!)).gone_at, null);
    });

    test('a run cut short by max_pages saw only part of its source: it makes nothing gone', async () => {
      const site = await startFixtureSite({ catalogue: { pages: 3, perPage: 5 } });
      try {
        const url = `${site.url}books/`;
        const full = await app.inject({ method: 'POST', url: '/scrape', payload: { url, max_pages: 10 } });
        assert.equal(full.json().count, 15, full.body);
        for (let run = 0; run < 4; run++) {
          const partial = await app.inject({ method: 'POST', url: '/scrape', payload: { url, max_pages: 1 } });
          assert.equal(partial.json().count, 5);
        }
        const source = encodeURIComponent(url);
        assert.deepEqual(await events(`?type=product.gone&source=${source}`), []);
        const missed = await db.query<{ n: number }>('SELECT count(*)::int AS n FROM products WHERE source_key = $1 AND missed_runs > 0', [url.replace(/\/$/, '')]);
        assert.equal(missed[0]!.n, 0);
      } finally {
        await site.close();
      }
    });

    test('a price set through the API is history and an event too', async () => {
      const made = await app.inject({ method: 'POST', url: '/products', payload: { title: 'Desk lamp', price: 30, currency: 'EUR' } });
      const id = made.json().id as number;
      await app.inject({ method: 'PATCH', url: `/products/${id}`, payload: { description: 'no history for this' } });
      await app.inject({ method: 'PATCH', url: `/products/${id}`, payload: { price: 24 } });
      const history = (await app.inject({ url: `/products/${id}/history` })).json();
      assert.deepEqual(
        history.points.map((p: { price: number; source: string; first_run: string | null }) => [p.price, p.source, p.first_run]),
        [
          [30, 'api', null],
          [24, 'api', null],
        ],
      );
      const mine = await events(`?product_id=${id}`);
      assert.deepEqual(
        mine.map((e) => [e.type, e.data.via]),
        [
          ['product.created', 'api'],
          ['price.changed', 'api'],
        ],
      );
      assert.equal(mine[1]!.data.change_percent, -20);
    });

    test('GET /events: oldest first, filtered by type, product, source and time, paged by cursor with Link; CSV and NDJSON', async () => {
      const all = await events('?limit=1000');
      assert.ok(all.length >= 8);
      assert.deepEqual(
        all.map((e) => e.id),
        [...all.map((e) => e.id)].sort((a, b) => a - b),
      );
      const page1 = await app.inject({ url: '/events?limit=3' });
      const link = String(page1.headers.link);
      assert.match(link, /^<\/events\?limit=3&after=\d+>; rel="next"$/);
      const next = await app.inject({ url: link.slice(1, link.indexOf('>')) });
      assert.deepEqual(
        [...page1.json(), ...next.json()].map((e: EventBody) => e.id),
        all.slice(0, 6).map((e) => e.id),
      );
      const bySource = await events(`?source=${encodeURIComponent(shop.url)}&limit=1000`);
      assert.ok(bySource.length > 0 && bySource.every((e) => e.source === shop.source));
      const both = await events('?type=price.changed,availability.changed&limit=1000');
      assert.ok(both.length >= 3 && both.every((e) => e.type === 'price.changed' || e.type === 'availability.changed'));
      assert.deepEqual(await events(`?since=${encodeURIComponent(new Date(Date.now() + 60_000).toISOString())}`), []);
      // Newest first for a feed, paged with `before`.
      const newest = await app.inject({ url: '/events?order=desc&limit=2' });
      assert.deepEqual(
        newest.json().map((e: EventBody) => e.id),
        all
          .slice(-2)
          .reverse()
          .map((e) => e.id),
      );
      const before = String(newest.headers.link);
      assert.match(before, /before=\d+/);
      const older = (await app.inject({ url: before.slice(1, before.indexOf('>')) })).json();
      assert.deepEqual(
        older.map((e: EventBody) => e.id),
        all
          .slice(-4, -2)
          .reverse()
          .map((e) => e.id),
      );
      assertProblem(await app.inject({ url: '/events?type=price.exploded' }), 422);
      assertProblem(await app.inject({ url: '/events?after=-1' }), 422);

      const csv = await app.inject({ url: '/events?type=price.changed', headers: { accept: 'text/csv' } });
      assert.match(String(csv.headers['content-type']), /^text\/csv/);
      const lines = csv.body.trimEnd().split('\r\n');
      assert.equal(lines[0], 'id,type,product_id,article_id,source,run_id,created_at,data');
      assert.equal(lines.length, 1 + all.filter((e) => e.type === 'price.changed').length);
      const nd = await app.inject({ url: `/events?after=${all[1]!.id}&limit=2`, headers: { accept: 'application/x-ndjson' } });
      assert.deepEqual(
        nd.body
          .trimEnd()
          .split('\n')
          .map((l) => JSON.parse(l)),
        all.slice(2, 4),
      );
    });

    test('events and products commit together: a run that fails while writing its events leaves neither', async () => {
      // The database refuses one event mid-transaction, after the products were written.
      await db.exec(`
        CREATE FUNCTION refuse_event() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
          IF NEW.data->>'new' = '13.13' THEN RAISE EXCEPTION 'refused by the test'; END IF;
          RETURN NEW;
        END $$;
        CREATE TRIGGER refuse_event BEFORE INSERT ON events FOR EACH ROW EXECUTE FUNCTION refuse_event();`);
      try {
        const before = { a: await product(ids.A!), b: await product(ids.B!), events: (await events('?limit=1000')).length, observations: await observations() };
        shop.state.items = [
          { sku: 'A-1', name: 'Arc lamp', price: 13.13, stock: 'InStock' },
          { sku: 'B-2', name: 'Bell lamp', price: 11, stock: 'OutOfStock' },
          { sku: 'D-4', name: 'Dome lamp', price: 40, stock: 'InStock' },
        ];
        const res = await app.inject({ method: 'POST', url: '/scrape', payload: { url: shop.url } });
        assert.equal(res.statusCode, 500, res.body);
        assert.equal((await product(ids.A!)).price, before.a.price, 'A unchanged');
        assert.equal((await product(ids.B!)).availability, before.b.availability, 'B unchanged');
        assert.equal((await app.inject({ url: '/products?q=Dome' })).json().length, 0, 'D not created');
        assert.equal((await events('?limit=1000')).length, before.events, 'no events');
        assert.equal(await observations(), before.observations, 'no observations');
        const logs = (await app.inject({ url: '/scrape-logs?limit=1' })).json();
        assert.equal(logs[0].status, 'failed', 'the failed scrape still leaves its log');
      } finally {
        await db.exec('DROP TRIGGER refuse_event ON events; DROP FUNCTION refuse_event();');
      }
    });

    test('webhooks: a receiver failing twice gets three signed attempts (same webhook-id), one success, all recorded; redelivery', async () => {
      const flaky = await startReceiver([500, 503, 204]);
      opened.own(flaky);
      const made = await app.inject({ method: 'POST', url: '/webhooks', payload: { url: flaky.url, events: ['price.changed'], filter: { product_ids: [ids.A] } } });
      assert.equal(made.statusCode, 201, made.body);
      const hook = made.json();
      assert.match(hook.secret, /^whsec_[A-Za-z0-9+/]{43}=$/);
      assert.equal(made.headers.location, `/webhooks/${hook.id}`);
      assert.equal((await app.inject({ url: `/webhooks/${hook.id}` })).json().secret, undefined, 'the secret is shown once');

      // B changes too, but the filter names A only.
      await app.inject({ method: 'PATCH', url: `/products/${ids.B}`, payload: { price: 9 } });
      await app.inject({ method: 'PATCH', url: `/products/${ids.A}`, payload: { price: 12 } });
      const deliveries = await until('three attempts', async () => {
        const list = (await app.inject({ url: `/webhooks/${hook.id}/deliveries` })).json();
        return list.length >= 3 ? list : undefined;
      });
      assert.deepEqual(
        deliveries.map((d: { attempt: number; status: string; response_status: number }) => [d.attempt, d.status, d.response_status]),
        [
          [3, 'succeeded', 204],
          [2, 'failed', 503],
          [1, 'failed', 500],
        ],
      );
      assert.ok(deliveries[2].next_attempt_at && deliveries[1].next_attempt_at && deliveries[0].next_attempt_at === null);
      assert.equal(flaky.received.length, 3);
      const verifier = new Verifier(hook.secret);
      const ids3 = new Set(flaky.received.map((r) => r.headers['webhook-id']));
      assert.equal(ids3.size, 1, 'one webhook-id for every attempt');
      for (const { headers, body } of flaky.received) {
        const payload = verifier.verify(body, headers as Record<string, string>) as { type: string; data: Record<string, unknown> };
        assert.equal(payload.type, 'price.changed');
        assert.equal(payload.data.product_id, ids.A);
        assert.equal(payload.data.new, 12);
        assert.equal((payload.data.product as { title: string }).title, 'Arc lamp');
      }
      assert.throws(() => new Verifier(`whsec_${Buffer.alloc(32, 1).toString('base64')}`).verify(flaky.received[0]!.body, flaky.received[0]!.headers as Record<string, string>));

      const redo = await app.inject({ method: 'POST', url: `/webhooks/${hook.id}/deliveries/${deliveries[0].id}/redeliver` });
      assert.equal(redo.statusCode, 202, redo.body);
      await until('the redelivery', async () => (flaky.received.length === 4 ? true : undefined));
      assert.equal(flaky.received[3]!.headers['webhook-id'], flaky.received[0]!.headers['webhook-id']);
      assertProblem(await app.inject({ method: 'POST', url: `/webhooks/${hook.id}/deliveries/00000000-0000-4000-8000-000000000000/redeliver` }), 404);
      await app.inject({ method: 'DELETE', url: `/webhooks/${hook.id}` });
    });

    test('webhooks: a receiver that never answers is disabled after the last attempt, with the reason; PATCH enables it again', async () => {
      const silent = await startReceiver(['hang']);
      opened.own(silent);
      const hook = (
        await app.inject({ method: 'POST', url: '/webhooks', payload: { url: silent.url, events: ['*'], secret: `whsec_${Buffer.alloc(24, 7).toString('base64')}` } })
      ).json();
      await app.inject({ method: 'PATCH', url: `/products/${ids.B}`, payload: { availability: 'out_of_stock' } });
      const disabled = await until('the webhook disabled', async () => {
        const now = (await app.inject({ url: `/webhooks/${hook.id}` })).json();
        return now.enabled ? undefined : now;
      });
      assert.match(disabled.disabled_reason, /could not be delivered in 3 attempts.*no answer within 3000 ms/);
      const attempts = (await app.inject({ url: `/webhooks/${hook.id}/deliveries` })).json();
      assert.equal(attempts.length, 3);
      assert.ok(attempts.every((d: { status: string; response_status: null }) => d.status === 'failed' && d.response_status === null));
      assertProblem(await app.inject({ method: 'POST', url: `/webhooks/${hook.id}/deliveries/${attempts[0].id}/redeliver` }), 409);
      const enabled = (await app.inject({ method: 'PATCH', url: `/webhooks/${hook.id}`, payload: { enabled: true } })).json();
      assert.equal(enabled.enabled, true);
      assert.equal(enabled.disabled_reason, null);
      await app.inject({ method: 'DELETE', url: `/webhooks/${hook.id}` });
      assertProblem(await app.inject({ url: `/webhooks/${hook.id}` }), 404);
    });

    test('a product made through the API has the same first state and product.created event whether a webhook wants it (a transaction that queues the delivery) or not (one statement)', async () => {
      const receiver = await startReceiver([204]);
      opened.own(receiver);
      const make = async (title: string) => {
        const source = `https://shop.example/p/${title.replace(/ /g, '-')}`;
        const res = await app.inject({ method: 'POST', url: '/products', payload: { title, price: 12.5, currency: 'EUR', availability: 'in_stock', source_url: source } });
        assert.equal(res.statusCode, 201, res.body);
        const id = res.json().id as number;
        const mine = await events(`?product_id=${id}`);
        const points = (await app.inject({ url: `/products/${id}/history` })).json().points;
        return { id, source, mine, points: points.map((p: HistoryPoint) => [p.price, p.currency, p.list_price, p.availability, p.source, p.first_run]) };
      };
      const quiet = await make('Quiet lamp');
      const hook = (await app.inject({ method: 'POST', url: '/webhooks', payload: { url: receiver.url, events: ['product.created'] } })).json();
      const heard = await make('Heard lamp');
      for (const made of [quiet, heard]) {
        assert.deepEqual(made.points, [[12.5, 'EUR', null, 'in_stock', 'api', null]]);
        assert.deepEqual(
          made.mine.map((e) => [e.type, e.product_id, e.source, e.run_id, e.data]),
          [['product.created', made.id, made.source, null, { price: 12.5, currency: 'EUR', list_price: null, availability: 'in_stock', via: 'api' }]],
        );
      }
      assert.ok(heard.mine[0]!.id > quiet.mine[0]!.id);
      await until('the delivery', async () => (receiver.received.length > 0 ? true : undefined));
      const delivered = (JSON.parse(receiver.received[0]!.body) as { data: { product_id: number } }).data.product_id;
      assert.equal(delivered, heard.id, 'the product made while the webhook listened is delivered');
      await app.inject({ method: 'DELETE', url: `/webhooks/${hook.id}` });
    });

    test('webhooks: bad subscriptions are 422 with the field; private targets need SCRAPE_ALLOW_PRIVATE_NETWORKS', async () => {
      const bad: Array<[unknown, string]> = [
        [{ url: 'ftp://example.com/', events: ['*'] }, '/body/url'],
        [{ url: 'https://example.com/', events: [] }, '/body/events'],
        [{ url: 'https://example.com/', events: ['price.exploded'] }, '/body/events/0'],
        [{ url: 'https://example.com/', events: ['*'], secret: 'hunter2' }, '/body/secret'],
        [{ url: 'https://example.com/', events: ['*'], filter: { product_ids: [0] } }, '/body/filter/product_ids/0'],
      ];
      for (const [payload, path] of bad) {
        const problem = assertProblem(await app.inject({ method: 'POST', url: '/webhooks', payload: payload as object }), 422);
        assert.ok(
          problem.errors.some((e: { path: string }) => e.path.startsWith(path)),
          JSON.stringify(problem.errors),
        );
      }
      const guarded = await mainServiceOn(db, { after: (fn) => opened.onClose(fn) }, { ...ENV, SCRAPE_ALLOW_PRIVATE_NETWORKS: 'false' });
      for (const url of ['http://127.0.0.1:9/hook', 'http://10.0.0.8/hook', 'http://[::1]/hook', 'http://169.254.169.254/latest']) {
        assertProblem(await guarded.app.inject({ method: 'POST', url: '/webhooks', payload: { url, events: ['*'] } }), 422);
      }
    });

    test('GET /events/stream: disconnect, changes, reconnect with Last-Event-ID: every event once, in order; writes of other processes arrive too', async () => {
      await app.listen({ port: 0, host: '127.0.0.1' });
      const base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
      const seen: Array<{ id: string; event: string; data: EventBody }> = [];
      /**
       * Opens the stream; the answer's headers come once the stream's starting cursor is fixed, so
       * every event written after `open` resolves is sent. `events(count)` reads until `count` more
       * events arrived, then hangs up.
       */
      const open = async (headers: Record<string, string>, query = '') => {
        const controller = new AbortController();
        const res = await fetch(`${base}/events/stream${query}`, { headers, signal: controller.signal });
        assert.equal(res.status, 200);
        assert.match(String(res.headers.get('content-type')), /^text\/event-stream/);
        return { events: (count: number) => readEvents(res, controller, count) };
      };
      const readEvents = async (res: Response, controller: AbortController, count: number) => {
        const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
        let buffer = '';
        const target = seen.length + count;
        while (seen.length < target) {
          const { value, done } = await reader.read();
          if (done) break;
          buffer += value;
          let at: number;
          while ((at = buffer.indexOf('\n\n')) !== -1) {
            const block = buffer.slice(0, at);
            buffer = buffer.slice(at + 2);
            const fields = Object.fromEntries(
              block
                .split('\n')
                .filter((l) => /^(id|event|data):/.test(l))
                .map((l) => [l.slice(0, l.indexOf(':')), l.slice(l.indexOf(':') + 1).trim()]),
            );
            if (fields.data !== undefined) seen.push({ id: fields.id!, event: fields.event!, data: JSON.parse(fields.data) });
          }
        }
        controller.abort();
      };
      const read = async (headers: Record<string, string>, count: number, query = '') => (await open(headers, query)).events(count);
      const change = (id: number, price: number) => app.inject({ method: 'PATCH', url: `/products/${id}`, payload: { price } });

      const newest = (await events('?limit=1000')).at(-1)!.id;
      // Live: connected first (no cursor: only new events), then two changes.
      const live = (await open({})).events(2);
      await change(ids.A!, 11);
      await change(ids.B!, 8);
      await live;
      // Away: three changes, one written by another process's store (no in-process signal, found by polling).
      await change(ids.A!, 10.5);
      await change(ids.B!, 7.5);
      const other = await mainServiceOn(db, { after: (fn) => opened.onClose(fn) }, ENV);
      await other.app.inject({ method: 'PATCH', url: `/products/${ids.C}`, payload: { price: 4 } });
      // Back, resuming from the last id received.
      const resumed = (await open({ 'last-event-id': seen.at(-1)!.id })).events(4);
      await other.app.inject({ method: 'PATCH', url: `/products/${ids.C}`, payload: { price: 3.5 } });
      await resumed;
      const expected = (await events(`?after=${newest}&limit=1000`)).map((e) => String(e.id));
      assert.deepEqual(
        seen.map((s) => s.id),
        expected,
        'every event once, in order',
      );
      assert.deepEqual(
        seen.map((s) => s.event),
        seen.map((s) => s.data.type),
        'the SSE event name is the type',
      );
      assert.deepEqual(
        seen.map((s) => s.data.product_id),
        [ids.A, ids.B, ids.A, ids.B, ids.C, ids.C],
      );

      // Filters apply to the stream as to the list; `after` starts a first connection at a cursor.
      seen.length = 0;
      await read({}, 2, `?product_id=${ids.C}&after=${newest}`);
      assert.deepEqual(
        seen.map((s) => s.data.product_id),
        [ids.C, ids.C],
      );
      assertProblem(await app.inject({ url: '/events/stream', headers: { 'last-event-id': 'abc' } }), 422);
    });

    test("every history point ends no earlier than it began, also a scraped product's state set later through the API", async () => {
      for (const id of [ids.A, ids.B, ids.C]) {
        const { points } = (await app.inject({ url: `/products/${id}/history?limit=1000` })).json();
        for (const point of points) assert.ok(point.last_seen_at >= point.first_seen_at, JSON.stringify(point));
        const current = points.at(-1);
        assert.equal(current.source, 'api', 'the last change of each was through the API');
        assert.equal(current.last_run, null);
      }
    });

    test('deleting a product keeps its events (product_id null) and drops its history', async () => {
      const made = (await app.inject({ method: 'POST', url: '/products', payload: { title: 'Short-lived lamp', price: 3 } })).json();
      const [created] = await events(`?product_id=${made.id}`);
      await app.inject({ method: 'DELETE', url: `/products/${made.id}` });
      const kept = (await events(`?after=${created!.id - 1}&limit=1`))[0]!;
      assert.equal(kept.id, created!.id);
      assert.equal(kept.product_id, null);
      assertProblem(await app.inject({ url: `/products/${made.id}/history` }), 404);
      const history = await db.query<{ n: number }>('SELECT count(*)::int AS n FROM price_observations WHERE product_id = $1', [made.id]);
      assert.equal(history[0]!.n, 0, 'its history rows are gone with it');
    });

    test('a statement deleting several products drops the history and unlinks the events of each, and no other', async () => {
      const make = async (title: string) => (await app.inject({ method: 'POST', url: '/products', payload: { title, price: 4 } })).json<{ id: number }>().id;
      const [gone1, gone2, kept] = [await make('Gone lamp 1'), await make('Gone lamp 2'), await make('Kept lamp')];
      await db.query('DELETE FROM products WHERE id = ANY($1::int[])', [[gone1, gone2]]);
      const rows = await db.query<{ product_id: number; observations: number; events: number }>(
        `SELECT p.id AS product_id,
                (SELECT count(*)::int FROM price_observations o WHERE o.product_id = p.id) AS observations,
                (SELECT count(*)::int FROM events e WHERE e.product_id = p.id) AS events
           FROM unnest($1::int[]) AS p (id) ORDER BY p.id`,
        [[gone1, gone2, kept]],
      );
      assert.deepEqual(rows, [
        { product_id: gone1, observations: 0, events: 0 },
        { product_id: gone2, observations: 0, events: 0 },
        { product_id: kept, observations: 1, events: 1 },
      ]);
    });
  });
}
