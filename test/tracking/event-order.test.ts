// The event feed with writers that commit out of order: a consumer that follows it by cursor gets every event once.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { after, before, describe, test } from 'node:test';
import type { Database, Queryable } from '../../src/db/database.js';
import { createTracker, type PendingEvent, type StoredEvent, type Tracker } from '../../src/tracking/tracking-store.js';
import { backends } from '../helpers.js';

const postgres = backends().find((b) => b.name === 'postgresql');

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const event = (source: string, name: string): PendingEvent => ({ type: 'product.created', product_id: null, source, run_id: name, data: {} });

/** A transaction that has begun writing (it holds a transaction id) and commits when told. */
function openWriter(db: Database): { tx: Promise<Queryable>; commit: () => void; done: Promise<void> } {
  let commit!: () => void;
  let started!: (tx: Queryable) => void;
  const held = new Promise<void>((resolve) => (commit = resolve));
  const tx = new Promise<Queryable>((resolve) => (started = resolve));
  const done = db.transaction(async (t) => {
    await t.query('SELECT pg_current_xact_id()');
    started(t);
    await held;
  });
  return { tx, commit, done };
}

/** Reads the feed after `cursor` until it is empty: the events and the new cursor. */
async function drain(tracker: Tracker, source: string, cursor: number): Promise<{ events: StoredEvent[]; cursor: number }> {
  const events: StoredEvent[] = [];
  for (;;) {
    const page = await tracker.events({ source, after: cursor, limit: 7 });
    events.push(...page);
    if (page.length > 0) cursor = page[page.length - 1]!.id;
    if (page.length < 7) return { events, cursor };
  }
}

// Concurrent transactions need a server: PGlite has one connection.
describe('the event feed with concurrent writers (PostgreSQL)', { skip: postgres === undefined ? 'needs DATABASE_URL or TEST_DATABASE_URL' : false }, () => {
  let db: Database;
  let tracker: Tracker;

  before(async () => {
    db = await postgres!.open();
    tracker = createTracker(db, { goneAfterRuns: 3 });
  });

  after(async () => {
    await db.close();
  });

  test('an event committed while an older transaction runs waits for it; the older one then comes first, and none is passed over', async () => {
    const source = `order-${randomUUID()}`;
    const older = openWriter(db);
    try {
      const olderTx = await older.tx;
      // A younger transaction takes an event id and commits while the older one is still open.
      const [younger] = await db.transaction((tx) => tracker.append([event(source, 'younger')], tx));
      const early = await drain(tracker, source, 0);
      assert.deepEqual(early.events, [], 'nothing is read past a transaction that may still write an event before it');
      // The older one writes its event now: a larger id, yet earlier in the feed.
      const [olderEvent] = await tracker.append([event(source, 'older')], olderTx);
      assert.ok(olderEvent!.id > younger!.id);
      older.commit();
      await older.done;
      const late = await drain(tracker, source, early.cursor);
      assert.deepEqual(
        late.events.map((e) => e.run_id),
        ['older', 'younger'],
      );
      const afterOlder = await tracker.events({ source, after: olderEvent!.id, limit: 10 });
      assert.deepEqual(
        afterOlder.map((e) => e.run_id),
        ['younger'],
        'the cursor is an event id',
      );
      const newestFirst = await tracker.events({ source, order: 'desc', before: younger!.id, limit: 10 });
      assert.deepEqual(
        newestFirst.map((e) => e.run_id),
        ['older'],
      );
    } finally {
      older.commit();
      await older.done;
    }
  });

  test('six writers committing in random order, some rolling back: a consumer following the feed by cursor gets each committed event exactly once', async () => {
    const source = `order-${randomUUID()}`;
    const committed = new Set<string>();
    let writing = true;
    const writer = async (w: number) => {
      for (let i = 0; i < 25; i++) {
        const name = `w${w}-${i}`;
        const rollback = Math.random() < 0.15;
        await db
          .transaction(async (tx) => {
            await tx.query('SELECT pg_current_xact_id()');
            await sleep(Math.random() * 4);
            await tracker.append([event(source, name), event(source, `${name}b`)], tx);
            await sleep(Math.random() * 4);
            if (rollback) throw new Error('rolled back on purpose');
          })
          .then(
            () => {
              committed.add(name);
              committed.add(`${name}b`);
            },
            (error: Error) => assert.equal(error.message, 'rolled back on purpose'),
          );
      }
    };
    const received: string[] = [];
    const follow = async () => {
      let cursor = 0;
      const deadline = Date.now() + 20_000;
      // Until the writers are done and every committed event has arrived (another suite's open
      // transaction on the same server may hold the feed back for a while).
      while (writing || received.length < committed.size) {
        assert.ok(Date.now() < deadline, `the feed delivered ${received.length} of ${committed.size} events`);
        const page = await drain(tracker, source, cursor);
        received.push(...page.events.map((e) => e.run_id!));
        cursor = page.cursor;
        await sleep(1);
      }
    };
    const following = follow();
    await Promise.all([0, 1, 2, 3, 4, 5].map(writer));
    writing = false;
    await following;
    assert.equal(new Set(received).size, received.length, 'no event twice');
    assert.deepEqual([...received].sort(), [...committed].sort(), 'every committed event, and no rolled-back one');
  });
  test('a writer still open in another database of the same server does not hold the feed back', async () => {
    const serverUrl = new URL(process.env.TEST_DATABASE_URL ?? process.env.DATABASE_URL ?? '');
    const name = `feed_elsewhere_${randomUUID().replaceAll('-', '')}`;
    const admin = new pg.Client({ connectionString: serverUrl.href });
    await admin.connect();
    await admin.query(`CREATE DATABASE ${name}`);
    const elsewhere = new pg.Client({ connectionString: Object.assign(new URL(serverUrl.href), { pathname: `/${name}` }).href });
    try {
      await elsewhere.connect();
      // Older than the event below, and running in the other database all the while.
      await elsewhere.query('BEGIN');
      const [{ xid }] = (await elsewhere.query<{ xid: string }>('SELECT pg_current_xact_id()::text AS xid')).rows as [{ xid: string }];
      const source = `elsewhere-${randomUUID()}`;
      const [appended] = await db.transaction((tx) => tracker.append([event(source, 'here')], tx));
      const [{ running }] = (await db.query<{ running: boolean }>(`SELECT $1::xid8 = ANY(ARRAY(SELECT pg_snapshot_xip(pg_current_snapshot()))) AS running`, [xid])) as [
        { running: boolean },
      ];
      assert.equal(running, true, "the other database's transaction is still running");
      const read = await drain(tracker, source, 0);
      assert.deepEqual(
        read.events.map((e) => e.id),
        [appended!.id],
      );
    } finally {
      await elsewhere.end().catch(() => undefined);
      await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await admin.end();
    }
  });
});
