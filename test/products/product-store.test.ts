// The product store contract, run against every relational backend.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Database } from '../../src/db/database.js';
import { migrate } from '../../src/db/migrate.js';
import { migrations } from '../../src/db/migrations/index.js';
import { Product } from '../../src/products/product-schema.js';
import { likePattern, searchCondition } from '../../src/products/product-search.js';
import { JSON_PART_ROWS } from '../../src/products/product-list-sql.js';
import { createProductStore, type ProductStore } from '../../src/products/product-store.js';
import { type ScrapedProduct, UPSERT_BATCH, type UpsertResult } from '../../src/products/product-upsert.js';
import { backends, warnIfNoPostgres } from '../helpers.js';
import { until } from '../wait.js';

warnIfNoPostgres();

for (const backend of backends()) {
  describe(`product store on ${backend.name}`, () => {
    let db: Database;
    let store: ProductStore;
    let upsert: (items: ScrapedProduct[]) => Promise<UpsertResult>;
    before(async () => {
      db = await backend.open();
      store = createProductStore(db);
      upsert = (items) => db.transaction((tx) => store.upsertScraped(items, { runId: null, source: null }, tx));
    });
    after(async () => {
      await db.close();
    });
    /** A product with this title (and description), priced 1; its id. */
    const make = async (title: string, description: string | null = null) => (await store.create({ title, price: 1, description })).id;

    test('create returns the stored product with id and timestamps', async () => {
      const p = await store.create({ title: 'Alpha', price: 19.99, description: 'first', currency: 'GBP' });
      assert.ok(Number.isInteger(p.id) && p.id > 0);
      assert.equal(p.title, 'Alpha');
      assert.equal(p.price, 19.99);
      assert.equal(p.currency, 'GBP');
      assert.equal(p.source_url, null);
      assert.ok(!Number.isNaN(new Date(p.created_at).getTime()));
    });

    test('prices round-trip exactly through NUMERIC', async () => {
      for (const price of [0, 0.1, 0.2, 19.99, 1234567.89, 999999999999.99, 0.3333333333333333]) {
        const p = await store.create({ title: `price ${price}`, price });
        assert.equal(p.price, price);
        assert.equal((await store.get(p.id))?.price, price);
      }
      const [row] = await db.query<{ s: string }>("SELECT (price + 0.2)::text AS s FROM products WHERE title = 'price 0.1'");
      assert.equal(row?.s, '0.3', 'stored as an exact decimal, so 0.1 + 0.2 is 0.3');
    });

    test('get of a missing id is undefined; delete reports whether it deleted', async () => {
      assert.equal(await store.get(2_000_000_000), undefined);
      const p = await store.create({ title: 'Doomed', price: 1 });
      assert.equal(await store.delete(p.id), true);
      assert.equal(await store.delete(p.id), false);
      assert.equal(await store.get(p.id), undefined);
    });

    test('update changes only the given fields and bumps updated_at', async () => {
      const p = await store.create({ title: 'Beta', price: 5, description: 'keep me' });
      // Timestamps are kept to the millisecond: the update must fall in a later one.
      await until('the clock to pass the creation time', () => Date.now() > Date.parse(p.updated_at) + 1);
      const u = await store.update(p.id, { price: 6.5 });
      assert.equal(u?.price, 6.5);
      assert.equal(u?.title, 'Beta');
      assert.equal(u?.description, 'keep me');
      assert.ok(new Date(u!.updated_at).getTime() > new Date(p.updated_at).getTime());
      const cleared = await store.update(p.id, { description: null });
      assert.equal(cleared?.description, null);
      assert.equal(await store.update(2_000_000_000, { title: 'x' }), undefined);
    });

    test('strings are stored verbatim, SQL metacharacters included', async () => {
      const title = "Robert'); DROP TABLE products;-- %_\\ 日本語 😀";
      const p = await store.create({ title, price: 1 });
      assert.equal((await store.get(p.id))?.title, title);
      const found = await store.list({ q: "'); DROP" });
      assert.deepEqual(
        found.items.map((i) => i.id),
        [p.id],
      );
      assert.equal((await store.list({ q: '%_\\' })).total, 1, 'LIKE wildcards in q are literal');
    });

    test('list filters, sorts, pages and counts', async () => {
      const src = 'https://shop.example/list';
      for (const [title, price] of [
        ['Gamma lamp', 30],
        ['delta LAMP', 10],
        ['Epsilon chair', 20],
      ] as const) {
        await upsert([{ scrape_key: `${src}#${title}`, title, price, currency: 'USD', description: null, source_url: src }]);
      }
      const bySource = await store.list({ source_url: src, sort: 'price' });
      assert.deepEqual(
        bySource.items.map((i) => i.price),
        [10, 20, 30],
      );
      assert.equal(bySource.total, 3);
      const lamps = await store.list({ q: 'lamp', sort: '-price' });
      assert.deepEqual(
        lamps.items.map((i) => i.title),
        ['Gamma lamp', 'delta LAMP'],
      );
      const mid = await store.list({ source_url: src, min_price: 15, max_price: 25 });
      assert.deepEqual(
        mid.items.map((i) => i.title),
        ['Epsilon chair'],
      );
      const page = await store.list({ source_url: src, sort: 'title', limit: 1, offset: 1 });
      assert.equal(page.items.length, 1);
      assert.equal(page.total, 3);
      const all = await store.list({});
      const ids = all.items.map((i) => i.id);
      assert.deepEqual(
        ids,
        [...ids].sort((a, b) => a - b),
        'id ascending by default',
      );
      assert.equal(all.total, all.items.length);
    });

    test('upsertScraped inserts, then updates by scrape key, in one statement', async () => {
      const items = [1, 2, 3].map((n) => ({
        scrape_key: `https://books.example/b${n}`,
        title: `Book ${n}`,
        price: n + 0.99,
        currency: 'GBP',
        description: null,
        source_url: `https://books.example/b${n}`,
      }));
      const first = await upsert(items);
      assert.deepEqual([first.created, first.updated, first.products.length], [3, 0, 3]);
      const second = await upsert([...items.map((i) => ({ ...i, price: 9.5 })), items[0]!]);
      assert.deepEqual([second.created, second.updated], [0, 3], 'a key seen twice in one batch counts once');
      assert.deepEqual(second.products.map((p) => p.id).sort(), first.products.map((p) => p.id).sort());
      assert.equal((await store.get(first.products[1]!.id))?.price, 9.5);
      assert.deepEqual(await upsert([]), { products: [], created: 0, updated: 0, sightings: [] });
    });

    test('a run of 5,000 products is stored a statement of UPSERT_BATCH rows at a time, the event loop turning in between; one transaction still', async () => {
      const items = Array.from({ length: 5_000 }, (_, n) => ({
        scrape_key: `https://bulk.example/p${n}`,
        title: `Bulk ${n}`,
        price: 1 + n / 100,
        currency: 'EUR',
        description: null,
        source_url: `https://bulk.example/p${n}`,
      }));
      // Counts the event loop's turns while the run is written (PGlite runs each statement on this thread).
      let turns = 0;
      let writing = true;
      const spin = () => {
        if (!writing) return;
        turns++;
        setImmediate(spin);
      };
      setImmediate(spin);
      const stored = await upsert(items);
      writing = false;
      assert.deepEqual([stored.created, stored.products.length, stored.sightings.length], [5_000, 5_000, 5_000]);
      assert.ok(turns >= Math.ceil(5_000 / UPSERT_BATCH) - 1, `the event loop turned ${turns} times`);
      // A bad row in a later statement undoes the earlier ones too.
      const before = (await store.list({})).total;
      const later = items.map((item, n) => ({ ...item, scrape_key: `https://bulk.example/q${n}`, price: n === 4_000 ? -1 : item.price }));
      await assert.rejects(upsert(later));
      assert.equal((await store.list({})).total, before);
    });

    test('a failing batch stores nothing (one transaction)', async () => {
      const before = (await store.list({})).total;
      await assert.rejects(
        upsert([
          { scrape_key: 'ok-1', title: 'fine', price: 1, currency: null, description: null, source_url: null },
          { scrape_key: 'bad-1', title: 'negative', price: -1, currency: null, description: null, source_url: null },
        ]),
      );
      assert.equal((await store.list({})).total, before);
    });

    test('the running total matches count(*) through inserts, upserts, deletes, rollbacks and truncation', async () => {
      const counted = async () => {
        const [row] = await db.query<{ shards: number; rows: number }>(
          'SELECT (SELECT sum(n) FROM product_count_shards)::int AS shards, (SELECT count(*) FROM products)::int AS rows',
        );
        return row!;
      };
      const agree = async (what: string) => {
        const { shards, rows } = await counted();
        assert.equal(shards, rows, `after ${what}`);
        const page = await store.list({ limit: 1 });
        assert.equal(page.total, rows, `the unfiltered page total after ${what}`);
      };
      await agree('the earlier tests');
      const scraped = (n: number) => ({ scrape_key: `total-${n}`, title: `Total ${n}`, price: n, currency: null, description: null, source_url: null });
      // Concurrent writers (several connections on PostgreSQL).
      await Promise.all([...Array.from({ length: 12 }, (_, n) => store.create({ title: `Counted ${n}`, price: n })), upsert([1, 2, 3, 4].map(scraped))]);
      await agree('concurrent creates and an upsert');
      await upsert([3, 4, 5, 6].map(scraped));
      await agree('an upsert that created two and updated two');
      const victims = await store.list({ q: 'Counted', limit: 5 });
      await Promise.all(victims.items.map((p) => store.delete(p.id)));
      await agree('deletes');
      await assert.rejects(
        db.transaction(async (tx) => {
          await tx.query("INSERT INTO products (title, price) VALUES ('rolled back', 1)");
          throw new Error('roll back');
        }),
      );
      await agree('a rolled-back insert');
      await db.query('DELETE FROM products WHERE price > 100000');
      await agree('a bulk delete');
      await db.query('TRUNCATE products CASCADE');
      await agree('truncation');
    });

    test('listAll walks every sort by keyset in batches, with filters and offset', async () => {
      // Ties on price and title, NULL prices, and more rows than a batch: every keyset branch is used.
      await upsert(
        Array.from({ length: 23 }, (_, n) => ({
          scrape_key: `walk-${n}`,
          title: `Walk ${n % 5}`,
          price: n % 4 === 0 ? null : (n % 3) + 0.5,
          currency: null,
          description: 'walk-set',
          source_url: null,
        })),
      );
      for (const sort of ['id', '-id', 'price', '-price', 'title', '-title', 'created_at', '-created_at'] as const) {
        for (const query of [{ sort }, { sort, q: 'walk-set' }, { sort, q: 'walk-set', offset: 3 }, { sort, min_price: 1 }]) {
          const expected = await store.list(query);
          const walked = await store.listAll(query, 4);
          const seen = [...walked.first];
          for await (const batch of walked.rest ?? []) {
            assert.ok(batch.length > 0 && batch.length <= 4, 'batches are never empty nor larger than asked');
            seen.push(...batch);
          }
          assert.deepEqual(
            seen.map((p) => p.id),
            expected.items.map((p) => p.id),
            `order of ${JSON.stringify(query)}`,
          );
          assert.equal(walked.total, expected.total, `total of ${JSON.stringify(query)}`);
          assert.ok(!seen.some((p) => 'sort_key' in p), 'no internal column leaks');
        }
      }
      const small = await store.listAll({ q: 'Walk 1' }, 100);
      assert.equal(small.rest, undefined, 'a list that fits one batch has no rest');
      assert.equal(small.total, small.first.length);
    });

    test("listJson is the same page as list, as JSON text (in parts) in the schema's key order, for every sort, filter, search and page", async () => {
      const awkward = ['Quote " and backslash \\ tab\t', 'Line\nbreak and \u0001 control', 'Emoji 😀 and é', '</script> angle <b>'];
      await upsert(
        [0, 0.1, 19.99, 1234567.89, 1e15, 0.0000001, 5, null].map((price, n) => ({
          scrape_key: `json-${n}`,
          title: `Json ${awkward[n % awkward.length]} ${n}`,
          price,
          currency: n % 2 === 0 ? 'GBP' : null,
          description: n % 3 === 0 ? null : `json-set ${awkward[(n + 1) % awkward.length]}`,
          source_url: n % 2 === 0 ? `https://shop.example/json/${n}` : null,
          list_price: n === 2 ? 24.99 : null,
          availability: n === 3 ? 'in_stock' : null,
          sku: n === 4 ? 'SKU-4' : null,
        })),
      );
      const queries = [
        ...(['id', '-id', 'price', '-price', 'title', '-title', 'created_at', '-created_at'] as const).map((sort) => ({ sort, limit: 5 })),
        { limit: 3, offset: 2 },
        { limit: 100, offset: 1000 },
        { q: 'json', limit: 4 },
        { q: 'JSON-SET', limit: 10, offset: 1 },
        { q: 'json', sort: '-price' as const, limit: 3 },
        { min_price: 1, max_price: 100, limit: 10 },
        { q: 'no such words anywhere', limit: 10 },
      ];
      for (const query of queries) {
        const [listed, asJson] = [await store.list(query), await store.listJson(query)];
        assert.deepEqual(JSON.parse(`[${asJson.parts.join(',')}]`), listed.items, JSON.stringify(query));
        assert.equal(asJson.total, listed.total, `total of ${JSON.stringify(query)}`);
      }
      const [first] = JSON.parse(`[${(await store.listJson({ limit: 1 })).parts.join(',')}]`) as Array<Record<string, unknown>>;
      assert.deepEqual(Object.keys(first!), Object.keys(Product.properties), "keys in the schema's order");
    });

    test('listJson of a page longer than a part: parts of JSON_PART_ROWS in the page order, for every sort and a search', async () => {
      const n = JSON_PART_ROWS * 2 + 37;
      await db.query(
        `INSERT INTO products (title, price, description)
         SELECT 'Parted ' || (x * 7919 % $1::int), (x * 31 % 97) + 0.5, 'parts-set' FROM generate_series(1, $1::int) AS x`,
        [n],
      );
      for (const query of [
        ...(['id', '-price'] as const).map((sort) => ({ sort, limit: n })),
        ...(['title', '-created_at'] as const).map((sort) => ({ sort, q: 'parts-set', limit: n })),
        { sort: 'price' as const, q: 'parts-set', limit: JSON_PART_ROWS + 1, offset: 5 },
      ]) {
        const [listed, asJson] = [await store.list(query), await store.listJson(query)];
        assert.equal(listed.items.length, query.limit, JSON.stringify(query));
        assert.deepEqual(
          asJson.parts.map((part) => (JSON.parse(`[${part}]`) as unknown[]).length),
          Array.from({ length: Math.ceil(query.limit / JSON_PART_ROWS) }, (_, i) => Math.min(JSON_PART_ROWS, query.limit - i * JSON_PART_ROWS)),
          `parts of ${JSON.stringify(query)}`,
        );
        assert.deepEqual(JSON.parse(`[${asJson.parts.join(',')}]`), listed.items, JSON.stringify(query));
        assert.equal(asJson.total, listed.total, `total of ${JSON.stringify(query)}`);
      }
      // Nothing on a long page: no part, and the total counted all the same.
      for (const query of [
        { q: 'parts-set', limit: n, offset: n },
        { q: 'no such words anywhere', limit: n },
      ]) {
        const asJson = await store.listJson(query);
        assert.deepEqual(asJson.parts, [], JSON.stringify(query));
        assert.equal(asJson.total, (await store.list(query)).total, `total of ${JSON.stringify(query)}`);
      }
    });

    test('q finds substrings of the title or description case-insensitively, accents and LIKE wildcards included', async () => {
      const creme = await make('Crème brûlée set', 'Ramekins for crème brûlée');
      const sale = await make('Teapot 50% off');
      const fifty = await make('Teapot 500 off');
      const snake = await make('snake_case mug');
      const camel = await make('snakeXcase mug');
      const slash = await make('Back\\slash tray');
      const described = await make('Plain box', 'Holds a CRÈME jar');
      const ids = async (q: string) => (await store.list({ q, sort: 'id' })).items.map((p) => p.id);
      for (const q of ['crème', 'CRÈME', 'rÈmE']) assert.deepEqual(await ids(q), [creme, described], q);
      for (const q of ['rème BRÛ', 'crème brûlée']) assert.deepEqual(await ids(q), [creme], q);
      assert.deepEqual(await ids('ÛLÉE SE'), [creme], 'a substring across a space, upper-case accents folded');
      assert.deepEqual(await ids('50%'), [sale], '% is a literal percent sign');
      assert.deepEqual(await ids('e_c'), [snake], '_ is a literal underscore');
      assert.deepEqual(await ids('k\\s'), [slash], 'a backslash is literal');
      assert.deepEqual(await ids('eapot 50'), [sale, fifty], 'shorter than a word, inside words');
      assert.deepEqual(await ids('ug'), [snake, camel], 'two characters: too short for a trigram, still found');
      assert.equal((await store.list({ q: 'snake', limit: 1 })).total, 2);
    });

    test('ranking treats % and _ in q literally: "starts with" and "a word starts with" mean the characters themselves', async () => {
      const inside = await make('Sale:90%_OFF everything');
      const word = await make('Teapot 90%_off');
      // Read as wildcards, "90%_off%" would say this starts with q.
      const lookalike = await make('90 then 90%_OFF');
      const start = await make('90%_off teapots');
      await make('90xyoff no match');
      const page = await store.list({ q: '90%_OFF', limit: 10 });
      assert.deepEqual([page.items.map((p) => p.id), page.total], [[start, word, lookalike, inside], 4]);
    });

    test('q on the stored lower-cased title finds exactly what title ILIKE finds, for case pairs beyond ASCII', async () => {
      const titles = [
        'İSTANBUL lamp',
        'istanbul rug',
        'STRASSE sign',
        'Straße sign',
        'ΣΟΦΙΑ vase',
        'σοφια jar',
        'ǅemal mug',
        'DŽEMAL cup',
        'Ⅻ clock',
        'ⅻ dial',
        'ＦＵＬＬ width',
        'ﬁne print',
      ];
      for (const title of titles) await make(title);
      for (const q of ['i̇stanbul', 'İstanbul', 'ISTANBUL', 'strasse', 'STRAẞE', 'straße', 'σοφια', 'ΣΟΦΊΑ', 'ǆemal', 'Ǆ', 'ⅻ', 'Ⅻ', 'ｆｕｌｌ', 'FINE', 'ﬁ']) {
        const found = (await store.list({ q, sort: 'id' })).items.map((p) => p.id);
        const byIlike = await db.query<{ id: number }>('SELECT id FROM products WHERE title ILIKE $1 OR description ILIKE $1 ORDER BY id', [likePattern(q)]);
        assert.deepEqual(
          found,
          byIlike.map((r) => r.id),
          q,
        );
      }
      await db.query('UPDATE products SET title = $1 WHERE title = $2', ['ISTANBUL ottoman', 'istanbul rug']);
      const renamed = (await store.list({ q: 'OTTOMAN' })).items.map((p) => p.title);
      assert.deepEqual(renamed, ['ISTANBUL ottoman'], 'the stored lower-cased title follows an update');
    });

    test('q without sort ranks: title is q, starts with q, has a word starting with q, holds q, then description only; shorter titles first, then id', async () => {
      // Created out of order, so that id order is not the answer.
      const bulb = await make('Bulb', 'Gives 800 lumen');
      const ultra = await make('Ultralumen bulb');
      const desk = await make('Desk LUMEN');
      const light = await make('lumen desk light');
      const exact = await make('Lumen');
      const desk2 = await make('Desk LUMEN');
      const lumens = await make('Lumens galore');
      const ranked = [exact, lumens, light, desk, desk2, ultra, bulb];
      assert.deepEqual(
        (await store.list({ q: 'lumen' })).items.map((p) => p.id),
        ranked,
      );
      assert.deepEqual(
        (await store.list({ q: 'LUMEN', limit: 3, offset: 2 })).items.map((p) => p.id),
        ranked.slice(2, 5),
      );
      const page = await store.list({ q: 'lumen', limit: 2 });
      assert.deepEqual([page.items.map((p) => p.id), page.total], [ranked.slice(0, 2), 7]);
      assert.deepEqual(
        (await store.list({ q: 'lumen', sort: 'id' })).items.map((p) => p.id),
        [...ranked].sort((a, b) => a - b),
        'an asked sort wins',
      );
      const walked = await store.listAll({ q: 'lumen', offset: 1 }, 2);
      const seen = [...walked.first];
      for await (const batch of walked.rest ?? []) seen.push(...batch);
      assert.deepEqual([seen.map((p) => p.id), walked.total], [ranked.slice(1), 7], 'an unpaged list streams in the same order');
      assert.ok(!seen.some((p) => 'rank' in p || 'total' in p), 'no internal column leaks');
      await store.delete(light);
      const after = await store.list({ q: 'lumen', limit: 10 });
      assert.deepEqual([after.items.map((p) => p.id), after.total], [ranked.filter((id) => id !== light), 6]);
    });

    test('q can use the trigram indexes: with sequential scans ruled out the plan still finds the rows', async () => {
      const plan = await db.transaction(async (tx) => {
        await tx.exec('SET LOCAL enable_seqscan = off');
        const rows = await tx.query<{ 'QUERY PLAN': string }>(`EXPLAIN SELECT id FROM products WHERE ${searchCondition(`'%lumen%'`)}`);
        return rows.map((r) => r['QUERY PLAN']).join('\n');
      });
      assert.match(plan, /products_search_title_trgm_idx/);
      assert.match(plan, /products_description_trgm_idx/);
    });

    test('migrations are idempotent', async () => {
      const report = await migrate(db);
      assert.deepEqual(report.applied, []);
      assert.equal(report.current, migrations.at(-1)!.version);
    });
  });
}
