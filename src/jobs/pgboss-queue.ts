// The job queue on pg-boss: jobs, retries with backoff, cancellation and cron schedules, all in PostgreSQL (or PGlite).
import { PgBoss, fromPglite, type ConstructorOptions, type Db, type Job } from 'pg-boss';
import type { Database, PgliteDatabase, PostgresDatabase, Queryable } from '../db/database.js';
import type { Handler, Handlers, JobQueue, QueueState, QueuedDelivery, QueuedPage } from './job-queue.js';

const QUEUES = { job: 'scrape-job', page: 'crawl-page', scheduled: 'schedule-fire', delivery: 'webhook-delivery' } as const;

export interface PgBossQueueOptions {
  /** PostgreSQL (pg-boss opens its own small pool to the same server) or PGlite (whose one connection it shares). */
  db: Database;
  /** pg-boss's own schema (its tables live apart from ours). */
  schema: string;
  logger?: { warn(details: object, message: string): void; error(details: object, message: string): void };
  /**
   * How quickly a dead worker's job is noticed and retried: a job whose heartbeat is older than
   * `heartbeatSeconds` is taken back at the next supervision, every `superviseSeconds`.
   */
  heartbeatSeconds?: number;
  superviseSeconds?: number;
  /** How often an instance looks for due schedules; a schedule fires within about this of its time. */
  cronSeconds?: number;
  /** The first retry's delay; each later one doubles it. */
  retryDelaySeconds?: number;
}

/** Queue policies: retries back off exponentially; a heartbeat lets a cancel reach a running handler. */
function queueOptions(heartbeatSeconds: number, retryDelay: number) {
  return {
    [QUEUES.job]: { retryLimit: 2, retryDelay, retryBackoff: true, retryDelayMax: 300, expireInSeconds: 4 * 3600, heartbeatSeconds },
    [QUEUES.page]: { retryLimit: 2, retryDelay, retryBackoff: true, retryDelayMax: 120, expireInSeconds: 1800, heartbeatSeconds },
    [QUEUES.scheduled]: { retryLimit: 2, retryDelay, retryBackoff: true, expireInSeconds: 600, heartbeatSeconds },
    // A webhook follows its own schedule of attempts (each one recorded), so the queue does not retry.
    [QUEUES.delivery]: { retryLimit: 0, expireInSeconds: 120, heartbeatSeconds },
  };
}

export function createPgBossQueue(options: PgBossQueueOptions): JobQueue {
  const heartbeatSeconds = options.heartbeatSeconds ?? 10;
  const policies = queueOptions(heartbeatSeconds, options.retryDelaySeconds ?? 5);
  const timing = {
    superviseIntervalSeconds: options.superviseSeconds ?? 2,
    monitorIntervalSeconds: options.superviseSeconds ?? 2,
    // The backlog count a worker reads to keep fetching without pause (see `work`).
    queueCacheIntervalSeconds: 1,
    cronMonitorIntervalSeconds: options.cronSeconds ?? 5,
    cronWorkerIntervalSeconds: 1,
  };
  const base: ConstructorOptions = { schema: options.schema, useListenNotify: true, ...timing };
  const boss = new PgBoss(
    options.db.backend === 'pglite'
      ? { ...base, backend: 'pglite', db: fromPglite((options.db as PgliteDatabase).pglite) }
      : { ...base, connectionString: (options.db as PostgresDatabase).connectionString, max: 4, application_name: 'data-aggregator-queue' },
  );
  // Without a listener an 'error' event would end the process; a queue hiccup is logged and retried.
  boss.on('error', (error) => options.logger?.error({ err: error }, 'job queue error'));
  boss.on('warning', (warning) => options.logger?.warn({ warning }, 'job queue warning'));

  /** Our transaction as pg-boss's executor, so a queue entry commits or rolls back with our rows. */
  const inTransaction = (tx: Queryable | undefined): { db?: Db } =>
    tx === undefined ? {} : { db: { executeSql: async (text: string, values?: unknown[]) => ({ rows: await tx.query(text, values ?? []) }) } };

  const limits = {
    job: policies[QUEUES.job].retryLimit,
    page: policies[QUEUES.page].retryLimit,
    scheduled: policies[QUEUES.scheduled].retryLimit,
    delivery: 0,
  };
  const adapt =
    <T extends object>(handler: Handler<T>, retryLimit: number) =>
    async ([job]: Job<T>[]): Promise<void> => {
      if (job === undefined) return;
      await handler(job.data, { id: job.id, signal: job.signal, retryCount: job.retryCount, retryLimit });
    };

  let started = false;
  return {
    async start() {
      if (started) return;
      await boss.start();
      for (const [name, policy] of Object.entries(policies)) {
        const existing = await boss.getQueue(name);
        if (existing === null) await boss.createQueue(name, { ...policy, notify: true } as Parameters<PgBoss['createQueue']>[1]);
        else await boss.updateQueue(name, policy);
        // Caches the queue in pg-boss now: a first lookup from inside one of our transactions would
        // wait on PGlite's single connection, which that transaction holds.
        await boss.findJobs(name, { id: '00000000-0000-4000-8000-000000000000' });
      }
      started = true;
    },

    async enqueueJob(jobId, tx) {
      await boss.send(QUEUES.job, { job_id: jobId }, { id: jobId, ...inTransaction(tx) });
    },

    async enqueuePages(pages: readonly QueuedPage[], tx) {
      if (pages.length === 0) return;
      await boss.insert(QUEUES.page, pages.map((page) => ({ id: page.id, data: page })), inTransaction(tx));
    },

    async enqueueDeliveries(deliveries: readonly QueuedDelivery[], delivery = {}) {
      if (deliveries.length === 0) return;
      const startAfter = delivery.delayMs === undefined || delivery.delayMs <= 0 ? undefined : new Date(Date.now() + delivery.delayMs);
      await boss.insert(
        QUEUES.delivery,
        deliveries.map((data) => ({ data, ...(startAfter === undefined ? {} : { startAfter }) })),
        inTransaction(delivery.tx),
      );
    },

    async cancelJob(jobId) {
      await boss.cancel(QUEUES.job, jobId).catch(() => undefined); // already over: nothing to cancel
    },

    async cancelPages(ids) {
      for (let i = 0; i < ids.length; i += 500) await boss.cancel(QUEUES.page, ids.slice(i, i + 500) as string[]).catch(() => undefined);
    },

    async schedule(scheduleId, expression, timezone) {
      await boss.schedule(QUEUES.scheduled, expression, { schedule_id: scheduleId }, { tz: timezone, key: scheduleId });
    },

    async unschedule(scheduleId) {
      await boss.unschedule(QUEUES.scheduled, scheduleId);
    },

    nextRun(expression, timezone) {
      const [next] = boss.previewSchedule(expression, { tz: timezone, count: 1, from: new Date() });
      return next ?? null;
    },

    async pageStates(ids) {
      const states = new Map<string, QueueState>();
      for (const id of ids) {
        const [found] = await boss.findJobs(QUEUES.page, { id });
        if (found !== undefined) states.set(id, found.state);
      }
      return states;
    },

    async jobState(jobId) {
      const [found] = await boss.findJobs(QUEUES.job, { id: jobId });
      return found?.state ?? null;
    },

    async work(handlers: Handlers, concurrency) {
      // A heartbeat every second: a cancel (or a lost claim) reaches the handler's signal within ~1 s.
      // Idle, a new job wakes a worker through NOTIFY, with a poll every 2 s as the backstop.
      const common = {
        localConcurrency: concurrency,
        batchSize: 1,
        heartbeatRefreshSeconds: 1,
        burstWhenReadyExceeds: 1,
        pollingIntervalSeconds: 1,
        notifyPollingIntervalSeconds: 2,
      };
      await boss.work(QUEUES.job, common, adapt(handlers.job, limits.job));
      await boss.work(QUEUES.scheduled, { ...common, localConcurrency: 1 }, adapt(handlers.scheduled, limits.scheduled));
      await boss.work(QUEUES.delivery, { ...common, localConcurrency: Math.max(2, Math.ceil(concurrency / 2)) }, adapt(handlers.delivery, limits.delivery));
      // Crawl pages come in thousands: claimed and completed a few at a time (one round trip each way
      // per batch, not per page: ~1 ms of queue per page instead of ~5 here), fetched again at once
      // while batches come back full. Two batches, so one slow page does not idle every slot.
      const batches = Math.min(2, concurrency);
      await boss.work(
        QUEUES.page,
        { ...common, localConcurrency: batches, batchSize: Math.ceil(concurrency / batches), burstWhenBatchFull: true, perJobResults: true },
        async (jobs: Job<QueuedPage>[]) =>
          Promise.all(
            jobs.map(async (job) => {
              try {
                await handlers.page(job.data, { id: job.id, signal: job.signal, retryCount: job.retryCount, retryLimit: limits.page });
                return { id: job.id, status: 'completed' as const };
              } catch (error) {
                // Failed pages go back to the queue one by one, each with its own retries.
                return { id: job.id, status: 'failed' as const, output: { message: error instanceof Error ? error.message : String(error) } };
              }
            }),
          ),
      );
    },

    async stop(graceMs) {
      if (!started) return;
      started = false;
      await boss.stop({ graceful: true, timeout: Math.max(1000, graceMs), close: true });
    },
  };
}
