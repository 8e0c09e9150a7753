// A crawl's pages under hostile or unlucky conditions: redelivered messages, slow sitemaps, a Crawl-delay on another host, a cancel with a large frontier.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import type { Database } from '../../src/db/queryable.js';
import type { App } from '../../src/http/base-app.js';
import type { JobSystem } from '../../src/jobs/job-system.js';
import { JOB_QUEUES, type QueuedPage } from '../../src/jobs/job-queues.js';
import type { Queue } from '../../src/queue/queue.js';
import { startFixtureSite, type FixtureSite } from '../fixtures/site.js';
import { backends, warnIfNoPostgres, openService, type OpenService } from '../helpers.js';
import { until } from '../wait.js';

warnIfNoPostgres();

interface JobBody {
  id: string;
  status: string;
  progress: { pages_done: number; pages_discovered: number; pages_failed: number; reading_sitemaps: boolean };
  error: { type: string; status: number; detail: string } | null;
  log_ids: string[];
}

const ENDED = new Set(['succeeded', 'failed', 'cancelled']);
/** WORKER_CONCURRENCY here: the pages this worker fetches at once. */
const SLOTS = 4;
/**
 * The page timeout of a crawl whose pages the site holds unanswered: the most there is, above the hang
 * guard of the wait that holds them (HOLD_GUARD_MS), so that no held page gives up before the test lets it go.
 */
const HELD_MS = 120_000;
const HOLD_GUARD_MS = 100_000;

for (const backend of backends()) {
  describe(`crawl pages on ${backend.name}`, () => {
    let app: App;
    let db: Database;
    let queue: Queue;
    let system: JobSystem;
    let queueSchema: string;
    let opened: OpenService;
    const site = async (options: Parameters<typeof startFixtureSite>[0] = {}) => {
      const started = await startFixtureSite(options);
      opened.own(started);
      return started;
    };

    before(async () => {
      const service = (opened = await openService(
        backend,
        { SCRAPE_ALLOW_PRIVATE_NETWORKS: 'true', WORKER_CONCURRENCY: String(SLOTS) },
        { work: true, queueTiming: { retryDelaySeconds: 1 } },
      ));
      db = opened.db;
      app = service.app;
      queue = service.context.queue;
      system = service.context.jobs;
      queueSchema = service.config.jobs.queueSchema;
    });
    after(() => opened.close());

    const get = async (id: string): Promise<JobBody> => (await app.inject({ url: `/jobs/${id}` })).json();
    const crawl = async (body: object): Promise<string> => {
      const res = await app.inject({ method: 'POST', url: '/jobs', payload: body });
      assert.equal(res.statusCode, 202, res.body);
      return res.json().id as string;
    };
    const untilEnded = (id: string, withinMs = 120_000) =>
      until(
        `job ${id} to end`,
        async () => {
          const job = await get(id);
          return ENDED.has(job.status) ? job : false;
        },
        { withinMs, everyMs: 100 },
      );

    test('a page message delivered again after its page was stored fetches nothing: no page is fetched twice by a redelivery', async () => {
      const books = await site({ catalogue: { pages: 3, perPage: 2 }, sitemap: false });
      // Page 2 held: the crawl stays running while a second delivery of page 1's message comes.
      const held = books.hold('/books/catalogue/page-2.html');
      const id = await crawl({ url: `${books.url}books/`, crawl: { max_pages: 20, exclude: ['**/category/**'] } });
      await until('page 2 to be asked for', () => books.inFlight().includes('/books/catalogue/page-2.html'));
      const [first] = await db.query<{ id: string; url: string; depth: number }>(`SELECT id, url, depth FROM crawl_frontier WHERE job_id = $1 AND depth = 0 AND status = 'done'`, [
        id,
      ]);
      assert.ok(first !== undefined, 'page 1 is stored');
      const again = randomUUID();
      await queue.enqueue<QueuedPage>(JOB_QUEUES.page, [{ id: again, data: { id: first.id, job_id: id, url: first.url, depth: first.depth } }]);
      await until('the second delivery to be handled', async () => (await queue.states(JOB_QUEUES.page, [again])).get(again) === 'completed');
      assert.equal(books.hits.get('/books/'), 1, 'page 1 fetched once');
      held.release();
      assert.equal((await untilEnded(id)).status, 'succeeded');
    });

    test('a crawl still reading a slow sitemap is not swept as stalled; it crawls once the sitemap answers', async () => {
      const slow = await site({ catalogue: { pages: 2, perPage: 2 } });
      const held = slow.hold('/sitemap.xml');
      const id = await crawl({ url: `${slow.url}books/`, timeout_ms: 60_000, crawl: { sitemap: true, max_pages: 20, exclude: ['**/category/**'] } });
      await until('the sitemap to be asked for', () => slow.inFlight().includes('/sitemap.xml'));
      // Quiet for longer than the sweep's idea of a stalled crawl (5 s without a change), then a sweep.
      await db.query(`UPDATE jobs SET updated_at = now() - interval '10 seconds' WHERE id = $1`, [id]);
      await system.sweep();
      const during = await get(id);
      assert.equal(during.status, 'running', JSON.stringify(during));
      held.release();
      const job = await untilEnded(id);
      assert.equal(job.status, 'succeeded', JSON.stringify(job));
      assert.ok(job.progress.pages_done > 1, "the sitemap's pages were crawled");
    });

    /** A listed crawl from the sitemap whose start page is stored while /sitemap.xml is held unanswered. */
    const startPageStoredWhileSitemapHeld = async () => {
      const slow = await site({ catalogue: { pages: 2, perPage: 2 } });
      const held = slow.hold('/sitemap.xml');
      const id = await crawl({ url: `${slow.url}books/`, crawl: { strategy: 'listed', sitemap: true, max_pages: 20 } });
      await until('the start page to be stored while the sitemap is unanswered', async () => (await get(id)).progress.pages_done === 1).catch((error: unknown) => {
        held.release();
        throw error;
      });
      return { slow, held, id };
    };

    test("the start page is crawled while the sitemap is read; with all its pages done, the crawl is not over until the sitemap's pages are in", async () => {
      const { slow, held, id } = await startPageStoredWhileSitemapHeld();
      try {
        // Quiet for longer than the sweep's idea of a stalled crawl (5 s without a change): still reading, not stalled.
        await db.query(`UPDATE jobs SET updated_at = now() - interval '10 seconds' WHERE id = $1`, [id]);
        await system.sweep();
        const during = await get(id);
        assert.equal(during.status, 'running', JSON.stringify(during));
        assert.equal(during.progress.reading_sitemaps, true);
        assert.ok(slow.inFlight().includes('/sitemap.xml'), 'the sitemap is still unanswered');
      } finally {
        held.release();
      }
      const job = await untilEnded(id);
      assert.equal(job.status, 'succeeded', JSON.stringify(job));
      assert.ok(job.progress.pages_done > 1, "the sitemap's pages were crawled");
      assert.equal(job.progress.pages_done, job.progress.pages_discovered);
      assert.equal(job.progress.reading_sitemaps, false);
    });

    test('a crawl whose seed gave up while reading the sitemap is ended by the sweep with the pages it has', async () => {
      const { held, id } = await startPageStoredWhileSitemapHeld();
      try {
        // As if the seed's worker had died on every try: its message failed, the crawl quiet for a minute.
        await db.query(`UPDATE ${queueSchema}.job SET state = 'failed' WHERE name = $1 AND id = $2`, [JOB_QUEUES.job, id]);
        await db.query(`UPDATE jobs SET updated_at = now() - interval '2 minutes' WHERE id = $1`, [id]);
        await system.sweep();
        const job = await get(id);
        assert.equal(job.status, 'succeeded', JSON.stringify(job));
        assert.equal(job.progress.pages_done, 1);
      } finally {
        held.release();
      }
    });

    test("a sitemap's pages are crawled as soon as it is read, while the index's next sitemap is still unanswered", async () => {
      const books = await site({ catalogue: { pages: 3, perPage: 2 } });
      const held = books.hold('/sitemaps/books-detail.xml.gz');
      const id = await crawl({ url: `${books.url}books/`, crawl: { strategy: 'listed', sitemap: true, max_pages: 50 } });
      try {
        // The listed strategy follows no links: the listing pages beyond the start page come from the first sitemap only.
        await until("the listing sitemap's pages to be done while the detail sitemap is held", async () => (await get(id)).progress.pages_done === 3);
        const during = await get(id);
        assert.equal(during.status, 'running');
        assert.equal(during.progress.reading_sitemaps, true);
        assert.ok(books.inFlight().includes('/sitemaps/books-detail.xml.gz'), 'the detail sitemap is still unanswered');
        assert.equal(books.hits.get('/books/catalogue/page-3.html'), 1);
      } finally {
        held.release();
      }
      const job = await untilEnded(id);
      assert.equal(job.status, 'succeeded', JSON.stringify(job));
      assert.equal(job.progress.pages_done, 3 + 6);
      assert.equal(job.progress.reading_sitemaps, false);
    });

    test("sitemap pages that come in after the start page's links take only what max_pages has left", async () => {
      const books = await site({ catalogue: { pages: 3, perPage: 4 } });
      const held = books.hold('/sitemap.xml');
      const id = await crawl({ url: `${books.url}books/`, crawl: { sitemap: true, max_pages: 4, exclude: ['**/category/**'] } });
      try {
        await until("the start page's links to fill the budget", async () => (await get(id)).progress.pages_discovered >= 4);
      } finally {
        held.release();
      }
      const job = await untilEnded(id);
      assert.equal(job.status, 'succeeded', JSON.stringify(job));
      const [row] = await db.query<{ n: number }>('SELECT count(*)::int AS n FROM crawl_frontier WHERE job_id = $1', [id]);
      assert.equal(row?.n, 4, 'pages in the frontier');
      assert.equal(job.progress.pages_discovered, 4);
    });

    /** What the fixture site was asked for under /books/, per path, so far. */
    const booksHits = (books: FixtureSite) => new Map([...books.hits].filter(([path]) => path.startsWith('/books/')));
    /** Paths asked for since `before`, once per request. */
    const askedSince = (books: FixtureSite, before: Map<string, number>) =>
      [...booksHits(books)].flatMap(([path, n]) => Array.from({ length: n - (before.get(path) ?? 0) }, () => path));
    /** The crawl's page messages this process holds now (claimed from the queue, not yet handled), with their pages' paths. */
    const claimedMessages = async (id: string) =>
      (
        await db.query<{ id: string; url: string }>(`SELECT id::text, data->>'url' AS url FROM ${queueSchema}.job WHERE name = $1 AND data->>'job_id' = $2 AND state = 'active'`, [
          JOB_QUEUES.page,
          id,
        ])
      ).map((row) => ({ id: row.id, path: new URL(row.url).pathname }));
    /** The crawl's page messages in `states`. */
    const pageMessages = async (id: string, states: readonly string[]) => {
      const [row] = await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${queueSchema}.job WHERE name = $1 AND data->>'job_id' = $2 AND state::text = ANY ($3::text[])`, [
        JOB_QUEUES.page,
        id,
        states,
      ]);
      return row?.n ?? 0;
    };
    /**
     * Every page of the catalogue held unanswered from the start: pages are claimed and fetched, and none
     * is answered, so no message of the crawl is handled until the test releases them. Resolves once all
     * SLOTS fetch slots are in held requests and the worker has claimed more pages than that: pages
     * claimed but not yet fetching, waiting for a slot. Nothing changes from there until the release.
     */
    const slotsFullOfHeldPages = async (held: ReturnType<FixtureSite['hold']>, id: string, ready: () => Promise<boolean> = async () => true) =>
      until(
        'every fetch slot to be on a held page, with claimed pages waiting for a slot',
        async () => {
          if (held.parked().length < SLOTS || !(await ready())) return false;
          const claimed = await claimedMessages(id);
          return claimed.length > SLOTS ? claimed.map((m) => m.path) : false;
        },
        { withinMs: HOLD_GUARD_MS, everyMs: 200 },
      );

    test('DELETE of a crawl with 10,000 pending pages answers without waiting for their queue messages; of the pages claimed at the cancel, those on the wire store nothing, those waiting for a slot are never fetched; every queued page ends unfetched', async () => {
      const big = await site({ catalogue: { pages: 500, perPage: 20 } });
      const held = big.hold((path) => path.startsWith('/books/'));
      let claimed: string[];
      let id: string;
      try {
        id = await crawl({ url: `${big.url}books/`, timeout_ms: HELD_MS, crawl: { strategy: 'listed', sitemap: true, max_pages: 20_000 } });
        claimed = await slotsFullOfHeldPages(held, id, async () => (await get(id)).progress.pages_discovered > 10_000);
      } catch (error) {
        held.release();
        throw error;
      }
      const onTheWire = held.parked();
      assert.equal(onTheWire.length, SLOTS, 'no more pages fetched at once than the fetch slots');
      const atCancel = booksHits(big);
      const cancel = () => app.inject({ method: 'DELETE', url: `/jobs/${id}` });
      // On PostgreSQL, another session holds one of the crawl's queued page messages: the answer must
      // not wait for the queue to let go of the crawl's pages.
      const cancelled =
        db.backend === 'postgresql'
          ? await db.transaction(async (tx) => {
              await tx.query(`SELECT id FROM ${queueSchema}.job WHERE name = $1 AND state = 'created' AND data->>'job_id' = $2 LIMIT 1 FOR UPDATE`, [JOB_QUEUES.page, id]);
              const guard = new Promise<never>((_, reject) => setTimeout(() => reject(new Error('the cancel waited for the held page message (hang guard 60 s)')), 60_000).unref());
              return Promise.race([cancel(), guard]);
            })
          : await cancel();
      held.release();
      assert.equal(cancelled.statusCode, 200, cancelled.body);
      assert.equal(cancelled.json().status, 'cancelled');
      await until(
        'every page message of the crawl to be over, and nothing on the wire',
        async () => (await pageMessages(id, ['created', 'retry', 'active'])) === 0 && big.inFlight().length === 0,
        {
          withinMs: 300_000,
          everyMs: 500,
        },
      );
      // The held pages were answered after the cancel: asked for before it, and not asked for again.
      assert.deepEqual(askedSince(big, atCancel), [], 'no page asked for after the cancel');
      const waiting = claimed.filter((path) => !atCancel.has(path));
      assert.ok(waiting.length > 0, 'pages were claimed and waiting for a slot at the cancel');
      for (const path of waiting) assert.equal(big.hits.get(path), undefined, `${path}, claimed and waiting for a slot at the cancel, was fetched`);
      const job = await get(id);
      assert.equal(job.status, 'cancelled');
      assert.equal(job.progress.pages_done, 0, 'the pages answered after the cancel stored nothing');
    });

    test("a cancel written by another process is seen by this worker's pages before the job row says so: only pages it had claimed by then are fetched after it, none claimed later", async () => {
      const big = await site({ catalogue: { pages: 50, perPage: 20 } });
      const held = big.hold((path) => path.startsWith('/books/'));
      let id: string;
      let claimed: Array<{ id: string; path: string }>;
      let onTheWire: string[];
      let atRequest: Map<string, number>;
      try {
        id = await crawl({ url: `${big.url}books/`, timeout_ms: HELD_MS, crawl: { strategy: 'listed', sitemap: true, max_pages: 2000 } });
        await slotsFullOfHeldPages(held, id);
        // What an API process writes first, before its update of the job row waits on the pages committing.
        await db.query('INSERT INTO job_cancel_requests (job_id) VALUES ($1)', [id]);
        // Read after the request committed, while no page could end (every one held): each page opened
        // before the request is among them. Those on the wire finish; those waiting for a slot had opened.
        claimed = await claimedMessages(id);
        onTheWire = held.parked();
        atRequest = booksHits(big);
      } finally {
        held.release();
      }
      const claimedIds = new Set(claimed.map((m) => m.id));
      const claimedPaths = claimed.map((m) => m.path);
      await until('the pages claimed at the request to be handled, and further rounds of claims after it', async () => {
        const rows = await db.query<{ id: string; state: string }>(`SELECT id::text, state::text FROM ${queueSchema}.job WHERE name = $1 AND data->>'job_id' = $2`, [
          JOB_QUEUES.page,
          id,
        ]);
        const claimedOver = rows.filter((r) => claimedIds.has(r.id)).every((r) => r.state === 'completed');
        const later = rows.filter((r) => !claimedIds.has(r.id) && r.state === 'completed').length;
        return claimedOver && later >= 4 * SLOTS && big.inFlight().length === 0;
      });
      const asked = askedSince(big, atRequest);
      for (const path of asked)
        assert.ok(claimedPaths.includes(path) && !onTheWire.includes(path), `${path} fetched after the cancel was written, though not claimed and waiting for a slot by then`);
      assert.ok(asked.length <= claimed.length - onTheWire.length, `${asked.length} pages fetched after the request, ${claimed.length - onTheWire.length} were waiting for a slot`);
      const during = await get(id);
      assert.equal(during.status, 'running', 'the request alone does not end the job');
      const cancelled = await app.inject({ method: 'DELETE', url: `/jobs/${id}` });
      assert.equal(cancelled.statusCode, 200, cancelled.body);
      assert.equal(cancelled.json().status, 'cancelled');
      assert.deepEqual(askedSince(big, atRequest), asked, 'nothing fetched since');
    });

    test('a cancel written by a process that died before ending its crawl is ended by the sweep', async () => {
      const books = await site({ catalogue: { pages: 2, perPage: 2 } });
      const held = books.hold('/sitemap.xml');
      const id = await crawl({ url: `${books.url}books/`, crawl: { sitemap: true, max_pages: 20 } });
      try {
        await until('the crawl to run', async () => (await get(id)).status === 'running');
        await db.query(`INSERT INTO job_cancel_requests (job_id, requested_at) VALUES ($1, now() - interval '2 minutes')`, [id]);
        await system.sweep();
        const job = await get(id);
        assert.equal(job.status, 'cancelled', JSON.stringify(job));
        assert.equal(job.log_ids.length, 1, 'its log is written as by the cancel itself');
      } finally {
        held.release();
      }
    });

    test('Crawl-delay: 60 on one host holds no worker slot: a crawl of another host runs while its pages wait in the queue', async () => {
      const polite = await site({ catalogue: { pages: 2, perPage: 10 }, sitemap: false, robots: 'User-agent: *\nCrawl-delay: 60\n' });
      const fast = await site();
      const slow = await crawl({ url: `${polite.url}books/`, crawl: { max_pages: 30, exclude: ['**/category/**'] } });
      const host = new URL(polite.url).host;
      // Page 1 fetched, and more of its pages than there are worker slots have taken their moments (60 s apart).
      await until('the polite host to have five pages waiting', async () => {
        const [row] = await db.query<{ ahead: number }>('SELECT extract(epoch FROM next_at - now())::float8 AS ahead FROM host_politeness WHERE host = $1', [host]);
        return row !== undefined && row.ahead > 4.5 * 60;
      });
      const other = await untilEnded(await crawl({ url: `${fast.url}pages/opengraph.html`, crawl: { max_pages: 1 } }), 300_000);
      assert.equal(other.status, 'succeeded', JSON.stringify(other));
      const politeHits = [...polite.hits].filter(([path]) => path.startsWith('/books/'));
      assert.equal(politeHits.length, 1, `the other crawl ended while the polite host had served its first page only: ${JSON.stringify(politeHits)}`);
      assert.equal((await get(slow)).status, 'running');
      assert.equal((await app.inject({ method: 'DELETE', url: `/jobs/${slow}` })).statusCode, 200);
    });
  });
}
