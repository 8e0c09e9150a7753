// What a worker does with each queued message: run a scrape job, seed or crawl a page of a crawl, fire a schedule; and repair what dead workers left.
import type { Database } from '../db/queryable.js';
import { RunCancelled, ServiceUnavailable, toProblem } from '../problems.js';
import type { Handler, Queue, WorkContext } from '../queue/queue.js';
import type { Scraper } from '../scraping/scrape-run.js';
import type { ScrapeRequest } from '../scraping/scrape-schema.js';
import type { CancelRequests } from './cancel-requests.js';
import { errorOf, type CrawlRunner } from './crawl-runner.js';
import { waitingMessageId } from './host-politeness.js';
import { JOB_QUEUES, type JobMessage, type QueuedPage, type ScheduleMessage } from './job-queues.js';
import type { Job } from './job-schema.js';
import type { JobService } from './job-service.js';
import { FINAL_STATUSES, type JobStore } from './job-store.js';

export interface JobRunnerDeps {
  jobs: JobStore;
  cancels: Pick<CancelRequests, 'unfinished'>;
  queue: Pick<Queue, 'states'>;
  service: Pick<JobService, 'fireSchedule' | 'cancel'>;
  scraper: Pick<Scraper, 'scrape'>;
  crawls: CrawlRunner;
  db: Pick<Database, 'transaction'>;
  /** Tells in-process listeners (live progress streams) that a job changed. */
  changed: (jobId: string) => void;
  logger?: { info(details: object, message: string): void };
}

export interface JobRunner {
  handlers: { job: Handler<JobMessage>; page: Handler<QueuedPage>; scheduled: Handler<ScheduleMessage> };
  /**
   * Repairs what a dead process left: crawls whose last page finished without finishing the job,
   * pages and jobs the queue gave up on while our rows still say pending or running.
   */
  sweep(): Promise<void>;
}

/**
 * A signal for one delivery of a job: aborted with RunCancelled when the job was cancelled, else with
 * the queue's own reason (shutdown, expiry), after which the queue retries the message. `using` it
 * detaches at the end of the handler: the queue aborts its signal after every delivery, done or not.
 */
export function jobSignal(jobs: Pick<JobStore, 'get'>, jobId: string, context: WorkContext): AbortSignal & Disposable {
  const controller = new AbortController();
  const onAbort = () => {
    void jobs.get(jobId).then(
      (job) => controller.abort(job?.status === 'cancelled' ? new RunCancelled() : stopped(context.signal.reason)),
      () => controller.abort(stopped(context.signal.reason)),
    );
  };
  if (context.signal.aborted) onAbort();
  else context.signal.addEventListener('abort', onAbort, { once: true });
  return Object.assign(controller.signal, { [Symbol.dispose]: () => context.signal.removeEventListener('abort', onAbort) });
}

const WORKER_LOST = 'urn:data-aggregator:problem:worker-lost';

export function createJobRunner(deps: JobRunnerDeps): JobRunner {
  const { jobs } = deps;

  /** A scrape job: bookkeeping around one scrape run (its log, progress, retries). */
  const runScrape = async (job: Job, context: WorkContext): Promise<void> => {
    const started = await jobs.start(job.id);
    if (started === undefined) return; // cancelled before it ran
    deps.changed(job.id);
    using signal = jobSignal(jobs, job.id, context);
    const { crawl: _crawl, ...request } = ((await jobs.runRequest(job.id)) ?? job.request) as ScrapeRequest & { crawl?: unknown };
    try {
      const result = await deps.scraper.scrape(request, {
        signal,
        jobId: job.id,
        onLog: (logId) => void jobs.addLog(job.id, logId).catch(() => undefined),
        onPage: (page) => {
          void jobs.addProgress(job.id, { pagesDone: 1, pagesDiscovered: 1, productsFound: page.items.length, articlesFound: page.articles.length }).then(
            () => deps.changed(job.id),
            () => undefined,
          );
        },
      });
      await jobs.addProgress(job.id, { created: result.created, updated: result.updated, articlesCreated: result.articles_created, articlesUpdated: result.articles_updated });
      await jobs.addLog(job.id, result.log_id);
      await jobs.finish(job.id, 'succeeded');
    } catch (error) {
      const problem = toProblem(error);
      if (problem instanceof RunCancelled) return;
      // Stopped by shutdown or expiry, or a failure that may pass: the queue delivers it again later.
      if ((problem.retryable || signal.aborted) && context.retryCount < context.retryLimit) throw error;
      await jobs.finish(job.id, 'failed', errorOf(problem));
    } finally {
      deps.changed(job.id);
    }
  };

  return {
    handlers: {
      job: async ({ job_id }, context) => {
        const job = await jobs.get(job_id);
        if (job === undefined || FINAL_STATUSES.has(job.status)) return;
        if (job.kind === 'crawl') await deps.crawls.seed(job, context);
        else await runScrape(job, context);
      },
      page: (page, context) => deps.crawls.page(page, context),
      scheduled: async ({ schedule_id, at }) => {
        const job = await deps.service.fireSchedule(schedule_id, at);
        if (job === undefined) deps.logger?.info({ schedule: schedule_id }, 'schedule did not run: paused, changed, gone, or its previous run is still going');
      },
    },

    async sweep() {
      for (const jobId of await jobs.stalledCrawls()) await deps.crawls.finishIfDone(jobId);
      // A cancel whose process died between writing it and ending the job: its pages no longer open.
      for (const jobId of await deps.cancels.unfinished(60)) await deps.service.cancel(jobId).catch(() => undefined);
      // A message the queue gave up on (its worker died on every try) leaves our row behind.
      for (const job of await jobs.quietRunning(60)) {
        if (job.kind === 'scrape') {
          const state = (await deps.queue.states(JOB_QUEUES.job, [job.id])).get(job.id);
          if (state === 'failed' || state === 'cancelled' || state === 'completed') {
            await jobs.finish(job.id, 'failed', { type: WORKER_LOST, status: 503, detail: 'The worker running this job stopped and its retries ran out.' });
            deps.changed(job.id);
          }
          continue;
        }
        const pending = await jobs.pendingPageIds(job.id);
        // A crawl still seeding (no frontier yet, or sitemaps still being read) is over only when its seed's
        // message is; a seed whose retries ran out leaves the crawl with what its frontier holds.
        if (pending.length === 0 && !(await jobs.seeded(job.id))) {
          const state = (await deps.queue.states(JOB_QUEUES.job, [job.id])).get(job.id);
          if (state !== 'failed' && state !== 'cancelled' && state !== 'completed') continue;
          await jobs.setSeeding(job.id, false);
        }
        const slice = pending.slice(0, 200);
        // A page waiting for its host is a second message (host-politeness.ts); its state is the page's.
        const first = await deps.queue.states(JOB_QUEUES.page, slice);
        const waiting = await deps.queue.states(JOB_QUEUES.page, slice.map(waitingMessageId));
        for (const pageId of slice) {
          const state = waiting.get(waitingMessageId(pageId)) ?? first.get(pageId);
          if (state !== 'failed' && state !== 'cancelled' && state !== 'completed') continue;
          await deps.db.transaction(async (tx) => {
            if (
              await jobs.settlePage(
                pageId,
                { status: 'failed', error: { type: WORKER_LOST, status: 503, detail: 'The worker fetching this page stopped and its retries ran out.' } },
                tx,
              )
            ) {
              await jobs.addProgress(job.id, { pagesFailed: 1 }, tx);
            }
          });
        }
        await deps.crawls.finishIfDone(job.id);
      }
    },
  };
}

function stopped(reason: unknown): Error {
  return reason instanceof Error ? reason : new ServiceUnavailable('The worker stopped this run; it will be retried.');
}
