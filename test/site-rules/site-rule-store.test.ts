// The rule for a host as the page pipeline asks for it: read once a second per host, not once a page,
// and a change made through the store seen at once; one made by another process once its second is up.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Database } from '../../src/db/queryable.js';
import { createSiteRuleStore, type SiteRuleInput } from '../../src/site-rules/site-rule-store.js';
import { backends, warnIfNoPostgres } from '../helpers.js';
import { until } from '../wait.js';

warnIfNoPostgres();

const rule = (pattern: string, selector: string): SiteRuleInput => ({ host_pattern: pattern, fields: { price: { selector } }, page_type: null, note: null });

/** The database, counting the statements that read site_rules. */
function counting(db: Database): { db: Database; reads: () => number } {
  let reads = 0;
  const counted: Database = {
    backend: db.backend,
    query: (sql, params, options) => {
      if (/^\s*SELECT\b[\s\S]*\bFROM site_rules\b/.test(sql)) reads += 1;
      return db.query(sql, params, options);
    },
    exec: (sql) => db.exec(sql),
    transaction: (fn) => db.transaction(fn),
    close: () => db.close(),
  };
  return { db: counted, reads: () => reads };
}

for (const backend of backends()) {
  describe(`site rule lookup on ${backend.name}`, () => {
    let db: Database;
    before(async () => {
      db = await backend.open();
    });
    after(async () => {
      await db.close();
    });

    test('pages of one host in the same second read its rule once; every host its own', async () => {
      const { db: counted, reads } = counting(db);
      const store = createSiteRuleStore(counted);
      await store.create(rule('*.once.example', '.price'));
      const answers = await Promise.all(Array.from({ length: 10 }, () => store.forHost('www.once.example')));
      for (let n = 0; n < 40; n += 1) answers.push(await store.forHost('www.once.example'));
      assert.ok(answers.every((found) => found?.host_pattern === '*.once.example'));
      // The ten at once share one read, the forty after them reuse it. A stall of a second between two
      // of them would add one read: the bound allows that, not a read per page.
      assert.ok(reads() <= 2, `${reads()} reads for 50 pages of one host`);
      const before = reads();
      assert.equal(await store.forHost('other.example'), undefined);
      assert.equal(reads(), before + 1, 'another host is read apart');
    });

    test('a rule created, changed or deleted through the store applies to the next page at once', async () => {
      const store = createSiteRuleStore(db);
      const host = 'shop.at-once.example';
      assert.equal(await store.forHost(host), undefined);
      const created = await store.create(rule('*.at-once.example', '.a'));
      assert.deepEqual((await store.forHost(host))?.fields, { price: { selector: '.a' } });
      await store.update(created.id, rule('*.at-once.example', '.b'));
      assert.deepEqual((await store.forHost(host))?.fields, { price: { selector: '.b' } });
      const own = await store.create(rule(host, '.own'));
      assert.equal((await store.forHost(host))?.id, own.id, "the host's own rule wins over the pattern above it");
      await store.delete(own.id);
      await store.delete(created.id);
      assert.equal(await store.forHost(host), undefined);
    });

    test("another process's change is seen once that process's second is up", async () => {
      const worker = createSiteRuleStore(db);
      const api = createSiteRuleStore(db);
      const host = 'shop.elsewhere.example';
      assert.equal(await worker.forHost(host), undefined);
      const created = await api.create(rule('*.elsewhere.example', '.price'));
      await until('the worker to read the new rule', async () => (await worker.forHost(host))?.id === created.id);
      await api.delete(created.id);
      await until('the worker to see it deleted', async () => (await worker.forHost(host)) === undefined);
    });
  });
}
