// The LogStore contract, run against every backend: JSONB on PGlite and PostgreSQL, and MongoDB when TEST_MONGODB_URL is set.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test as nodeTest } from 'node:test';
import type { ScrapeLog } from '../../src/scrape-logs/log-schema.js';
import type { LogStore } from '../../src/scrape-logs/log-store.js';
import { createJsonbLogStore } from '../../src/scrape-logs/jsonb-log-store.js';
import { createMongoLogStore } from '../../src/scrape-logs/mongo-log-store.js';
import { backends, warnIfNoPostgres } from '../helpers.js';

warnIfNoPostgres();

interface LogBackend {
  name: string;
  /** Why this backend's suite is skipped (the runner counts and shows it), or false. */
  skip: string | false;
  open(): Promise<{ store: LogStore; close(): Promise<void> }>;
}

const logBackends: LogBackend[] = backends().map((backend) => ({
  name: `jsonb on ${backend.name}`,
  skip: false,
  async open() {
    const db = await backend.open();
    return { store: createJsonbLogStore(db), close: () => db.close() };
  },
}));

// No MongoDB server runs here: its suite is reported as skipped unless TEST_MONGODB_URL names one.
const mongoUrl = process.env.TEST_MONGODB_URL;
logBackends.push({
  name: 'mongodb',
  skip: mongoUrl === undefined || mongoUrl === '' ? 'set TEST_MONGODB_URL to run the contract against a MongoDB server' : false,
  async open() {
    // A collection of its own per run, so runs never see each other's documents.
    const collection = `scrape_logs_test_${randomUUID().slice(0, 8)}`;
    const store = createMongoLogStore(mongoUrl!, { collection });
    return { store, close: () => store.close() };
  },
});

let clock = Date.parse('2026-01-01T00:00:00Z');
function log(fields: Partial<ScrapeLog> = {}): ScrapeLog {
  clock += 1_000;
  const started = new Date(clock).toISOString();
  return {
    id: randomUUID(),
    source_url: 'https://shop.example/list',
    mode: 'static',
    status: 'succeeded',
    count: 1,
    products: [{ title: 'Lamp', price_text: '£12.50', price: 12.5, currency: 'GBP', url: 'https://shop.example/lamp' }],
    pages: 1,
    started_at: started,
    finished_at: new Date(clock + 250).toISOString(),
    duration_ms: 250,
    ...fields,
  };
}

for (const backend of logBackends) {
  describe(`log store (${backend.name})`, () => {
    let store: LogStore;
    let close: () => Promise<void> = async () => undefined;
    // Skipped test by test, so the runner counts each in its summary.
    const test = (name: string, fn: () => Promise<void>) => nodeTest(name, { skip: backend.skip }, fn);
    before(async () => {
      if (backend.skip !== false) return;
      ({ store, close } = await backend.open());
      await store.init();
    });
    after(async () => {
      await close();
    });

    test('init is idempotent and ping answers', async () => {
      assert.equal(typeof (await store.init()), 'string');
      await store.ping();
    });

    test('a document comes back as written, extra fields included', async () => {
      const written = log({ extractor: 'json-ld', custom: { nested: [1, 'two', null] } } as Partial<ScrapeLog>);
      await store.insert(written);
      assert.deepEqual(await store.get(written.id), written);
      assert.equal(await store.get(randomUUID()), undefined);
    });

    test('a failed run keeps its error', async () => {
      const failed = log({
        status: 'failed',
        count: 0,
        products: [],
        error: { type: 'urn:data-aggregator:problem:upstream-failed', status: 502, detail: 'status 500' },
      });
      await store.insert(failed);
      assert.deepEqual((await store.get(failed.id))?.error, failed.error);
    });

    test('the same id cannot be written twice', async () => {
      const once = log();
      await store.insert(once);
      await assert.rejects(store.insert({ ...once, count: 99 }));
      assert.equal((await store.get(once.id))?.count, 1);
    });

    test('list is newest first, filters by status and source_url, pages and counts', async () => {
      const source = `https://list.example/${randomUUID()}`;
      const written = [log({ source_url: source }), log({ source_url: source, status: 'failed', count: 0, products: [] }), log({ source_url: source })];
      for (const doc of written) await store.insert(doc);
      const all = await store.list({ limit: 50, offset: 0, source_url: source });
      assert.equal(all.total, 3);
      assert.deepEqual(
        all.items.map((d) => d.id),
        [written[2]!.id, written[1]!.id, written[0]!.id],
      );
      const failed = await store.list({ limit: 50, offset: 0, source_url: source, status: 'failed' });
      assert.deepEqual([failed.total, failed.items[0]?.id], [1, written[1]!.id]);
      const page = await store.list({ limit: 1, offset: 1, source_url: source });
      assert.deepEqual([page.total, page.items.map((d) => d.id)], [3, [written[1]!.id]]);
      const everything = await store.list({ limit: 500, offset: 0 });
      const times = everything.items.map((d) => d.started_at);
      assert.deepEqual(times, [...times].sort().reverse());
    });

    test('URL passwords are stored masked, deep in the document too; the document given is left as it was', async () => {
      const secret = 'https://ann:s3cret@shop.example/list';
      const written = log({ source_url: secret, products: [{ title: 'Lamp', url: secret }], pages: 1 } as Partial<ScrapeLog>);
      const given = structuredClone(written);
      await store.insert(written);
      const stored = await store.get(written.id);
      assert.equal(stored?.source_url, 'https://ann:***@shop.example/list');
      assert.equal((stored?.products as Array<{ url: string }> | undefined)?.[0]?.url, 'https://ann:***@shop.example/list');
      assert.ok(!JSON.stringify(stored).includes('s3cret'));
      assert.deepEqual(written, given);
    });

    if (backend.name.startsWith('jsonb')) {
      test('NUL and unpaired surrogates, which JSONB refuses, are stored as U+FFFD; pairs stay', async () => {
        const written = log({ source_url: 'https://shop.example/a\u0000b', products: [{ title: 'x\ud800y \udc00 😀', note: ['\u0000'] }] } as unknown as Partial<ScrapeLog>);
        await store.insert(written);
        const stored = await store.get(written.id);
        assert.equal(stored?.source_url, 'https://shop.example/a\ufffdb');
        assert.deepEqual(stored?.products, [{ title: 'x\ufffdy \ufffd 😀', note: ['\ufffd'] }]);
        const [listed] = (await store.list({ limit: 1, offset: 0, source_url: 'https://shop.example/a\ufffdb' })).items;
        assert.equal(listed?.id, written.id);
      });
    }
  });
}
