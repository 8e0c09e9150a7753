// The rule for a host as the page pipeline asks for it: read once a second per host, not once a page,
// and a change made through the store seen at once; one made by another process once its second is up.
// The second is counted on a clock the test moves by hand, so what is checked is the bound, not the machine's speed.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Database } from '../../src/db/queryable.js';
import { createSiteRuleStore, type SiteRuleInput } from '../../src/site-rules/site-rule-store.js';
import { backends, warnIfNoPostgres } from '../helpers.js';

warnIfNoPostgres();

/** docs/site-rules.md: a process reads a host's rule at most once a second, and sees another process's change within that second. */
const SECOND = 1_000;

/** A clock that moves only when the test moves it. */
function handClock(): { now: () => number; advance: (ms: number) => void } {
  let at = Date.parse('2026-01-01T00:00:00Z');
  return {
    now: () => at,
    advance: (ms) => {
      at += ms;
    },
  };
}

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

    test('a host rule is read at most once a second: the pages of that second share one read, the first page after it reads again; every host its own', async () => {
      const clock = handClock();
      const { db: counted, reads } = counting(db);
      const store = createSiteRuleStore(counted, { now: clock.now });
      await store.create(rule('*.once.example', '.price'));
      const answers = await Promise.all(Array.from({ length: 10 }, () => store.forHost('www.once.example')));
      for (let n = 0; n < 40; n += 1) answers.push(await store.forHost('www.once.example'));
      clock.advance(SECOND - 1);
      answers.push(await store.forHost('www.once.example'));
      assert.ok(answers.every((found) => found?.host_pattern === '*.once.example'));
      assert.equal(reads(), 1, '51 pages within the second, one read');
      clock.advance(1);
      assert.equal((await store.forHost('www.once.example'))?.host_pattern, '*.once.example');
      assert.equal(reads(), 2, 'the first page once the second is up reads again');
      assert.equal(await store.forHost('other.example'), undefined);
      assert.equal(reads(), 3, 'another host is read apart');
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

    test("another process's change is seen by this one's first read once its second is up, not before", async () => {
      const clock = handClock();
      const worker = createSiteRuleStore(db, { now: clock.now });
      const api = createSiteRuleStore(db);
      const host = 'shop.elsewhere.example';
      assert.equal(await worker.forHost(host), undefined);
      const created = await api.create(rule('*.elsewhere.example', '.price'));
      clock.advance(SECOND - 1);
      assert.equal(await worker.forHost(host), undefined, 'within the second the worker answers what it read');
      clock.advance(1);
      assert.equal((await worker.forHost(host))?.id, created.id, 'the change is seen once the second is up');
      await api.delete(created.id);
      assert.equal((await worker.forHost(host))?.id, created.id, 'within the second the worker answers what it read');
      clock.advance(SECOND);
      assert.equal(await worker.forHost(host), undefined, 'the deletion is seen once the second is up');
    });
  });
}
