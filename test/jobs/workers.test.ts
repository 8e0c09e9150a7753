// Several real processes on one PostgreSQL: workers sharing a 1000-page crawl, one killed mid-way, schedules, shutdown, a database that starts late.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { after, before, describe, test } from 'node:test';
import pg from 'pg';
import { catalogueBooks } from '../fixtures/books-catalogue.js';
import { startFixtureSite, type FixtureSite } from '../fixtures/site.js';
import { noPostgresBinaries } from '../helpers.js';
import { startThrowawayPostgres } from '../fixtures/throwaway-postgres.js';
import { MAIN_SERVER, TSX, freePort, startMainProcess, startWorkerProcess, type ServiceProcess, type WorkerProcess } from '../process-helpers.js';
import { spawn } from 'node:child_process';
import { until } from '../wait.js';

const pgUrl = process.env.TEST_DATABASE_URL ?? process.env.DATABASE_URL;
const skip = pgUrl === undefined ? 'several processes share one database only on PostgreSQL: set DATABASE_URL or TEST_DATABASE_URL' : false;

interface JobBody {
  id: string;
  status: string;
  attempts: number;
  progress: { pages_done: number; pages_discovered: number; pages_failed: number; products_found: number; created: number; updated: number };
}

const ENDED = new Set(['succeeded', 'failed', 'cancelled']);

async function untilEnded(base: string, id: string, withinMs: number): Promise<JobBody> {
  const deadline = Date.now() + withinMs;
  for (;;) {
    const job = (await (await fetch(`${base}/jobs/${id}`)).json()) as JobBody;
    if (ENDED.has(job.status)) return job;
    if (Date.now() > deadline) throw new Error(`job still ${job.status} after ${withinMs} ms: ${JSON.stringify(job)}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

async function postJson(url: string, body: unknown): Promise<{ status: number; body: Record<string, unknown> & { id: string } }> {
  const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> & { id: string } };
}

describe('workers: several processes on one PostgreSQL', { skip }, () => {
  let database: string;
  let url: string;
  let admin: pg.Client;
  let api: ServiceProcess;
  const workers: WorkerProcess[] = [];
  const sites: FixtureSite[] = [];

  const env = () => ({ DATABASE_URL: url, SCRAPE_ALLOW_PRIVATE_NETWORKS: 'true', WORKER_CONCURRENCY: '4', LOG_LEVEL: 'info' });
  const worker = async (extra: Record<string, string> = {}) => {
    const started = await startWorkerProcess({ ...env(), ...extra });
    workers.push(started);
    return started;
  };
  const stopWorkers = async () => {
    for (const w of workers) if (w.child.exitCode === null) w.child.kill('SIGKILL');
    await Promise.all(workers.map((w) => w.exited));
  };
  const query = async <R>(sql: string, params: unknown[] = []): Promise<R[]> => {
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      return (await client.query(sql, params)).rows as R[];
    } finally {
      await client.end();
    }
  };

  before(async () => {
    database = `workers_${randomBytes(5).toString('hex')}`;
    admin = new pg.Client({ connectionString: pgUrl });
    await admin.connect();
    await admin.query(`CREATE DATABASE ${database}`);
    const parsed = new URL(pgUrl!);
    parsed.pathname = `/${database}`;
    url = parsed.href;
    // The API alone: jobs are queued here and run by the worker processes.
    api = await startMainProcess({ DATABASE_URL: url, WORKERS: '0', SCRAPE_ALLOW_PRIVATE_NETWORKS: 'true' });
  });

  after(async () => {
    for (const w of workers) if (w.child.exitCode === null) w.child.kill('SIGKILL');
    api?.child.kill('SIGKILL');
    await Promise.all([...workers.map((w) => w.exited), api?.exited]);
    for (const site of sites) await site.close();
    await admin.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`).catch(() => undefined);
    await admin.end();
  });

  test('three worker processes crawl a 1050-page site with its sitemap: every page fetched once, every product stored once, counts add up', async () => {
    const site = await startFixtureSite({ catalogue: { pages: 50, perPage: 20 } });
    sites.push(site);
    await Promise.all([worker(), worker(), worker()]);
    const queued = await postJson(`${api.base}/jobs`, {
      url: `${site.url}books/`,
      crawl: { sitemap: true, max_pages: 5000, include: ['/books/**'], exclude: ['**/category/**'] },
    });
    assert.equal(queued.status, 202, JSON.stringify(queued.body));
    const job = await untilEnded(api.base, queued.body.id, 240_000);
    assert.equal(job.status, 'succeeded', JSON.stringify(job));

    const pages = [...site.hits].filter(([path]) => path.startsWith('/books/'));
    // What is guaranteed: a page is stored once, and never fetched again once stored (each delivery reads
    // its row first). A delivery whose claim lapsed under load (no heartbeat for the queue's interval) is
    // handed to another worker, which may fetch that page again: only such a retried page may show twice.
    const twice = pages.filter(([, n]) => n > 1).map(([path]) => path);
    const retried = await query<{ url: string }>(
      `SELECT f.url FROM crawl_frontier f JOIN pgboss.job q ON q.id = f.id AND q.name = 'crawl-page' WHERE f.job_id = $1 AND q.retry_count > 0`,
      [job.id],
    );
    const retriedPaths = new Set(retried.map((row) => new URL(row.url).pathname));
    assert.deepEqual(
      twice.filter((path) => !retriedPaths.has(path)),
      [],
      'no page fetched twice unless the queue handed its delivery out again',
    );
    assert.ok(pages.length >= 1050, `${pages.length} pages fetched`);
    assert.equal(job.progress.pages_done, pages.length);
    assert.equal(job.progress.pages_failed, 0);
    assert.equal(job.progress.pages_discovered, job.progress.pages_done);

    const [products] = await query<{ n: number; distinct_urls: number }>(
      `SELECT count(*)::int AS n, count(DISTINCT source_url)::int AS distinct_urls FROM products WHERE source_url LIKE $1`,
      [`${site.url}books/catalogue/%`],
    );
    assert.deepEqual(products, { n: 1000, distinct_urls: 1000 }, 'each of the 1000 books stored once');
    assert.equal(job.progress.created, 1000);
    assert.equal(job.progress.products_found, job.progress.created + job.progress.updated);
    const shared = await query<{ worker: string; pages: number }>('SELECT worker, count(*)::int AS pages FROM crawl_frontier WHERE job_id = $1 GROUP BY worker', [job.id]);
    assert.equal(shared.length, 3, `pages per worker: ${JSON.stringify(shared)}`);
  });

  test('three worker processes crawl a books-like catalogue without a sitemap (a 50-page "next" chain, categories beside it): every listing page and every book, and no limit cut anything', async () => {
    const catalogue = { pages: 50, perPage: 8 };
    const site = await startFixtureSite({ catalogue, sitemap: false, categories: true });
    sites.push(site);
    while (workers.filter((w) => w.child.exitCode === null).length < 3) await worker();
    const queued = await postJson(`${api.base}/jobs`, { url: `${site.url}books/`, crawl: { max_depth: 100, max_pages: 5000 } });
    assert.equal(queued.status, 202, JSON.stringify(queued.body));
    const job = (await untilEnded(api.base, queued.body.id, 600_000)) as JobBody & { progress: { links_over_max_pages: number; links_over_max_depth: number } };
    assert.equal(job.status, 'succeeded', JSON.stringify(job));
    const listings = Array.from({ length: catalogue.pages - 1 }, (_, i) => `/books/catalogue/page-${i + 2}.html`).filter((path) => !site.hits.has(path));
    assert.deepEqual(listings, [], 'every listing page fetched');
    const books = catalogueBooks(catalogue).filter((book) => !site.hits.has(`/books/${book.detailPath}`));
    assert.deepEqual(
      books.map((book) => book.detailPath),
      [],
      'every book fetched',
    );
    assert.equal(job.progress.pages_failed, 0);
    assert.deepEqual([job.progress.links_over_max_pages, job.progress.links_over_max_depth], [0, 0]);
  });

  test('kill -9 of the only worker while it holds claimed crawl pages: another takes them over, each finished once, one product per book', async () => {
    // The workers of the previous test stop first: the victim is the only process that can claim pages.
    await stopWorkers();
    const site = await startFixtureSite({ catalogue: { pages: 10, perPage: 20 }, latencyMs: 60 });
    sites.push(site);
    const victim = await worker();
    const queued = await postJson(`${api.base}/jobs`, {
      url: `${site.url}books/`,
      crawl: { sitemap: true, max_pages: 1000, include: ['/books/**'], exclude: ['**/category/**'] },
    });
    // Mid-crawl, and mid-fetch: some pages done, and the site answering the victim right now.
    await until('the victim to be fetching pages mid-crawl', async () => {
      const job = (await (await fetch(`${api.base}/jobs/${queued.body.id}`)).json()) as JobBody;
      return job.progress.pages_done >= 40 && site.inFlight().some((path) => path.startsWith('/books/'));
    });
    victim.child.kill('SIGKILL');
    await victim.exited;
    // What it held when it died: page deliveries the queue had handed out and not seen finished. A
    // delivery is finished with its batch, so some may be pages the victim had already stored.
    const held = await query<{ id: string }>(`SELECT id FROM pgboss.job WHERE name = 'crawl-page' AND state = 'active' AND data->>'job_id' = $1`, [queued.body.id]);
    const unsettled = (await query<{ id: string }>(`SELECT id FROM crawl_frontier WHERE id = ANY($1::uuid[]) AND status = 'pending'`, [held.map((h) => h.id)])).map(
      (row) => row.id,
    );
    assert.ok(unsettled.length > 0, 'the victim held claimed pages it had not stored at the kill');
    const storedBefore = held.length - unsettled.length;

    const survivor = await worker(); // the dead worker's pages come back once their heartbeat lapses
    const job = await untilEnded(api.base, queued.body.id, 180_000);
    assert.equal(job.status, 'succeeded', JSON.stringify(job));
    const takenOver = await query<{ status: string; worker: string }>('SELECT status, worker FROM crawl_frontier WHERE id = ANY($1::uuid[])', [unsettled]);
    assert.deepEqual(
      takenOver,
      unsettled.map(() => ({ status: 'done', worker: `${hostname()}:${survivor.child.pid}` })),
      `every page the victim held and had not stored was finished by the survivor (${storedBefore} of ${held.length} it had stored)`,
    );
    const storedByVictim = await query<{ url: string }>(`SELECT url FROM crawl_frontier WHERE id = ANY($1::uuid[]) AND NOT (id = ANY($2::uuid[]))`, [
      held.map((h) => h.id),
      unsettled,
    ]);
    for (const { url } of storedByVictim) assert.equal(site.hits.get(new URL(url).pathname), 1, `${url}: stored by the victim, its delivery handed out again, not fetched again`);
    const [frontier] = await query<{ pending: number; failed: number; done: number }>(
      `SELECT count(*) FILTER (WHERE status = 'pending')::int AS pending, count(*) FILTER (WHERE status = 'failed')::int AS failed,
              count(*) FILTER (WHERE status = 'done')::int AS done FROM crawl_frontier WHERE job_id = $1`,
      [job.id],
    );
    assert.deepEqual(frontier, { pending: 0, failed: 0, done: job.progress.pages_done }, 'no page lost, each counted once');
    const detail = [...site.hits].filter(([path]) => path.startsWith('/books/catalogue/') && path.endsWith('/index.html'));
    assert.equal(detail.length, 200, 'every detail page fetched');
    const [products] = await query<{ n: number; distinct_urls: number }>(
      `SELECT count(*)::int AS n, count(DISTINCT source_url)::int AS distinct_urls FROM products WHERE source_url LIKE $1`,
      [`${site.url}books/catalogue/%`],
    );
    assert.deepEqual(products, { n: 200, distinct_urls: 200 }, 'no product twice');
    // The job's own counts agree: one product created per book, every sighting counted once.
    assert.equal(job.progress.created, detail.length, 'created == the books (detail pages)');
    assert.equal(job.progress.products_found, job.progress.created + job.progress.updated);
  });

  test('SIGTERM: a worker hands its unfinished job back within the grace period and exits; another finishes it', async () => {
    await stopWorkers();
    const site = await startFixtureSite();
    sites.push(site);
    // The page stays unanswered until the test releases it: the worker can only stop by handing the job back.
    const page = site.hold('/pages/opengraph.html');
    const first = await worker();
    const queued = await postJson(`${api.base}/jobs`, { url: `${site.url}pages/opengraph.html`, timeout_ms: 60_000 });
    await until('the first worker to be fetching the held page', () => site.inFlight().includes('/pages/opengraph.html'));
    first.child.kill('SIGTERM');
    const { code } = await first.exited;
    assert.equal(code, 0, first.output());
    assert.match(first.output(), /worker service stopped/);
    assert.equal(site.bytesSent.get('/pages/opengraph.html'), undefined, 'it stopped while the page was still unanswered');
    const handedBack = (await (await fetch(`${api.base}/jobs/${queued.body.id}`)).json()) as JobBody;
    assert.notEqual(handedBack.status, 'succeeded');
    page.release();
    await worker();
    const job = await untilEnded(api.base, queued.body.id, 90_000);
    assert.equal(job.status, 'succeeded', JSON.stringify(job));
    assert.equal(job.attempts, 2, 'the second worker ran the job the first handed back');
  });

  test('a schedule fires once per due time with two workers; a paused one does not fire', async () => {
    const site = await startFixtureSite();
    sites.push(site);
    while (workers.filter((w) => w.child.exitCode === null).length < 2) await worker();
    const every = await postJson(`${api.base}/schedules`, { cron: '* * * * *', job: { url: `${site.url}pages/opengraph.html` } });
    const paused = await postJson(`${api.base}/schedules`, { cron: '* * * * *', paused: true, job: { url: `${site.url}pages/microdata.html` } });
    assert.equal(every.status, 201, JSON.stringify(every.body));
    const runs = async (id: string) => (await query<{ n: number }>('SELECT count(*)::int AS n FROM jobs WHERE schedule_id = $1', [id]))[0]!.n;
    const minutes = async () =>
      (
        await query<{ minute: string }>(`SELECT to_char(date_trunc('minute', created_at), 'HH24:MI') AS minute FROM jobs WHERE schedule_id = $1 ORDER BY created_at`, [
          every.body.id,
        ])
      ).map((row) => row.minute);
    // The time shown is the time it runs: the next minute boundary, never one already begun.
    const shown = Date.parse(String(every.body.next_run_at));
    assert.ok(shown > Date.parse(String(every.body.created_at)) && shown % 60_000 === 0, JSON.stringify(every.body));
    // Three due minutes, the first included: each was watched from before it began until after the next
    // one fired, so a second job for any of the first two would be here.
    const fired = await until(
      'jobs of three due minutes',
      async () => {
        const seen = await minutes();
        return new Set(seen).size >= 3 ? seen : false;
      },
      { withinMs: 240_000, everyMs: 500 },
    );
    const createdAt = (await query<{ at: Date }>('SELECT min(created_at) AS at FROM jobs WHERE schedule_id = $1', [every.body.id]))[0]!.at;
    assert.ok(createdAt.getTime() >= shown, `the first job started at ${createdAt.toISOString()}, before the time shown (${every.body.next_run_at})`);
    assert.equal(new Set(fired).size, fired.length, `one job per due minute: ${fired.join(', ')}`);
    assert.equal(await runs(paused.body.id), 0, 'the paused schedule never fired');
    const schedule = (await (await fetch(`${api.base}/schedules/${every.body.id}`)).json()) as { runs: number; last_job_id: string };
    assert.equal(schedule.runs, fired.length);
    const jobs = (await (await fetch(`${api.base}/jobs?schedule_id=${every.body.id}`)).json()) as Array<{ id: string }>;
    assert.equal(jobs[0]?.id, schedule.last_job_id, 'the schedule records the jobs it started');
    await fetch(`${api.base}/schedules/${every.body.id}`, { method: 'DELETE' });
  });
});

describe('a database that starts after the services', { skip: noPostgresBinaries }, () => {
  test('the API and a worker stay up, answer /health 503 naming the database, and become healthy when it answers', async (t) => {
    const server = await startThrowawayPostgres();
    t.after(() => server.remove());
    await server.stop('fast');
    const port = await freePort();
    // The API alone, so the job below can only be run by the worker that started before its database.
    const env = { PATH: process.env.PATH ?? '', DATABASE_URL: server.url, PORT: String(port), LOG_LEVEL: 'warn', SCRAPE_ALLOW_PRIVATE_NETWORKS: 'true', WORKERS: '0' };
    const main = spawn(process.execPath, ['--import', TSX, MAIN_SERVER], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    main.stdout.on('data', (c: Buffer) => (output += c.toString()));
    main.stderr.on('data', (c: Buffer) => (output += c.toString()));
    t.after(() => {
      main.kill('SIGKILL');
    });
    const lateWorker = await startWorkerProcess({ DATABASE_URL: server.url, LOG_LEVEL: 'info', SCRAPE_ALLOW_PRIVATE_NETWORKS: 'true' }, { waitReady: false });
    t.after(() => {
      lateWorker.child.kill('SIGKILL');
    });
    const base = `http://127.0.0.1:${port}`;
    const health = await until('the API to listen', () => fetch(`${base}/health`), { withinMs: 120_000, everyMs: 100 }).catch((error: Error) =>
      assert.fail(`${error.message}\n${output}`),
    );
    assert.equal(health.status, 503);
    const body = (await health.json()) as { status: string; checks: { relational: { status: string }; jobs: { detail: string } } };
    assert.equal(body.status, 'degraded');
    assert.equal(body.checks.relational.status, 'down');
    assert.match(body.checks.jobs.detail, /waiting for the database schema/);
    const write = await fetch(`${base}/products`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"title":"Early","price":1}' });
    assert.equal(write.status, 503);
    assert.equal(main.exitCode, null, 'the API did not exit');
    assert.equal(lateWorker.child.exitCode, null, `the worker exited:\n${lateWorker.output()}`);

    await server.start();
    const deadline = Date.now() + 30_000;
    let status = 0;
    while (Date.now() < deadline && status !== 200) {
      status = (await fetch(`${base}/health`)).status;
      if (status !== 200) await new Promise((r) => setTimeout(r, 250));
    }
    assert.equal(status, 200, `not healthy 30 s after the database started:\n${output}`);
    const created = await fetch(`${base}/products`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"title":"Late","price":2}' });
    assert.equal(created.status, 201);
    // The worker found the database too (its retries back off to 10 s at most), and runs jobs.
    const site = await startFixtureSite();
    t.after(() => site.close());
    const queued = await postJson(`${base}/jobs`, { url: `${site.url}pages/opengraph.html` });
    const job = await untilEnded(base, queued.body.id, 60_000);
    assert.equal(job.status, 'succeeded');
    assert.match(lateWorker.output(), /"worker ready"/);
  });
});
