// The queue hands out a message of a higher priority before every ready one of a lower (a crawl's "next" page before the pages found before it).
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import type { Database } from '../../src/db/queryable.js';
import { createPgBossQueue } from '../../src/queue/pgboss-queue.js';
import type { Queue } from '../../src/queue/queue.js';
import { backends, warnIfNoPostgres } from '../helpers.js';
import { until } from '../wait.js';

warnIfNoPostgres();

for (const backend of backends()) {
  describe(`queue priority on ${backend.name}`, () => {
    let db: Database;
    let queue: Queue;
    const schema = backend.name === 'pglite' ? 'pgboss' : `q_${randomBytes(5).toString('hex')}`;

    before(async () => {
      db = await backend.open();
      queue = createPgBossQueue({ db, schema });
      queue.define('ordered', { retryLimit: 0, expireInSeconds: 60 });
      await queue.start();
    });
    after(async () => {
      await queue.stop(1000);
      if (backend.name === 'postgresql') await db.exec(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
      await db.close();
    });

    test('a message of priority 1 queued after five of priority 0 is handed out first; equal ones oldest first', async () => {
      for (const n of [1, 2, 3, 4, 5]) await queue.enqueue('ordered', [{ data: { n } }]);
      await queue.enqueue('ordered', [{ data: { n: 6 }, priority: 1 }]);
      const seen: number[] = [];
      await queue.work<{ n: number }>('ordered', { concurrency: 1 }, async ({ n }) => {
        seen.push(n);
      });
      await until('every message handled', () => seen.length === 6, { withinMs: 30_000 });
      assert.deepEqual(seen, [6, 1, 2, 3, 4, 5]);
    });
  });
}
