// The jobs of one process: stores, service and live events, its queues declared, and (where this process works) the runners.
import type { Database } from '../db/queryable.js';
import type { PageFetcher } from '../egress/page-fetcher.js';
import type { Queue } from '../queue/queue.js';
import type { RunWriter } from '../recording/run-writer.js';
import { interruptDeadRuns, type LogStore } from '../scrape-logs/log-store.js';
import type { PageExtractor } from '../scraping/extract/pool.js';
import type { PageLoader } from '../scraping/page-loader.js';
import type { Scraper } from '../scraping/scrape-run.js';
import { createCancelRequests } from './cancel-requests.js';
import { createCrawlRunner } from './crawl-runner.js';
import { createHostPace, type AutoThrottleSettings } from './host-politeness.js';
import { createJobEvents, type JobEvents } from './job-events.js';
import { JOB_POLICIES, JOB_QUEUES } from './job-queues.js';
import { createJobRunner, jobSignal } from './job-runner.js';
import { createJobService, type JobService } from './job-service.js';
import { createJobStore, type JobStore } from './job-store.js';
import { createScheduleStore, type ScheduleStore } from './schedule-store.js';

export interface JobSystem {
  jobs: JobStore;
  schedules: ScheduleStore;
  service: JobService;
  events: JobEvents;
  /** Handles jobs, crawl pages and schedules in this process, and sweeps what dead workers left. */
  work(): Promise<void>;
  /** Repairs what dead workers left, now (a working process does it every few seconds by itself). */
  sweep(): Promise<void>;
  /** Stops sweeping (the queue's own stop ends the handlers). */
  stop(): void;
}

export interface JobSystemDeps {
  db: Database;
  queue: Queue;
  logs: LogStore;
  scraper: Pick<Scraper, 'scrape'>;
  loader: PageLoader;
  extract: PageExtractor;
  fetcher: Pick<PageFetcher, 'fetchResource' | 'robots'>;
  /** The write path of runs (recording/run-writer.ts). */
  writer: RunWriter;
  settings: {
    demoSiteUrl: string;
    allowPrivateNetworks: boolean;
    defaultTimeoutMs: number;
    runDeadlineMs: number;
    workerConcurrency: number;
    schedulesMax: number;
    autothrottle: AutoThrottleSettings | null;
  };
  logger?: { warn(details: object, message: string): void; info(details: object, message: string): void };
}

/** How often a working process repairs what a dead one left (see JobRunner.sweep). */
const SWEEP_MS = 15_000;

/** Declares the job queues; call before the queue starts. */
export function createJobSystem(deps: JobSystemDeps): JobSystem {
  for (const [name, policy] of Object.entries(JOB_POLICIES)) deps.queue.define(name, policy);
  const jobs = createJobStore(deps.db);
  const cancels = createCancelRequests(deps.db);
  const schedules = createScheduleStore(deps.db);
  const events = createJobEvents(jobs);
  const changed = (jobId: string) => events.changed(jobId);
  const { settings } = deps;
  const service = createJobService({
    db: deps.db,
    jobs,
    cancels,
    schedules,
    logs: deps.logs,
    queue: deps.queue,
    demoSiteUrl: settings.demoSiteUrl,
    allowPrivateNetworks: settings.allowPrivateNetworks,
    schedulesMax: settings.schedulesMax,
    changed,
    ...(deps.logger ? { logger: deps.logger } : {}),
  });
  const crawls = createCrawlRunner({
    db: deps.db,
    jobs,
    logs: deps.logs,
    queue: deps.queue,
    fetcher: deps.fetcher,
    loader: deps.loader,
    extract: deps.extract,
    writer: deps.writer,
    pace: createHostPace(deps.db, deps.fetcher, settings.autothrottle ?? undefined),
    changed,
    cancels,
    runSignal: (jobId, context) => jobSignal(jobs, jobId, context),
    settings,
  });
  const runner = createJobRunner({
    db: deps.db,
    jobs,
    cancels,
    queue: deps.queue,
    service,
    scraper: deps.scraper,
    crawls,
    changed,
    ...(deps.logger ? { logger: deps.logger } : {}),
  });
  let sweeper: NodeJS.Timeout | undefined;

  return {
    jobs,
    schedules,
    service,
    events,
    sweep: () => runner.sweep(),
    async work() {
      const concurrency = settings.workerConcurrency;
      await deps.queue.work(JOB_QUEUES.job, { concurrency }, runner.handlers.job);
      await service.planSchedules();
      await deps.queue.work(JOB_QUEUES.scheduled, { concurrency: 1 }, runner.handlers.scheduled);
      // Crawl pages come in thousands: claimed and completed a few at a time. Twice as many are claimed as
      // are fetched at once (the crawl runner's fetch slots): a page whose fetch ended is extracted and
      // committed while the next one already fetches, and a batch still finishing leaves no slot idle.
      await deps.queue.work(JOB_QUEUES.page, { concurrency: concurrency * 2, batchSize: Math.max(1, Math.ceil(concurrency / 2)) }, runner.handlers.page);
      sweeper = setInterval(() => {
        runner.sweep().catch((error: unknown) => deps.logger?.warn({ err: error }, 'job sweep failed; it runs again shortly'));
        // With several processes a dead one's running logs are found here, once past the run deadline.
        interruptDeadRuns(deps.logs, { singleProcess: false, runDeadlineMs: settings.runDeadlineMs }).catch(() => undefined);
      }, SWEEP_MS);
      sweeper.unref();
    },
    stop() {
      if (sweeper !== undefined) clearInterval(sweeper);
    },
  };
}
