// Job benches: a whole-site crawl of the local catalogue (listing + detail pages) run by 1 and 2 worker processes, and the queue's own cost.
import { randomUUID } from 'node:crypto';
import { createPostgresDatabase } from '../src/db/database.js';
import { JOB_POLICIES, JOB_QUEUES, type QueuedPage } from '../src/jobs/job-queues.js';
import { createPgBossQueue } from '../src/queue/pgboss-queue.js';
import { expect } from './client.js';
import type { BenchDatabase } from './database.js';
import { followBackendCpu, openBackendCpu } from './database-cpu.js';
import { cpuMs, rssMb } from './memory.js';
import { startChild, type Child } from './processes.js';
import { ROOT, SERVICE_LOG_LEVEL, startMain } from './services.js';
import type { SiteTraffic } from '../test/fixtures/site.js';

export interface JobCrawlFigures {
  label: string;
  workers: number;
  concurrency: number;
  /** Added to every response of the crawled site, ms (0: none). */
  latencyMs: number;
  pages: number;
  products: number;
  /** From the job's start to its end, as the job row records them. */
  ms: number;
  pagesPerSecond: number;
  /** Time a page spends in its handler until its results are written (fetch, extract), mean. */
  handlerMeanMs: number;
  footprint: CrawlFootprint;
  /** What the crawled site saw of the crawl (requests in flight, time to answer one), when the bench recorded it. */
  site?: SiteTraffic;
}

/** What a crawl cost the machine, from the job's submission to its end. */
export interface CrawlFootprint {
  /** 'none': a crawler that keeps no database (the Scrapy row). */
  backend: 'postgresql' | 'pglite' | 'none';
  /** CPU of the processes that crawl (the worker processes; on PGlite the service, database included; Scrapy's process), s. */
  serviceCpuS: number;
  /** CPU of the PostgreSQL backends of the bench's database (every client's: workers, the API, pg-boss), s; 0 on PGlite. */
  databaseCpuS: number;
  /** (service + database) CPU per 1,000 pages crawled, s. */
  cpuSPer1000Pages: number;
  /** Highest sum of the crawling processes' VmRSS, sampled every 100 ms, MB. */
  peakRssMb: number;
}

export interface QueueCostFigures {
  jobs: number;
  concurrency: number;
  ms: number;
  msPerJob: number;
}

interface JobAnswer {
  id: string;
  status: string;
  started_at: string | null;
  finished_at: string | null;
  progress: { pages_done: number; products_found: number };
}

async function startWorkers(count: number, databaseUrl: string, concurrency: number, cpuProfDir?: string): Promise<Child[]> {
  const profile = cpuProfDir === undefined ? [] : ['--cpu-prof', `--cpu-prof-dir=${cpuProfDir}`];
  const workers = Array.from({ length: count }, (_, i) =>
    startChild(
      `worker ${i + 1}`,
      [...profile, 'dist/worker/server.js'],
      {
        DATABASE_URL: databaseUrl,
        WORKER_CONCURRENCY: String(concurrency),
        // Info for the one "worker ready" line; a worker logs nothing per page.
        LOG_LEVEL: SERVICE_LOG_LEVEL === 'warn' ? 'info' : SERVICE_LOG_LEVEL,
        SCRAPE_ALLOW_PRIVATE_NETWORKS: 'true',
        MONGODB_URL: '',
      },
      ROOT,
    ),
  );
  const deadline = Date.now() + 60_000;
  while (!workers.every((w) => w.output().includes('"worker ready"'))) {
    if (Date.now() > deadline) throw new Error(`workers not ready: ${workers.map((w) => w.output()).join('\n')}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  return workers;
}

/** The crawl job every row runs: the catalogue's listing and detail pages from its sitemap and links. */
async function crawlCatalogue(apiUrl: string, siteUrl: string, label: string, expectedPages: number): Promise<{ job: JobAnswer; ms: number }> {
  const queued = await expect<JobAnswer>(202, 'POST', `${apiUrl}/jobs`, {
    url: `${siteUrl}books/`,
    crawl: { sitemap: true, max_pages: 5000, include: ['/books/**'], exclude: ['**/category/**'] },
  });
  let job = queued.body;
  const deadline = Date.now() + 600_000;
  while (!['succeeded', 'failed', 'cancelled'].includes(job.status)) {
    if (Date.now() > deadline) throw new Error(`${label}: the crawl did not end: ${JSON.stringify(job)}`);
    await new Promise((r) => setTimeout(r, 200));
    job = (await expect<JobAnswer>(200, 'GET', `${apiUrl}/jobs/${queued.body.id}`)).body;
  }
  if (job.status !== 'succeeded' || job.progress.pages_done < expectedPages) {
    throw new Error(`${label}: ${job.status} after ${job.progress.pages_done} pages, expected ${expectedPages}`);
  }
  return { job, ms: Date.parse(job.finished_at!) - Date.parse(job.started_at!) };
}

/** CPU and peak RSS of `pids` (and of the database's backends, when given) while `work` runs. */
async function withFootprint<T>(
  pids: number[],
  databaseUrl: string | undefined,
  work: () => Promise<T>,
): Promise<{ result: T; serviceCpuS: number; databaseCpuS: number; peakRssMb: number }> {
  const backends = databaseUrl === undefined ? undefined : await openBackendCpu(databaseUrl);
  try {
    const database = backends === undefined ? undefined : followBackendCpu(backends);
    const cpuOf = () => pids.reduce((sum, pid) => sum + cpuMs(pid), 0);
    const rss = () => pids.reduce((sum, pid) => sum + rssMb(pid), 0);
    let peakRssMb = rss();
    const timer = setInterval(() => {
      peakRssMb = Math.max(peakRssMb, rss());
    }, 100);
    const cpuBefore = cpuOf();
    try {
      const result = await work();
      const serviceCpuS = (cpuOf() - cpuBefore) / 1000;
      peakRssMb = Math.max(peakRssMb, rss());
      const databaseCpuS = database === undefined ? 0 : (await database.stop()) / 1000;
      return { result, serviceCpuS, databaseCpuS, peakRssMb };
    } finally {
      clearInterval(timer);
    }
  } finally {
    await backends?.close();
  }
}

function footprintOf(backend: CrawlFootprint['backend'], pages: number, f: { serviceCpuS: number; databaseCpuS: number; peakRssMb: number }): CrawlFootprint {
  return { backend, serviceCpuS: f.serviceCpuS, databaseCpuS: f.databaseCpuS, cpuSPer1000Pages: ((f.serviceCpuS + f.databaseCpuS) / pages) * 1000, peakRssMb: f.peakRssMb };
}

type MeasuredCrawl = Awaited<ReturnType<typeof withFootprint<{ job: JobAnswer; ms: number }>>>;

/** A crawl row from a measured crawl job: its `pages` counted by the caller, as its backend can. */
function crawlFigures(
  options: { label: string; concurrency: number; latencyMs: number },
  workers: number,
  backend: CrawlFootprint['backend'],
  measured: MeasuredCrawl,
  pages: number,
  handlerMeanMs: number,
): JobCrawlFigures {
  const { job, ms } = measured.result;
  return {
    label: options.label,
    workers,
    concurrency: options.concurrency,
    latencyMs: options.latencyMs,
    pages,
    products: job.progress.products_found,
    ms,
    pagesPerSecond: pages / (ms / 1000),
    handlerMeanMs,
    footprint: footprintOf(backend, pages, measured),
  };
}

/**
 * One crawl of `siteUrl`'s catalogue from its sitemap and links, run by `workers` fresh worker processes;
 * with `warmUpSiteUrl`, they first crawl that site's catalogue unmeasured (their code compiled and
 * optimised, their connections open), as a worker that has been running meets its next crawl.
 */
export async function measureJobCrawl(
  apiUrl: string,
  db: BenchDatabase,
  siteUrl: string,
  options: { label: string; workers: number; concurrency: number; expectedPages: number; latencyMs: number; warmUpSiteUrl?: string; cpuProfDir?: string },
): Promise<JobCrawlFigures> {
  const workers = await startWorkers(options.workers, db.url, options.concurrency, options.cpuProfDir);
  try {
    if (options.warmUpSiteUrl !== undefined) await crawlCatalogue(apiUrl, options.warmUpSiteUrl, `${options.label} (warm-up)`, options.expectedPages);
    const measured = await withFootprint(
      workers.map((w) => w.pid),
      db.url,
      () => crawlCatalogue(apiUrl, siteUrl, options.label, options.expectedPages),
    );
    const { rows } = await db.query('SELECT count(*)::int AS pages, coalesce(sum(duration_ms), 0)::float8 AS busy FROM crawl_frontier WHERE job_id = $1', [measured.result.job.id]);
    const { pages, busy } = rows[0] as { pages: number; busy: number };
    return crawlFigures(options, options.workers, 'postgresql', measured, pages, busy / pages);
  } finally {
    await Promise.all(workers.map((w) => w.stop()));
  }
}

/**
 * The same crawl on the embedded database: one main service on PGlite in `dataDir` runs it (its
 * own worker, `concurrency` pages at once), the database in its process; `warmUpSiteUrl` as for
 * measureJobCrawl.
 */
export async function measurePgliteJobCrawl(
  dataDir: string,
  siteUrl: string,
  options: { label: string; concurrency: number; expectedPages: number; latencyMs: number; warmUpSiteUrl?: string; cpuProfDir?: string },
): Promise<JobCrawlFigures> {
  const main = await startMain({
    label: 'PGlite crawl',
    dataDir,
    ...(options.cpuProfDir === undefined ? {} : { cpuProfDir: options.cpuProfDir }),
    demoSiteUrl: `${siteUrl}books/`,
    env: { WORKERS: '1', WORKER_CONCURRENCY: String(options.concurrency) },
  });
  try {
    if (options.warmUpSiteUrl !== undefined) await crawlCatalogue(main.url, options.warmUpSiteUrl, `${options.label} (warm-up)`, options.expectedPages);
    const measured = await withFootprint([main.child.pid], undefined, () => crawlCatalogue(main.url, siteUrl, options.label, options.expectedPages));
    return crawlFigures(options, 1, 'pglite', measured, measured.result.job.progress.pages_done, Number.NaN);
  } finally {
    await main.child.stop();
  }
}

/**
 * The queue's own cost per crawl page: `count` page jobs whose handler does nothing, queued at once
 * and worked off by one process with the workers' settings (claim in batches, complete, heartbeat).
 */
export async function measureQueueCost(databaseUrl: string, count: number, concurrency: number): Promise<QueueCostFigures> {
  const db = createPostgresDatabase(databaseUrl, { max: 2 });
  const queue = createPgBossQueue({ db, schema: 'bench_queue_cost' });
  try {
    queue.define(JOB_QUEUES.page, JOB_POLICIES[JOB_QUEUES.page]);
    await queue.start();
    let done = 0;
    let finished!: () => void;
    const all = new Promise<void>((resolve) => (finished = resolve));
    // As the workers claim crawl pages: in two batches of half the concurrency.
    await queue.work<QueuedPage>(JOB_QUEUES.page, { concurrency, batchSize: Math.max(1, Math.ceil(concurrency / 2)) }, async () => {
      done += 1;
      if (done === count) finished();
    });
    const pages = Array.from({ length: count }, () => ({ id: randomUUID(), job_id: randomUUID(), url: 'http://127.0.0.1/', depth: 1 }));
    const started = performance.now();
    await queue.enqueue<QueuedPage>(
      JOB_QUEUES.page,
      pages.map((data) => ({ id: data.id, data })),
    );
    await all;
    const ms = performance.now() - started;
    return { jobs: count, concurrency, ms, msPerJob: ms / count };
  } finally {
    await queue.stop(1000);
    await db.exec('DROP SCHEMA IF EXISTS bench_queue_cost CASCADE').catch(() => undefined);
    await db.close();
  }
}
