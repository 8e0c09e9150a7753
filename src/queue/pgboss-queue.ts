// The work queue on pg-boss: retries with backoff, cancellation, cron calendars, all in PostgreSQL (or PGlite).
import { PgBoss, fromPglite, type ConstructorOptions, type Db, type Job } from 'pg-boss';
import type { Database, Queryable } from '../db/queryable.js';
import type { PgliteDatabase, PostgresDatabase } from '../db/database.js';
import type { EnqueueOptions, Handler, Message, Queue, QueuePolicy, QueueState, WorkOptions } from './queue.js';

export interface PgBossQueueOptions {
  /** PostgreSQL (pg-boss opens its own small pool to the same server) or PGlite (whose one connection it shares). */
  db: Database;
  /** pg-boss's own schema (its tables live apart from ours). */
  schema: string;
  logger?: { warn(details: object, message: string): void; error(details: object, message: string): void };
  /**
   * How quickly a dead worker's message is noticed and retried: a message whose heartbeat is older
   * than `heartbeatSeconds` is taken back at the next supervision, every `superviseSeconds`.
   */
  heartbeatSeconds?: number;
  superviseSeconds?: number;
  /** How often an instance looks for due calendar entries; one fires within about this of its time. */
  cronSeconds?: number;
  /** Overrides every queue's first retry delay (tests: quick retries). */
  retryDelaySeconds?: number;
}

/** Queue timing knobs (tests make a dead worker's messages come back, and calendars fire, faster). */
export type QueueTiming = Pick<PgBossQueueOptions, 'heartbeatSeconds' | 'superviseSeconds' | 'cronSeconds' | 'retryDelaySeconds'>;

export function createPgBossQueue(options: PgBossQueueOptions): Queue {
  const heartbeatSeconds = options.heartbeatSeconds ?? 10;
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

  const policies = new Map<string, QueuePolicy>();
  const bossPolicy = (policy: QueuePolicy) => ({
    retryLimit: policy.retryLimit,
    ...(policy.retryLimit > 0 ? { retryDelay: options.retryDelaySeconds ?? policy.retryDelaySeconds ?? 5, retryBackoff: policy.retryBackoff ?? true } : {}),
    ...(policy.retryDelayMaxSeconds === undefined ? {} : { retryDelayMax: policy.retryDelayMaxSeconds }),
    expireInSeconds: policy.expireInSeconds,
    // A heartbeat lets a cancel (or a lost claim) reach a running handler.
    heartbeatSeconds,
  });

  /** Our transaction as pg-boss's executor, so a queue entry commits or rolls back with our rows. */
  const inTransaction = (tx: Queryable | undefined): { db?: Db } =>
    tx === undefined ? {} : { db: { executeSql: async (text: string, values?: unknown[]) => ({ rows: await tx.query(text, values ?? []) }) } };

  let started = false;
  return {
    define(name, policy) {
      if (started) throw new Error(`queue ${name} must be defined before the queue starts`);
      policies.set(name, policy);
    },

    async start() {
      if (started) return;
      await boss.start();
      for (const [name, policy] of policies) {
        const existing = await boss.getQueue(name);
        if (existing === null) await boss.createQueue(name, { ...bossPolicy(policy), notify: true } as Parameters<PgBoss['createQueue']>[1]);
        else await boss.updateQueue(name, bossPolicy(policy));
        // Caches the queue in pg-boss now: a first lookup from inside one of our transactions would
        // wait on PGlite's single connection, which that transaction holds.
        await boss.findJobs(name, { id: '00000000-0000-4000-8000-000000000000' });
      }
      started = true;
    },

    async enqueue<T extends object>(name: string, messages: ReadonlyArray<Message<T>>, enqueue: EnqueueOptions = {}) {
      if (messages.length === 0) return;
      const startAfter = enqueue.at ?? (enqueue.delayMs === undefined || enqueue.delayMs <= 0 ? undefined : new Date(Date.now() + enqueue.delayMs));
      await boss.insert(
        name,
        messages.map((m) => ({
          data: m.data,
          ...(m.id === undefined ? {} : { id: m.id }),
          ...(m.priority === undefined ? {} : { priority: m.priority }),
          ...(m.group === undefined ? {} : { group: { id: m.group } }),
          ...(startAfter === undefined ? {} : { startAfter }),
        })),
        inTransaction(enqueue.tx),
      );
    },

    async cancel(name, ids) {
      // Already over: nothing to cancel.
      for (let i = 0; i < ids.length; i += 500) await boss.cancel(name, ids.slice(i, i + 500) as string[]).catch(() => undefined);
    },

    async states(name, ids) {
      const states = new Map<string, QueueState>();
      for (const id of ids) {
        const [found] = await boss.findJobs(name, { id });
        if (found !== undefined) states.set(id, found.state);
      }
      return states;
    },

    async schedule(name, key, expression, timezone, data) {
      await boss.schedule(name, expression, data, { tz: timezone, key });
    },

    async unschedule(name, key) {
      await boss.unschedule(name, key);
    },

    nextRun(expression, timezone, from = new Date()) {
      const [next] = boss.previewSchedule(expression, { tz: timezone, count: 1, from });
      return next ?? null;
    },

    async work<T extends object>(name: string, work: WorkOptions, handler: Handler<T>) {
      const retryLimit = policies.get(name)?.retryLimit ?? 0;
      // A heartbeat every second: a cancel (or a lost claim) reaches the handler's signal within ~1 s.
      // Idle, a new message wakes a worker through NOTIFY, with a poll every 2 s as the backstop.
      const common = {
        heartbeatRefreshSeconds: 1,
        burstWhenReadyExceeds: 1,
        pollingIntervalSeconds: 1,
        notifyPollingIntervalSeconds: 2,
        // Counted across every process (in the database): a group's messages past it wait while others are handed out.
        ...(work.perGroup === undefined ? {} : { groupConcurrency: work.perGroup }),
      };
      const batchSize = Math.max(1, work.batchSize ?? 1);
      const run = (job: Job<T>) => handler(job.data, { id: job.id, signal: job.signal, retryCount: job.retryCount, retryLimit });
      if (batchSize === 1) {
        await boss.work(name, { ...common, localConcurrency: work.concurrency, batchSize: 1 }, async ([job]: Job<T>[]) => {
          if (job !== undefined) await run(job);
        });
        return;
      }
      // Claimed and completed a batch at a time (one round trip each way per batch, not per message),
      // fetched again at once while batches come back full; each message fails and retries on its own.
      await boss.work(
        name,
        { ...common, localConcurrency: Math.max(1, Math.ceil(work.concurrency / batchSize)), batchSize, burstWhenBatchFull: true, perJobResults: true },
        async (jobs: Job<T>[]) =>
          Promise.all(
            jobs.map(async (job) => {
              try {
                await run(job);
                return { id: job.id, status: 'completed' as const };
              } catch (error) {
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
