// What a crawl's seed and its pages share in one process: the job as they need it, the fetch slots, queueing pages, ending the crawl; and the small helpers both use.
import { randomUUID } from 'node:crypto';
import type { Database } from '../db/queryable.js';
import { createHostLimiter, type HostLimiter } from '../egress/host-limiter.js';
import type { PageFetcher } from '../egress/page-fetcher.js';
import { problemRecord, type HttpProblem } from '../problems.js';
import type { Queryable } from '../db/queryable.js';
import type { Queue, WorkContext } from '../queue/queue.js';
import type { RunWriter } from '../recording/run-writer.js';
import type { LogStore } from '../scrape-logs/log-store.js';
import type { PageExtractor } from '../scraping/extract/pool.js';
import type { PageLoader } from '../scraping/page-loader.js';
import type { RunRef } from '../tracking/tracking-store.js';
import { normalizeTags } from '../tags/tag-schema.js';
import { canonicalUrl, urlKey } from '../url-identity/url-key.js';
import type { CancelRequests } from './cancel-requests.js';
import { crawlPolicy, type CrawlPolicy } from './crawl-policy.js';
import { writeCrawlLog } from './crawl-log.js';
import type { HostPace } from './host-politeness.js';
import { JOB_QUEUES, type QueuedPage } from './job-queues.js';
import type { Job, JobRequest } from './job-schema.js';
import { FINAL_STATUSES, type FrontierEntry, type JobStore } from './job-store.js';

const NO_FRONTIER: NonNullable<Job['error']> = {
  type: 'urn:data-aggregator:problem:crawl-not-seeded',
  status: 503,
  detail: 'The crawl ended before its first page was queued: the worker seeding it stopped and its retries ran out.',
};
const NO_PAGE_STORED: NonNullable<Job['error']> = {
  type: 'urn:data-aggregator:problem:crawl-empty',
  status: 502,
  detail: 'The crawl ended without storing any page.',
};

export interface CrawlRunnerDeps {
  db: Database;
  jobs: JobStore;
  logs: LogStore;
  queue: Pick<Queue, 'enqueue'>;
  fetcher: Pick<PageFetcher, 'fetchResource' | 'robots'>;
  loader: PageLoader;
  extract: PageExtractor;
  /** The write path: a page's products and articles with its bookkeeping, in one transaction. */
  writer: RunWriter;
  pace: HostPace;
  /** Tells in-process listeners (live progress streams) that a job changed. */
  changed: (jobId: string) => void;
  /** Cancels of crawls, seen before the job row says so. */
  cancels: Pick<CancelRequests, 'heard'>;
  /** A signal for one delivery of one job: aborted with RunCancelled when the job was cancelled. */
  runSignal: (jobId: string, context: WorkContext) => AbortSignal & Disposable;
  /** `workerConcurrency`: the pages this process fetches at once, whatever their crawls and hosts. */
  settings: { allowPrivateNetworks: boolean; defaultTimeoutMs: number; workerConcurrency: number };
}

/** A crawl's job as its pages need it: the request, and its policy with the globs compiled. */
export interface RunningCrawl {
  job: Job;
  request: JobRequest;
  policy: CrawlPolicy;
}

/** The parts of a process's crawl runner its seed (crawl-seed.ts) and its pages (crawl-page.ts) share. */
export interface CrawlShared {
  deps: CrawlRunnerDeps;
  jobs: JobStore;
  /** The pages this process fetches at once, whatever their crawls and hosts. */
  fetchSlots: HostLimiter;
  /** Queues frontier pages in `tx`; the one continuing a listing chain (`nextKey`) first. */
  enqueuePages(jobId: string, entries: readonly FrontierEntry[], tx: Queryable, nextKey?: string | null): Promise<void>;
  /** Ends a crawl whose frontier has nothing pending: its log, its status, what its source no longer lists. */
  finishIfDone(jobId: string): Promise<void>;
  /** The crawl's job, read once per process and second, not per page. */
  crawlJob(jobId: string): Promise<RunningCrawl | undefined>;
}

export function createCrawlShared(deps: CrawlRunnerDeps): CrawlShared {
  const { jobs } = deps;
  // A slot is held while a page is fetched only: the queue hands this process more pages than it fetches
  // at once (job-system.ts), so a freed slot starts the next fetch at once while the page before it is
  // extracted and committed.
  const fetchSlots = createHostLimiter(Math.max(1, deps.settings.workerConcurrency));

  // The page that continues a listing chain ("next") is handed out before the pages found before it, as
  // a crawler reading a catalogue would: the chain is what leads on to everything else.
  const enqueuePages = (jobId: string, entries: readonly FrontierEntry[], tx: Queryable, nextKey: string | null = null) =>
    deps.queue.enqueue<QueuedPage>(
      JOB_QUEUES.page,
      entries.map((e) => ({ id: e.id, data: { id: e.id, job_id: jobId, url: e.url, depth: e.depth }, ...(e.url_key === nextKey ? { priority: 1 } : {}) })),
      { tx },
    );

  const finishIfDone = async (jobId: string): Promise<void> => {
    if ((await jobs.pendingCount(jobId)) > 0) return;
    const job = await jobs.get(jobId);
    if (job === undefined || FINAL_STATUSES.has(job.status)) return;
    const status = job.progress.pages_done > 0 ? 'succeeded' : 'failed';
    const pages = await jobs.pages(jobId);
    const firstError = pages.find((p) => p.status === 'failed')?.error as Job['error'] | undefined;
    // A failed job always says why: its first failed page's error, or that it had no page at all.
    const error = status === 'succeeded' ? null : (firstError ?? ((await jobs.hasFrontier(jobId)) ? NO_PAGE_STORED : NO_FRONTIER));
    // The log first, under the job's own id: a second finisher's write is refused, not doubled.
    await writeCrawlLog(deps.logs, job, pages, status, error);
    await deps.writer.transaction(async (writes, tx) => {
      const ended = await jobs.finish(jobId, status, error, tx);
      await jobs.addLog(jobId, jobId, tx);
      // Only a crawl that ended well says what its source no longer lists; a failed one counts for nothing.
      if (ended !== undefined && status === 'succeeded') await writes.finish(crawlRun(job));
    });
    deps.changed(jobId);
  };

  /**
   * A crawl's job as its pages need it (request, source, its policy with the globs compiled): read once
   * per process and second, not per page. Whether it was cancelled meanwhile is checked under the job
   * row's lock before the page's transaction commits.
   */
  const crawlJobs = new Map<string, { job: Job; request: JobRequest; policy: CrawlPolicy; until: number }>();
  const crawlJob = async (jobId: string): Promise<{ job: Job; request: JobRequest; policy: CrawlPolicy } | undefined> => {
    const cached = crawlJobs.get(jobId);
    if (cached !== undefined && cached.until > Date.now()) return cached;
    const [job, request] = await Promise.all([jobs.get(jobId), jobs.runRequest(jobId)]);
    if (crawlJobs.size > 100) crawlJobs.clear();
    if (job === undefined) return undefined;
    const run = request ?? job.request;
    const entry = { job, request: run, policy: crawlPolicy(run.url ?? job.source_url, run.crawl ?? {}), until: Date.now() + 1000 };
    crawlJobs.set(jobId, entry);
    return entry;
  };

  return { deps, jobs, fetchSlots, enqueuePages, finishIfDone, crawlJob };
}

/** A crawl as a run of its source: the job is the run, its start URL the source. */
export function crawlRun(job: Job): RunRef {
  return { id: job.id, source: canonicalUrl(job.source_url) ?? job.source_url, kind: 'scrape', tags: normalizeTags(job.request.tags ?? []) };
}

/** Each URL once, by its canonical key; ids are the queue messages' ids too. */
export function frontierEntries(candidates: ReadonlyArray<{ url: string; depth: number }>): FrontierEntry[] {
  const seen = new Set<string>();
  const entries: FrontierEntry[] = [];
  for (const { url, depth } of candidates) {
    const key = urlKey(url);
    if (key === null || seen.has(key)) continue;
    seen.add(key);
    entries.push({ id: randomUUID(), url_key: key, url, depth });
  }
  return entries;
}

export function errorOf(problem: HttpProblem): NonNullable<Job['error']> {
  return problemRecord(problem) as NonNullable<Job['error']>;
}
