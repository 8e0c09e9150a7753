// Jobs as the API shows them, and a crawl's frontier, in the relational database (PostgreSQL or PGlite).
import { pagedList } from '../db/paged-list.js';
import { hostname } from 'node:os';
import type { Database, Queryable } from '../db/database.js';
import { redactUrl, splitSecrets } from '../redact.js';
import type { Job, JobListQuery, JobRequest, JobStatus } from './job-schema.js';

/** Who settles a frontier page: this process, as "host:pid". */
export const WORKER = `${hostname()}:${process.pid}`;

const isoTime = (column: string) => `to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;

const JOB_COLUMNS = `id, kind, status, source_url, request, schedule_id, attempts,
  pages_done, pages_discovered, pages_failed, pages_blocked, products_found, products_created, products_updated,
  articles_found, articles_created, articles_updated, links_over_max_pages, links_over_max_depth, seeding, log_ids, error, ${isoTime('created_at')} AS created_at, ${isoTime('started_at')} AS started_at,
  ${isoTime('finished_at')} AS finished_at, ${isoTime('updated_at')} AS updated_at`;

interface JobRow {
  id: string;
  kind: 'scrape' | 'crawl';
  status: JobStatus;
  source_url: string;
  request: JobRequest;
  schedule_id: string | null;
  attempts: number;
  pages_done: number;
  pages_discovered: number;
  pages_failed: number;
  pages_blocked: number;
  products_found: number;
  products_created: number;
  products_updated: number;
  articles_found: number;
  articles_created: number;
  articles_updated: number;
  links_over_max_pages: number;
  links_over_max_depth: number;
  seeding: boolean;
  log_ids: string[] | string;
  error: Job['error'];
  created_at: string;
  started_at: string | null;
  finished_at: string | null;
  updated_at: string;
}

export const FINAL_STATUSES: ReadonlySet<JobStatus> = new Set(['succeeded', 'failed', 'cancelled']);

export interface NewJob {
  id: string;
  kind: 'scrape' | 'crawl';
  sourceUrl: string;
  request: JobRequest;
  scheduleId: string | null;
}

/** How a frontier page ended, as its row keeps it. */
export interface PageOutcome {
  status: 'done' | 'failed';
  pageType?: string;
  products?: number;
  items?: unknown[];
  articles?: unknown[];
  error?: unknown;
  durationMs?: number;
  siteRuleWarning?: string | null;
}

/** What one step of a job adds to its counters. */
export interface ProgressDelta {
  pagesDone?: number;
  pagesDiscovered?: number;
  pagesFailed?: number;
  /** Of the failed pages, those that met a wall (counted in pagesFailed too). */
  pagesBlocked?: number;
  productsFound?: number;
  created?: number;
  updated?: number;
  articlesFound?: number;
  articlesCreated?: number;
  articlesUpdated?: number;
  linksOverMaxPages?: number;
  linksOverMaxDepth?: number;
}

export interface FrontierEntry {
  id: string;
  url_key: string;
  url: string;
  depth: number;
}

export interface FrontierPage {
  url: string;
  status: 'done' | 'failed';
  page_type: string | null;
  items: unknown[] | null;
  /** The page's articles as its log keeps them (run-log.ts). */
  articles: unknown[] | null;
  error: unknown;
  /** What the page's site rule found nothing for (run-log.ts siteRuleWarning). */
  site_rule_warning: string | null;
}

export interface JobStore {
  create(job: NewJob, tx?: Queryable): Promise<Job>;
  get(id: string, tx?: Queryable): Promise<Job | undefined>;
  list(query: JobListQuery): Promise<{ items: Job[]; total: number }>;
  /** queued -> running (or a retry of a running scrape): counts the attempt. Undefined when the job is over. */
  start(id: string): Promise<Job | undefined>;
  /** Adds to the counters; answers how many frontier pages are still pending afterwards. */
  addProgress(id: string, delta: ProgressDelta, tx?: Queryable): Promise<{ pending: number }>;
  addLog(id: string, logId: string, tx?: Queryable): Promise<void>;
  /** Ends a job that has not ended yet; undefined when another process ended it first. */
  finish(id: string, status: 'succeeded' | 'failed' | 'cancelled', error?: Job['error'], tx?: Queryable): Promise<Job | undefined>;
  /** Locks the job row for the rest of the transaction: frontier growth of one crawl is serialised. */
  lock(id: string, tx: Queryable): Promise<Job | undefined>;
  /** A sign of life from a step that changes nothing else for a while (a crawl reading its sitemaps). */
  touch(id: string): Promise<void>;
  /**
   * Crawls still running whose frontier has nothing left to do (a finisher that died). A crawl with no
   * frontier yet, or whose seed still reads the sitemaps, is seeding, not stalled: its seed's own message
   * answers for it.
   */
  stalledCrawls(): Promise<string[]>;
  /** Marks a crawl as still reading its sitemaps (its start page already in the frontier), or as done with them. */
  setSeeding(id: string, seeding: boolean, tx?: Queryable): Promise<void>;
  /** Whether a crawl's seed has put in its frontier all it will: a frontier exists and no sitemap is still being read. */
  seeded(id: string): Promise<boolean>;
  /** Scrape jobs marked running whose last change is older than `seconds` (their worker may be gone). */
  quietRunning(seconds: number): Promise<Job[]>;

  /**
   * Adds URLs to a crawl's frontier, each once, as many as its `maxPages` budget has room for (the first
   * ones); answers the ones that were added. The caller holds the job row's lock.
   */
  addToFrontier(jobId: string, entries: readonly FrontierEntry[], maxPages: number, tx: Queryable): Promise<FrontierEntry[]>;
  /** Marks a frontier page done or failed; false when it was not pending (a retry after a crash, say). */
  settlePage(pageId: string, outcome: PageOutcome, tx: Queryable): Promise<boolean>;
  /**
   * Whether a frontier page is still to be fetched, read fresh before each fetch (one primary-key
   * lookup): a redelivered message whose page is already settled, or a page of a crawl that has ended or
   * whose cancel was requested, fetches nothing.
   */
  pageOpen(pageId: string): Promise<boolean>;
  /** Ids of a crawl's pending pages, `limit` at most, after `after` (ids in order): read in slices. */
  pendingPageIds(jobId: string, slice?: { after?: string; limit?: number }): Promise<string[]>;
  /** What a crawl still waits for: its pending pages, and its seed (as one) while it reads the sitemaps. */
  pendingCount(jobId: string, tx?: Queryable): Promise<number>;
  /** Whether a crawl has any frontier row yet (none until its seed has queued its start page). */
  hasFrontier(jobId: string): Promise<boolean>;
  /** The crawl's settled pages (done or failed), what its log is made of; pending ones are not read. */
  pages(jobId: string): Promise<FrontierPage[]>;
  /** The request as sent, passwords in URLs included: what a worker runs (Job.request shows them redacted). */
  runRequest(id: string, tx?: Queryable): Promise<JobRequest | undefined>;
}

function toJob(row: JobRow): Job {
  return {
    id: row.id,
    kind: row.kind,
    status: row.status,
    source_url: row.source_url,
    request: row.request as Job['request'],
    schedule_id: row.schedule_id,
    attempts: row.attempts,
    progress: {
      pages_done: row.pages_done,
      pages_discovered: row.pages_discovered,
      pages_failed: row.pages_failed,
      pages_blocked: row.pages_blocked,
      products_found: row.products_found,
      created: row.products_created,
      updated: row.products_updated,
      articles_found: row.articles_found,
      articles_created: row.articles_created,
      articles_updated: row.articles_updated,
      links_over_max_pages: row.links_over_max_pages,
      links_over_max_depth: row.links_over_max_depth,
      reading_sitemaps: row.seeding,
    },
    log_ids: parseUuidArray(row.log_ids),
    error: row.error,
    created_at: row.created_at,
    started_at: row.started_at,
    finished_at: row.finished_at,
    updated_at: row.updated_at,
  };
}

/** node-postgres parses uuid[] into an array; PGlite may hand back the text form "{a,b}". */
function parseUuidArray(value: string[] | string): string[] {
  if (Array.isArray(value)) return value;
  const inner = value.replace(/^\{|\}$/g, '');
  return inner === '' ? [] : inner.split(',');
}

export function createJobStore(db: Database): JobStore {
  const one = async (sql: string, params: unknown[], tx: Queryable = db): Promise<Job | undefined> => {
    const rows = await tx.query<JobRow>(sql, params);
    return rows[0] === undefined ? undefined : toJob(rows[0]);
  };

  return {
    async create(job, tx) {
      // A URL's password is kept apart (request_private), used to run the job and never served.
      const request = splitSecrets(job.request);
      return (await one(
        `INSERT INTO jobs (id, kind, status, source_url, request, request_private, schedule_id) VALUES ($1, $2, 'queued', $3, $4, $5, $6) RETURNING ${JOB_COLUMNS}`,
        [job.id, job.kind, redactUrl(job.sourceUrl), JSON.stringify(request.shown), request.hidden === null ? null : JSON.stringify(request.hidden), job.scheduleId],
        tx,
      ))!;
    },

    async runRequest(id, tx = db) {
      const [row] = await tx.query<{ request: JobRequest }>('SELECT COALESCE(request_private, request) AS request FROM jobs WHERE id = $1', [id]);
      return row?.request;
    },

    get: (id, tx) => one(`SELECT ${JOB_COLUMNS} FROM jobs WHERE id = $1`, [id], tx),

    async list(query) {
      const conditions: string[] = [];
      const params: unknown[] = [];
      const add = (sql: (p: string) => string, value: unknown) => {
        params.push(value);
        conditions.push(sql(`$${params.length}`));
      };
      if (query.status !== undefined) add((p) => `status = ${p}`, query.status);
      if (query.source !== undefined) add((p) => `source_url = ${p}`, query.source);
      if (query.schedule_id !== undefined) add((p) => `schedule_id = ${p}::uuid`, query.schedule_id);
      const where = conditions.length === 0 ? '' : `WHERE ${conditions.join(' AND ')}`;
      const page = await pagedList<JobRow>(db, {
        columns: JOB_COLUMNS,
        from: `FROM jobs ${where}`,
        params,
        orderBy: 'jobs.created_at DESC, id DESC',
        limit: query.limit,
        offset: query.offset,
      });
      return { items: page.items.map(toJob), total: page.total };
    },

    start: (id) =>
      one(
        `UPDATE jobs SET status = 'running', attempts = attempts + 1, started_at = COALESCE(started_at, now()), updated_at = now()
         WHERE id = $1 AND status IN ('queued', 'running') RETURNING ${JOB_COLUMNS}`,
        [id],
      ),

    async addProgress(id, d, tx = db) {
      const [row] = await tx.query<{ pending: number }>(
        `UPDATE jobs SET pages_done = pages_done + $2, pages_discovered = pages_discovered + $3, pages_failed = pages_failed + $4,
           products_found = products_found + $5, products_created = products_created + $6, products_updated = products_updated + $7,
           articles_found = articles_found + $8, articles_created = articles_created + $9, articles_updated = articles_updated + $10,
           links_over_max_pages = links_over_max_pages + $11, links_over_max_depth = links_over_max_depth + $12,
           pages_blocked = pages_blocked + $13, updated_at = now()
         WHERE id = $1 RETURNING pages_discovered - pages_done - pages_failed AS pending`,
        [
          id,
          d.pagesDone ?? 0,
          d.pagesDiscovered ?? 0,
          d.pagesFailed ?? 0,
          d.productsFound ?? 0,
          d.created ?? 0,
          d.updated ?? 0,
          d.articlesFound ?? 0,
          d.articlesCreated ?? 0,
          d.articlesUpdated ?? 0,
          d.linksOverMaxPages ?? 0,
          d.linksOverMaxDepth ?? 0,
          d.pagesBlocked ?? 0,
        ],
      );
      return { pending: row?.pending ?? 0 };
    },

    async addLog(id, logId, tx = db) {
      await tx.query(`UPDATE jobs SET log_ids = array_append(log_ids, $2::uuid), updated_at = now() WHERE id = $1 AND NOT ($2::uuid = ANY (log_ids))`, [id, logId]);
    },

    finish: (id, status, error, tx) =>
      one(
        `UPDATE jobs SET status = $2, error = $3, finished_at = now(), updated_at = now()
         WHERE id = $1 AND status IN ('queued', 'running') RETURNING ${JOB_COLUMNS}`,
        [id, status, error === undefined || error === null ? null : JSON.stringify(error)],
        tx,
      ),

    lock: (id, tx) => one(`SELECT ${JOB_COLUMNS} FROM jobs WHERE id = $1 FOR UPDATE`, [id], tx),

    async touch(id) {
      await db.query(`UPDATE jobs SET updated_at = now() WHERE id = $1 AND status IN ('queued', 'running')`, [id]);
    },

    async stalledCrawls() {
      const rows = await db.query<{ id: string }>(
        `SELECT id FROM jobs j WHERE kind = 'crawl' AND status = 'running' AND updated_at < now() - interval '5 seconds'
           AND NOT seeding AND EXISTS (SELECT 1 FROM crawl_frontier f WHERE f.job_id = j.id)
           AND NOT EXISTS (SELECT 1 FROM crawl_frontier f WHERE f.job_id = j.id AND f.status = 'pending')`,
      );
      return rows.map((r) => r.id);
    },

    async setSeeding(id, seeding, tx = db) {
      await tx.query('UPDATE jobs SET seeding = $2, updated_at = now() WHERE id = $1', [id, seeding]);
    },

    async seeded(id) {
      const [row] = await db.query<{ seeded: boolean }>(
        'SELECT NOT seeding AND EXISTS (SELECT 1 FROM crawl_frontier f WHERE f.job_id = j.id) AS seeded FROM jobs j WHERE id = $1',
        [id],
      );
      return row?.seeded === true;
    },

    async quietRunning(seconds) {
      const rows = await db.query<JobRow>(`SELECT ${JOB_COLUMNS} FROM jobs WHERE status IN ('queued', 'running') AND updated_at < now() - make_interval(secs => $1)`, [seconds]);
      return rows.map(toJob);
    },

    async addToFrontier(jobId, entries, maxPages, tx) {
      if (entries.length === 0) return [];
      // The budget counts what the crawl discovered so far (crawl-page-store.ts counts the same way); URLs
      // the frontier knows already take none of it.
      return tx.query<FrontierEntry>(
        `INSERT INTO crawl_frontier (id, job_id, url_key, url, depth, status)
         SELECT e.id, $1, e.url_key, e.url, e.depth, 'pending'
           FROM unnest($2::uuid[], $3::text[], $4::text[], $5::int[]) WITH ORDINALITY AS e (id, url_key, url, depth, n)
          WHERE NOT EXISTS (SELECT 1 FROM crawl_frontier f WHERE f.job_id = $1 AND f.url_key = e.url_key)
          ORDER BY e.n LIMIT (SELECT greatest(0, $6::int - pages_discovered) FROM jobs WHERE id = $1)
         ON CONFLICT (job_id, url_key) DO NOTHING
         RETURNING id, url_key, url, depth`,
        [jobId, entries.map((e) => e.id), entries.map((e) => e.url_key), entries.map((e) => e.url), entries.map((e) => e.depth), maxPages],
      );
    },

    async settlePage(pageId, outcome, tx) {
      const rows = await tx.query(
        `UPDATE crawl_frontier SET status = $2, page_type = $3, products = $4, items = $5, error = $6, worker = $7, duration_ms = $8, articles = $9, site_rule_warning = $10, finished_at = now()
         WHERE id = $1 AND status = 'pending' RETURNING id`,
        [
          pageId,
          outcome.status,
          outcome.pageType ?? null,
          outcome.products ?? 0,
          outcome.items === undefined ? null : JSON.stringify(outcome.items),
          outcome.error === undefined ? null : JSON.stringify(outcome.error),
          WORKER,
          outcome.durationMs ?? null,
          outcome.articles === undefined ? null : JSON.stringify(outcome.articles),
          outcome.siteRuleWarning ?? null,
        ],
      );
      return rows.length > 0;
    },

    async pageOpen(pageId) {
      const rows = await db.query(
        `SELECT 1 FROM crawl_frontier f JOIN jobs j ON j.id = f.job_id
          WHERE f.id = $1 AND f.status = 'pending' AND j.status IN ('queued', 'running') AND NOT EXISTS (SELECT 1 FROM job_cancel_requests c WHERE c.job_id = j.id)`,
        [pageId],
      );
      return rows.length > 0;
    },

    async pendingPageIds(jobId, slice = {}) {
      const rows = await db.query<{ id: string }>(
        `SELECT id FROM crawl_frontier WHERE job_id = $1 AND status = 'pending' AND ($2::uuid IS NULL OR id > $2::uuid) ORDER BY id LIMIT $3`,
        [jobId, slice.after ?? null, slice.limit ?? null],
      );
      return rows.map((r) => r.id);
    },

    async pendingCount(jobId, tx = db) {
      const [row] = await tx.query<{ n: number }>(
        `SELECT (SELECT count(*)::int FROM crawl_frontier WHERE job_id = $1 AND status = 'pending') + coalesce((SELECT seeding::int FROM jobs WHERE id = $1), 0) AS n`,
        [jobId],
      );
      return row?.n ?? 0;
    },

    async hasFrontier(jobId) {
      return (await db.query('SELECT 1 FROM crawl_frontier WHERE job_id = $1 LIMIT 1', [jobId])).length > 0;
    },

    pages: (jobId) =>
      db.query<FrontierPage>(
        `SELECT url, status, page_type, items, articles, error, site_rule_warning FROM crawl_frontier WHERE job_id = $1 AND status <> 'pending' ORDER BY depth, finished_at NULLS LAST, url_key`,
        [jobId],
      ),
  };
}
