// The job system of one process: queue, stores, service and live events, and (where this process works) the workers.
import type { Config } from '../config.js';
import type { Database } from '../db/database.js';
import type { ProductStore } from '../products/product-store.js';
import { interruptDeadRuns, type LogStore } from '../scrape-logs/log-store.js';
import type { Scraper } from '../scraping/scrape-pipeline.js';
import type { PageFetcher, PageRenderer } from '../scraping/types.js';
import { extractInline, type PageExtractor } from '../scraping/extract/pool.js';
import { createJobEvents, type JobEvents } from './job-events.js';
import type { Tracking } from '../tracking/tracking.js';
import type { JobQueue } from './job-queue.js';
import { createJobRunner } from './job-runner.js';
import { createJobService, type JobService } from './job-service.js';
import { createJobStore, type JobStore } from './job-store.js';
import { createScheduleStore, type ScheduleStore } from './schedule-store.js';

export interface JobSystem {
  jobs: JobStore;
  schedules: ScheduleStore;
  service: JobService;
  events: JobEvents;
  queue: JobQueue;
  /** Starts the queue and, when `work`, handles jobs in this process. */
  start(work: boolean): Promise<void>;
  /** Stops taking work; running work gets `graceMs`, then goes back to the queue to be retried. */
  stop(graceMs: number): Promise<void>;
}

export interface JobSystemDeps {
  db: Database;
  /** The queue (created with the stores, since product writes queue webhook deliveries through it). */
  queue: JobQueue;
  tracking: Pick<Tracking, 'recorder' | 'sender'>;
  config: Pick<Config, 'demoSiteUrl' | 'scrapeAllowPrivateNetworks' | 'jobs'> & { scrape: Pick<Config['scrape'], 'timeoutMs' | 'runDeadlineMs'> };
  products: ProductStore;
  logs: LogStore;
  scraper: Scraper;
  fetcher: PageFetcher;
  renderer: PageRenderer;
  /** Extraction of crawled pages (the service's thread pool); inline when absent. */
  extract?: PageExtractor;
  logger?: { warn(details: object, message: string): void; error(details: object, message: string): void; info(details: object, message: string): void };
}

/** How often a working process repairs what a dead one left (see JobRunner.sweep). */
const SWEEP_MS = 15_000;

export function createJobSystem(deps: JobSystemDeps): JobSystem {
  const jobs = createJobStore(deps.db);
  const schedules = createScheduleStore(deps.db);
  const events = createJobEvents(jobs);
  const queue = deps.queue;
  const changed = (jobId: string) => events.changed(jobId);
  const service = createJobService({
    db: deps.db,
    jobs,
    schedules,
    logs: deps.logs,
    queue,
    demoSiteUrl: deps.config.demoSiteUrl,
    allowPrivateNetworks: deps.config.scrapeAllowPrivateNetworks,
    changed,
  });
  const runner = createJobRunner({
    db: deps.db,
    jobs,
    products: deps.products,
    logs: deps.logs,
    queue,
    service,
    scraper: deps.scraper,
    fetcher: deps.fetcher,
    renderer: deps.renderer,
    extract: deps.extract ?? extractInline,
    recorder: deps.tracking.recorder,
    sender: deps.tracking.sender,
    changed,
    settings: { demoSiteUrl: deps.config.demoSiteUrl, allowPrivateNetworks: deps.config.scrapeAllowPrivateNetworks, defaultTimeoutMs: deps.config.scrape.timeoutMs },
    ...(deps.logger ? { logger: deps.logger } : {}),
  });
  let sweeper: NodeJS.Timeout | undefined;

  return {
    jobs,
    schedules,
    service,
    events,
    queue,
    async start(work) {
      await queue.start();
      if (!work) return;
      await queue.work(runner.handlers, deps.config.jobs.workerConcurrency);
      sweeper = setInterval(() => {
        runner.sweep().catch((error: unknown) => deps.logger?.warn({ err: error }, 'job sweep failed; it runs again shortly'));
        // With several processes a dead one's running logs are found here, once past the run deadline.
        interruptDeadRuns(deps.logs, { singleProcess: false, runDeadlineMs: deps.config.scrape.runDeadlineMs }).catch(() => undefined);
      }, SWEEP_MS);
      sweeper.unref();
    },
    async stop(graceMs) {
      if (sweeper !== undefined) clearInterval(sweeper);
      await queue.stop(graceMs);
    },
  };
}
