// Jobs end to end in one process (API and worker): async scrapes, whole-site crawls, cancel, retries, live progress, schedules.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Database } from '../../src/db/queryable.js';
import type { App } from '../../src/http/base-app.js';
import { JOB_QUEUES } from '../../src/jobs/job-queues.js';
import type { JobSystem } from '../../src/jobs/job-system.js';
import type { Queue } from '../../src/queue/queue.js';
import { catalogueBooks } from '../fixtures/books-catalogue.js';
import { startFixtureSite, type FixtureSite } from '../fixtures/site.js';
import { assertProblem, backends, warnIfNoPostgres, openService, type OpenService } from '../helpers.js';
import { until } from '../wait.js';

warnIfNoPostgres();

interface JobBody {
  id: string;
  kind: string;
  status: string;
  attempts: number;
  progress: { pages_done: number; pages_discovered: number; pages_failed: number; products_found: number; created: number; updated: number };
  log_ids: string[];
  error: { status: number; detail: string } | null;
  started_at: string | null;
  finished_at: string | null;
}

const ENDED = new Set(['succeeded', 'failed', 'cancelled']);
/** Quick retries, so a retry test waits a second, not the production five. */
const TIMING = { retryDelaySeconds: 1 };
/** WORKER_CONCURRENCY here: the pages the worker fetches at once. */
const SLOTS = 4;

for (const backend of backends()) {
  describe(`jobs on ${backend.name}`, () => {
    let site: FixtureSite;
    let slow: FixtureSite;
    let app: App;
    let system: JobSystem;
    let queue: Queue;
    let db: Database;
    let queueSchema: string;
    let opened: OpenService;

    before(async () => {
      site = await startFixtureSite({ catalogue: { pages: 3, perPage: 20 } });
      slow = await startFixtureSite({ catalogue: { pages: 5, perPage: 20 }, latencyMs: 400 });
      const service = (opened = await openService(
        backend,
        { SCRAPE_ALLOW_PRIVATE_NETWORKS: 'true', DEMO_SITE_URL: `${site.url}books/`, WORKER_CONCURRENCY: String(SLOTS) },
        { work: true, queueTiming: TIMING },
      ));
      opened.own(site);
      opened.own(slow);
      db = opened.db;
      app = service.app;
      system = service.context.jobs;
      queue = service.context.queue;
      queueSchema = service.config.jobs.queueSchema;
    });
    after(() => opened.close());

    const get = async (id: string): Promise<JobBody> => (await app.inject({ url: `/jobs/${id}` })).json();
    const untilEnded = async (id: string, withinMs = 30_000): Promise<JobBody> => {
      const deadline = Date.now() + withinMs;
      for (;;) {
        const job = await get(id);
        if (ENDED.has(job.status)) return job;
        if (Date.now() > deadline) throw new Error(`job ${id} still ${job.status} after ${withinMs} ms: ${JSON.stringify(job)}`);
        await new Promise((r) => setTimeout(r, 100));
      }
    };
    const post = (body: object, url = '/jobs', headers: Record<string, string> = {}) => app.inject({ method: 'POST', url, payload: body, headers });

    test('POST /jobs answers 202 with Location; a worker runs it; the job shows progress, timings, attempts and its log', async () => {
      const res = await post({ url: `${site.url}pages/jsonld-product.html` });
      assert.equal(res.statusCode, 202, res.body);
      const queued = res.json() as JobBody;
      assert.equal(res.headers.location, `/jobs/${queued.id}`);
      assert.deepEqual([queued.kind, queued.status, queued.attempts], ['scrape', 'queued', 0]);
      const job = await untilEnded(queued.id);
      assert.equal(job.status, 'succeeded', JSON.stringify(job));
      assert.equal(job.attempts, 1);
      assert.deepEqual(job.progress, {
        pages_done: 1,
        pages_discovered: 1,
        pages_failed: 0,
        pages_blocked: 0,
        products_found: 1,
        created: job.progress.created,
        updated: job.progress.updated,
        articles_found: 0,
        articles_created: 0,
        articles_updated: 0,
        links_over_max_pages: 0,
        links_over_max_depth: 0,
        reading_sitemaps: false,
      });
      assert.equal(job.progress.created + job.progress.updated, 1);
      assert.ok(job.started_at !== null && job.finished_at !== null && job.finished_at >= job.started_at);
      assert.equal(job.log_ids.length, 1);
      const log = (await app.inject({ url: `/scrape-logs/${job.log_ids[0]}` })).json();
      assert.deepEqual([log.status, log.job_id, log.count], ['succeeded', job.id, 1]);
    });

    test('POST /scrape with Prefer: respond-async queues the same run as a job', async () => {
      const res = await post({ url: `${site.url}pages/opengraph.html` }, '/scrape', { prefer: 'respond-async' });
      assert.equal(res.statusCode, 202, res.body);
      assert.equal(res.headers['preference-applied'], 'respond-async');
      assert.match(String(res.headers.location), /^\/jobs\/[0-9a-f-]{36}$/);
      const job = await untilEnded(res.json().id);
      assert.equal(job.status, 'succeeded');
      // Without the preference the contract of POST /scrape is unchanged.
      assert.equal((await post({ url: `${site.url}pages/opengraph.html` }, '/scrape')).statusCode, 200);
    });

    test('a whole-site crawl from the sitemap fetches every page once and stores every product once; its counts add up', async () => {
      const before = new Map(site.hits);
      const res = await post({ url: `${site.url}books/`, crawl: { sitemap: true, max_pages: 500, include: ['/books/**'], exclude: ['**/category/**'] } });
      assert.equal(res.statusCode, 202, res.body);
      const job = await untilEnded(res.json().id, 60_000);
      assert.equal(job.status, 'succeeded', JSON.stringify(job));
      const fetched = [...site.hits].filter(([path, n]) => path.startsWith('/books/') && n > (before.get(path) ?? 0));
      const again = fetched.filter(([path, n]) => n - (before.get(path) ?? 0) > 1);
      assert.deepEqual(again, [], 'no page fetched twice');
      // 60 detail pages from the gzipped sitemap, the listing pages, and the aliases the listing links to.
      assert.ok(fetched.length >= 60 + 3, `${fetched.length} pages fetched`);
      assert.equal(job.progress.pages_done + job.progress.pages_failed, job.progress.pages_discovered);
      assert.equal(job.progress.pages_done, fetched.length);
      assert.equal(job.progress.pages_failed, 0);
      // Listing cards and detail pages name the same 60 books: one product each, however often seen.
      const books = catalogueBooks({ pages: 3, perPage: 20 });
      const stored = ((await app.inject({ url: '/products?limit=1000' })).json() as Array<{ source_url: string | null }>)
        .map((p) => p.source_url)
        .filter((url) => url?.startsWith(`${site.url}books/catalogue/`));
      assert.deepEqual(stored.sort(), books.map((book) => `${site.url}books/${book.detailPath}`).sort(), 'each of the 60 books stored once, and nothing else from the catalogue');
      assert.equal(job.progress.products_found, job.progress.created + job.progress.updated);
      const log = (await app.inject({ url: `/scrape-logs/${job.id}` })).json();
      assert.deepEqual([log.status, log.crawl, log.pages], ['succeeded', true, job.progress.pages_done]);
      assert.equal(log.count, job.progress.products_found);
      assert.deepEqual(job.log_ids, [job.id]);
    });

    test('crawl bounds: max_pages, max_depth, include/exclude globs, and the listed strategy follows no links', async () => {
      const capped = await untilEnded((await post({ url: `${site.url}books/`, crawl: { max_pages: 7, exclude: ['**/category/**'] } })).json().id);
      assert.equal(capped.progress.pages_discovered, 7);
      assert.equal(capped.progress.pages_done + capped.progress.pages_failed, 7);

      const shallow = await untilEnded((await post({ url: `${site.url}books/`, crawl: { max_depth: 0 } })).json().id);
      assert.deepEqual([shallow.progress.pages_discovered, shallow.progress.pages_done], [1, 1], 'depth 0 is the start page alone');

      const before = site.hits.get('/books/catalogue/page-2.html') ?? 0;
      const excluded = await untilEnded(
        (await post({ url: `${site.url}books/`, crawl: { max_pages: 40, include: ['/books/**'], exclude: ['/books/catalogue/page-*.html', '**/category/**'] } })).json().id,
      );
      assert.equal(site.hits.get('/books/catalogue/page-2.html') ?? 0, before, 'an excluded page is never fetched');
      assert.ok(excluded.progress.pages_done > 1);

      const listed = await untilEnded((await post({ url: `${site.url}books/`, crawl: { strategy: 'listed', sitemap: false } })).json().id);
      assert.deepEqual([listed.progress.pages_discovered, listed.progress.pages_done], [1, 1], 'listed without a sitemap: the start URL only');
    });

    test('DELETE /jobs/{id} stops a running crawl: of the pages claimed at the cancel, those on the wire store nothing, those waiting for a slot are never fetched; it keeps what it stored and its log says cancelled', async () => {
      const books = await startFixtureSite({ catalogue: { pages: 5, perPage: 20 } });
      opened.own(books);
      // The start page is answered; every page after it is held unanswered, so that at the cancel the test
      // knows which pages are on the wire (all SLOTS fetch slots on held pages) and which wait for a slot.
      const held = books.hold((path) => path.startsWith('/books/') && path !== '/books/');
      const booksHits = () => new Map([...books.hits].filter(([path]) => path.startsWith('/books/')));
      let id: string;
      let claimed: string[];
      try {
        // The most page timeout there is, past the hang guard of the wait below: no held page gives up before the test lets it go.
        id = (await post({ url: `${books.url}books/`, timeout_ms: 120_000, crawl: { max_pages: 200, include: ['/books/**'], exclude: ['**/category/**'] } })).json().id as string;
        claimed = await until('the start page stored, every fetch slot on a held page, and claimed pages waiting for a slot', async () => {
          if (held.parked().length < SLOTS || (await get(id)).progress.pages_done !== 1) return false;
          const active = await db.query<{ url: string }>(`SELECT data->>'url' AS url FROM ${queueSchema}.job WHERE name = $1 AND data->>'job_id' = $2 AND state = 'active'`, [
            JOB_QUEUES.page,
            id,
          ]);
          return active.length > SLOTS ? active.map((row) => new URL(row.url).pathname) : false;
        });
      } catch (error) {
        held.release();
        throw error;
      }
      const onTheWire = held.parked();
      assert.equal(onTheWire.length, SLOTS, 'no more pages fetched at once than the fetch slots');
      const atCancel = booksHits();
      const cancelled = await app.inject({ method: 'DELETE', url: `/jobs/${id}` });
      held.release();
      assert.equal(cancelled.statusCode, 200, cancelled.body);
      assert.equal(cancelled.json().status, 'cancelled');
      // Stopped means: no queue entry of the crawl can run any more, and nothing is on the wire.
      const unfetched = await until('every queued page of the crawl to be over, and none in flight', async () => {
        const pending = await system.jobs.pendingPageIds(id);
        const states = await queue.states(JOB_QUEUES.page, pending);
        const over = [...states.values()].every((state) => state === 'cancelled' || state === 'completed' || state === 'failed');
        return over && books.inFlight().length === 0 ? pending : false;
      });
      assert.ok(unfetched.length > 0, 'the crawl was cut short: pages it had found were never fetched');
      assert.deepEqual([...booksHits()], [...atCancel], 'no page asked for after the cancel');
      const waiting = claimed.filter((path) => !atCancel.has(path));
      assert.ok(waiting.length > 0, 'pages were claimed and waiting for a slot at the cancel');
      for (const path of waiting) assert.equal(books.hits.get(path), undefined, `${path}, claimed and waiting for a slot at the cancel, was fetched`);
      const job = await get(id);
      assert.equal(job.status, 'cancelled');
      assert.equal(job.progress.pages_done, 1, 'the start page, stored before the cancel; nothing answered after it was stored');
      const log = (await app.inject({ url: `/scrape-logs/${id}` })).json();
      assert.equal(log.status, 'cancelled');
      assert.equal(log.pages, job.progress.pages_done, 'the log holds every page stored before the cancel');
      const kept = (
        await app.inject({ url: `/products?source_url=${encodeURIComponent(`${books.url}books/${catalogueBooks({ pages: 5, perPage: 20 })[0]!.detailPath}`)}` })
      ).json();
      assert.equal(kept.length, 1, 'products stored before the cancel stay');
      // Cancelling again answers the cancelled job; an ended job cannot be cancelled.
      assert.equal((await app.inject({ method: 'DELETE', url: `/jobs/${id}` })).statusCode, 200);
      const done = await untilEnded((await post({ url: `${site.url}pages/opengraph.html` })).json().id);
      assertProblem(await app.inject({ method: 'DELETE', url: `/jobs/${done.id}` }), 409);
      assertProblem(await app.inject({ method: 'DELETE', url: '/jobs/00000000-0000-4000-8000-000000000000' }), 404);
    });

    test('a page that fails once is retried with backoff and the job succeeds; one that keeps failing fails the job with its error', async () => {
      const flaky = await untilEnded((await post({ url: `${site.url}flaky/once-${backend.name}?fails=1` })).json().id);
      assert.equal(flaky.status, 'succeeded', JSON.stringify(flaky));
      assert.equal(flaky.attempts, 2);
      assert.equal(flaky.log_ids.length, 2, 'the failed attempt left its log too');
      const broken = await untilEnded((await post({ url: `${site.url}status/503` })).json().id);
      assert.equal(broken.status, 'failed');
      assert.equal(broken.attempts, 3, 'the first try and two retries');
      assert.equal(broken.error?.status, 502);
      assert.match(broken.error?.detail ?? '', /503/);
      // A 404 will not change by asking again: no retry.
      const missing = await untilEnded((await post({ url: `${site.url}status/404` })).json().id);
      assert.deepEqual([missing.status, missing.attempts], ['failed', 1]);
    });

    test('GET /jobs lists newest first, filters by status and source, pages with X-Total-Count and Link', async () => {
      const all = await app.inject({ url: '/jobs?limit=500' });
      const jobs = all.json() as Array<JobBody & { created_at: string; source_url: string }>;
      assert.equal(Number(all.headers['x-total-count']), jobs.length);
      const times = jobs.map((j) => j.created_at);
      assert.deepEqual(times, [...times].sort().reverse());
      const failed = (await app.inject({ url: '/jobs?status=failed' })).json() as JobBody[];
      assert.ok(failed.length >= 2 && failed.every((j) => j.status === 'failed'));
      const source = `${site.url}pages/opengraph.html`;
      const bySource = (await app.inject({ url: `/jobs?source=${encodeURIComponent(source)}` })).json() as Array<{ source_url: string }>;
      assert.ok(bySource.length >= 2 && bySource.every((j) => j.source_url === source));
      const page = await app.inject({ url: '/jobs?limit=2&offset=1' });
      assert.equal(page.json().length, 2);
      assert.match(String(page.headers.link), /rel="next".*rel="prev"/);
      assertProblem(await app.inject({ url: '/jobs?status=sleeping' }), 422);
      assertProblem(await app.inject({ url: '/jobs/not-a-uuid' }), 422);
    });

    test('bad job requests are 422 naming the field; a blocked target is refused before anything is queued', async () => {
      const cases: Array<[object, string]> = [
        [{ url: `${site.url}books/`, crawl: { strategy: 'everywhere' } }, '/body/crawl/strategy'],
        [{ url: `${site.url}books/`, crawl: { max_pages: 0 } }, '/body/crawl/max_pages'],
        [{ url: `${site.url}books/`, crawl: { colour: 'red' } }, '/body/crawl/colour'],
        [{ url: `${site.url}books/`, selectors: { item: '[[', title: 'h3', price: 'p' } }, '/body/selectors/item'],
        [{ url: `${site.url}books/`, crawl: { include: ['/a', '/{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}'] } }, '/body/crawl/include/1'],
        [{ url: `${site.url}books/`, crawl: { exclude: Array.from({ length: 21 }, () => '/x/**') } }, '/body/crawl/exclude'],
        [{ url: 42 }, '/body/url'],
      ];
      const before = (await app.inject({ url: '/jobs?limit=1' })).headers['x-total-count'];
      for (const [body, path] of cases) {
        const problem = assertProblem(await post(body), 422);
        assert.ok(
          problem.errors.some((e: { path: string }) => e.path === path),
          `${JSON.stringify(body)}: ${JSON.stringify(problem.errors)}`,
        );
      }
      assertProblem(await post({ url: 'file:///etc/passwd' }), 422);
      assert.equal((await app.inject({ url: '/jobs?limit=1' })).headers['x-total-count'], before, 'nothing was queued');
    });

    test('GET /jobs/{id}/events streams progress in order and ends with the ended job; a client that leaves costs nothing', async () => {
      const address = await app.listen({ host: '127.0.0.1', port: 0 });
      const id = (await post({ url: `${slow.url}books/`, crawl: { max_pages: 6, exclude: ['**/category/**'] } })).json().id as string;
      const res = await fetch(`${address}/jobs/${id}/events`);
      assert.equal(res.status, 200);
      assert.match(res.headers.get('content-type') ?? '', /^text\/event-stream/);
      const text = await res.text(); // the server closes the stream when the job ends
      const events = text
        .split('\n\n')
        .filter((block) => block.includes('data: '))
        .map((block) => ({
          id: Number(/^id: (\d+)$/m.exec(block)?.[1]),
          event: /^event: (\w+)$/m.exec(block)?.[1],
          job: JSON.parse(/^data: (.*)$/m.exec(block)![1]!) as JobBody,
        }));
      assert.ok(events.length >= 3, `${events.length} events`);
      assert.deepEqual(
        events.map((e) => e.id),
        events.map((_, i) => i + 1),
        'ids count up',
      );
      assert.deepEqual(
        events.slice(0, -1).map((e) => e.event),
        events.slice(0, -1).map(() => 'progress'),
      );
      assert.equal(events.at(-1)!.event, 'end');
      assert.equal(events.at(-1)!.job.status, 'succeeded');
      const done = events.map((e) => e.job.progress.pages_done);
      assert.deepEqual(
        done,
        [...done].sort((a, b) => a - b),
        'progress never goes back',
      );

      // A client that disconnects: its watcher stops.
      const other = (await post({ url: `${slow.url}books/`, crawl: { max_pages: 30, exclude: ['**/category/**'] } })).json().id as string;
      const leaving = new AbortController();
      const stream = await fetch(`${address}/jobs/${other}/events`, { signal: leaving.signal });
      const reader = stream.body!.getReader();
      await reader.read();
      assert.equal(system.events.watchers(), 1);
      leaving.abort();
      await until('the watcher to stop with the client', () => system.events.watchers() === 0);
      await app.inject({ method: 'DELETE', url: `/jobs/${other}` });
      assertProblem(await app.inject({ url: '/jobs/00000000-0000-4000-8000-000000000000/events' }), 404);
    });

    test('schedules: create (cron or every N minutes) with the next run time, pause and resume, change, delete; bad calendars are 422', async () => {
      const res = await post({ name: 'morning books', cron: '0 7 * * *', timezone: 'Europe/London', job: { url: `${site.url}books/` } }, '/schedules');
      assert.equal(res.statusCode, 201, res.body);
      const schedule = res.json();
      assert.equal(res.headers.location, `/schedules/${schedule.id}`);
      const next = new Date(schedule.next_run_at);
      assert.ok(next.getTime() > Date.now() && next.getTime() <= Date.now() + 25 * 3600_000, schedule.next_run_at);
      assert.equal(new Intl.DateTimeFormat('en-GB', { timeZone: 'Europe/London', hour: '2-digit', minute: '2-digit' }).format(next), '07:00');

      const paused = (await app.inject({ method: 'PATCH', url: `/schedules/${schedule.id}`, payload: { paused: true } })).json();
      assert.deepEqual([paused.paused, paused.next_run_at], [true, null]);
      const resumed = (await app.inject({ method: 'PATCH', url: `/schedules/${schedule.id}`, payload: { paused: false, every_minutes: 30 } })).json();
      assert.deepEqual([resumed.paused, resumed.cron, resumed.every_minutes], [false, null, 30]);
      assert.ok(new Date(resumed.next_run_at).getTime() - Date.now() <= 30 * 60_000);

      const listed = await app.inject({ url: '/schedules?limit=10' });
      assert.ok(listed.json().some((s: { id: string }) => s.id === schedule.id));
      assert.equal(Number(listed.headers['x-total-count']), listed.json().length);

      const cases: Array<[object, string]> = [
        [{ cron: 'every day at noon', job: {} }, '/body/cron'],
        [{ cron: '0 7 * * *', every_minutes: 5, job: {} }, '/body/cron'],
        // Six fields (seconds first) would fire every second: schedules have minute resolution.
        [{ cron: '* * * * * *', job: {} }, '/body/cron'],
        [{ cron: '*/5 * * * * *', job: {} }, '/body/cron'],
        [{ job: {} }, '/body/cron'],
        [{ cron: '0 7 * * *', timezone: 'Mars/Olympus', job: {} }, '/body/timezone'],
        [{ every_minutes: 0, job: {} }, '/body/every_minutes'],
        [{ cron: '0 7 * * *', job: { url: 'ftp://example.com/' } }, '/body/job'],
      ];
      for (const [body, path] of cases) {
        const problem = assertProblem(await post(body, '/schedules'), 422);
        assert.ok((problem.errors ?? []).some((e: { path: string }) => e.path.startsWith(path)) || path === '/body/job', `${JSON.stringify(body)}: ${JSON.stringify(problem)}`);
      }
      const deleted = await app.inject({ method: 'DELETE', url: `/schedules/${schedule.id}` });
      assert.deepEqual(deleted.json(), { id: schedule.id, deleted: true });
      assertProblem(await app.inject({ url: `/schedules/${schedule.id}` }), 404);
    });
  });
}
