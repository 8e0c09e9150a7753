// Event ids follow commit order: a reader that has passed id N never later finds an event below N.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Database } from '../../src/db/database.js';
import { createTracker, type PendingEvent, type StoredEvent } from '../../src/tracking/tracking-store.js';
import { backends } from '../helpers.js';

const postgres = backends().find((b) => b.name === 'postgresql');

const event = (source: string): PendingEvent => ({ type: 'product.created', product_id: null, source, run_id: 'order-test', data: {} });

// Concurrent transactions need a server: PGlite has one connection.
describe('event ids in commit order (PostgreSQL)', { skip: postgres === undefined ? 'needs DATABASE_URL or TEST_DATABASE_URL' : false }, () => {
  let db: Database;

  before(async () => {
    db = await postgres!.open();
  });

  after(async () => {
    await db.close();
  });

  test('a second writer waits for the first to commit before it takes an id, so ids never commit out of order', async () => {
    const tracker = createTracker(db, { goneAfterRuns: 3 });
    let commitFirst!: () => void;
    const held = new Promise<void>((resolve) => (commitFirst = resolve));
    let firstIds: StoredEvent[] = [];
    const first = db.transaction(async (tx) => {
      firstIds = await tracker.append([event('first')], tx);
      await held;
    });
    // The first has its id and holds the lock: wait until it does.
    while (firstIds.length === 0) await new Promise((resolve) => setTimeout(resolve, 10));
    let secondIds: StoredEvent[] = [];
    const second = db.transaction(async (tx) => {
      secondIds = await tracker.append([event('second')], tx);
    });
    // The second is queued behind the first on the commit-order lock, before taking an id.
    let queued = false;
    for (let attempt = 0; attempt < 500 && !queued; attempt++) {
      const [waiting] = await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM pg_locks WHERE locktype = 'advisory' AND NOT granted`);
      queued = waiting!.n > 0;
      if (!queued) await new Promise((resolve) => setTimeout(resolve, 10));
    }
    if (!queued) commitFirst();
    assert.ok(queued, 'the second writer waits on the commit-order lock');
    assert.equal(secondIds.length, 0, 'no id taken while the first is uncommitted');
    assert.deepEqual(
      await db.query(`SELECT source FROM events WHERE run_id = 'order-test'`),
      [],
      'nothing visible yet',
    );
    commitFirst();
    await Promise.all([first, second]);
    assert.ok(secondIds[0]!.id > firstIds[0]!.id, `the later commit has the larger id (${firstIds[0]!.id}, ${secondIds[0]!.id})`);
  });
});
