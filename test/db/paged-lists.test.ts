// Every paged list says how long it is, on any page: X-Total-Count past the end is the list's length, not 0.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Database } from '../../src/db/database.js';
import { pagedList } from '../../src/db/paged-list.js';
import type { App } from '../../src/http/base-app.js';
import { backends, warnIfNoPostgres, openService, type OpenService } from '../helpers.js';

warnIfNoPostgres();

for (const backend of backends()) {
  describe(`paged lists on ${backend.name}`, () => {
    let app: App;
    let db: Database;
    let opened: OpenService;

    before(async () => {
      app = (opened = await openService(backend, { SCRAPE_ALLOW_PRIVATE_NETWORKS: 'true' })).app;
      db = opened.db;
    });
    after(() => opened.close());

    const send = async (method: 'POST' | 'PUT', url: string, payload: object) => {
      const res = await app.inject({ method, url, payload });
      assert.ok(res.statusCode < 300, `${method} ${url}: ${res.body}`);
      return res.json();
    };

    test('each list answers its length on a page past its end, and an empty page', async () => {
      const product = await send('POST', '/products', { title: 'Desk lamp', price: 30 });
      await send('PUT', `/products/${product.id}/tags`, { tags: ['office'] });
      await send('PUT', '/source-tags', { source: 'https://shop.example/lamps/', tags: ['office'] });
      await send('POST', '/site-rules', { host_pattern: 'shop.example', page_type: 'listing' });
      const channel = await send('POST', '/channels', { name: 'phone', config: { kind: 'ntfy', server_url: 'https://ntfy.example/', topic: 'lamps' } });
      await send('POST', '/alert-rules', { name: 'cheap', scope: { type: 'all' }, condition: { type: 'price_changed' }, channel_ids: [channel.id] });
      await send('POST', '/webhooks', { url: 'https://hooks.example/in', events: ['*'] });
      await send('POST', '/schedules', { every_minutes: 60, paused: true, job: { url: 'https://shop.example/lamps/' } });
      await send('POST', '/jobs', { url: 'https://shop.example/lamps/' });

      for (const list of ['/products', '/tags', '/source-tags', '/site-rules', '/channels', '/alert-rules', '/webhooks', '/schedules', '/jobs']) {
        const first = await app.inject({ url: `${list}?limit=1` });
        assert.equal(first.statusCode, 200, `${list}: ${first.body}`);
        assert.equal(first.headers['x-total-count'], '1', `${list} on its first page`);
        const past = await app.inject({ url: `${list}?limit=1&offset=5` });
        assert.equal(past.statusCode, 200, `${list}: ${past.body}`);
        assert.deepEqual(past.json(), [], `${list} past its end`);
        assert.equal(past.headers['x-total-count'], '1', `${list} past its end still counts its one item`);
      }
    });

    test('pagedList counts groups past the end too, and says 0 for an empty list', async () => {
      await db.exec('CREATE TABLE paged_probe (k text, v int)');
      await db.query("INSERT INTO paged_probe VALUES ('a', 1), ('a', 2), ('b', 3)");
      const grouped = { columns: 'k, sum(v)::int AS v', from: 'FROM paged_probe GROUP BY k', orderBy: 'k', limit: 1 };
      assert.deepEqual(await pagedList(db, { ...grouped, offset: 0 }), { items: [{ k: 'a', v: 3 }], total: 2 });
      assert.deepEqual(await pagedList(db, { ...grouped, offset: 9 }), { items: [], total: 2 });
      const filtered = { columns: 'k', from: 'FROM paged_probe WHERE v > $1', params: [5], orderBy: 'k', limit: 1 };
      assert.deepEqual(await pagedList(db, { ...filtered, offset: 0 }), { items: [], total: 0 });
      assert.deepEqual(await pagedList(db, { ...filtered, offset: 3 }), { items: [], total: 0 });
    });
  });
}
