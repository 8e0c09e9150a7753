// Jobs and schedules as the API drives them: create (row and queue entry in one transaction), cancel, schedule.
import { randomUUID } from 'node:crypto';
import type { Database, Queryable } from '../db/queryable.js';
import { HttpProblem, NotFound, ValidationFailed } from '../problems.js';
import type { Queue } from '../queue/queue.js';
import type { LogStore } from '../scrape-logs/log-store.js';
import { checkScrapeRequest } from '../scraping/scrape-request.js';
import type { CancelRequests } from './cancel-requests.js';
import { compileGlob } from './crawl-glob.js';
import { writeCrawlLog } from './crawl-log.js';
import { waitingMessageId } from './host-politeness.js';
import { JOB_QUEUES, type JobMessage, type ScheduleMessage } from './job-queues.js';
import type { Job, JobRequest, Schedule, ScheduleCreate, SchedulePatch } from './job-schema.js';
import { FINAL_STATUSES, type JobStore } from './job-store.js';
import type { ScheduleFields, ScheduleStore, StoredSchedule } from './schedule-store.js';

export interface JobService {
  /** Checks the request as a scrape would, then stores the job and queues it, together. */
  create(request: JobRequest, options?: { scheduleId?: string; tx?: Queryable }): Promise<Job>;
  /** Cancels a queued or running job; a cancelled one is answered as it is; an ended one is a 409. */
  cancel(id: string): Promise<Job>;
  /** In `tx` when given (several schedules that commit or roll back together); its own transaction otherwise. */
  createSchedule(input: ScheduleCreate, options?: { tx?: Queryable }): Promise<Schedule>;
  /** What createSchedule would refuse (422 naming the field), refused without storing anything. */
  checkSchedule(input: ScheduleCreate): void;
  /** The calendar part of checkSchedule alone (cron or every_minutes, and the time zone). */
  checkCalendar(input: Pick<ScheduleCreate, 'cron' | 'every_minutes' | 'timezone'>): void;
  getSchedule(id: string): Promise<Schedule>;
  listSchedules(items: StoredSchedule[]): Schedule[];
  updateSchedule(id: string, patch: SchedulePatch, options?: { tx?: Queryable }): Promise<Schedule>;
  deleteSchedule(id: string): Promise<void>;
  /**
   * Starts a run of a schedule: at its due time (`manual` false), where a paused schedule does not
   * run and one whose previous run still goes is skipped (and the skip counted); or on request
   * (`manual` true), which runs a paused schedule too and answers 404/409 instead of skipping.
   */
  runSchedule(id: string, options: { manual: boolean }): Promise<Job | undefined>;
  /**
   * A schedule's due time `at` has come (its queued message): the firing that still finds `at` as the
   * schedule's next due time moves it to the following one, queues the message for that, and runs;
   * any other (an edited, paused or deleted schedule's, a second copy) does nothing.
   */
  fireSchedule(id: string, at: string | undefined): Promise<Job | undefined>;
  /** Plans the schedules that have no next due time yet (those of releases before migration 14). */
  planSchedules(): Promise<number>;
}

export interface JobServiceDeps {
  db: Database;
  jobs: JobStore;
  cancels: CancelRequests;
  schedules: ScheduleStore;
  logs: LogStore;
  queue: Pick<Queue, 'enqueue' | 'cancel' | 'unschedule' | 'nextRun'>;
  demoSiteUrl: string;
  /** Schedules in all (SCHEDULES_MAX). */
  schedulesMax: number;
  allowPrivateNetworks: boolean;
  changed: (jobId: string) => void;
  logger?: { warn(details: object, message: string): void };
}

/** Queue messages of a cancelled crawl's pending pages are cancelled this many at a time, after the answer. */
const CANCEL_SLICE = 5000;

export class JobAlreadyEnded extends HttpProblem {
  constructor(job: Job) {
    super(409, 'job-ended', 'Conflict', `Job ${job.id} already ${job.status}; only a queued or running job can be cancelled.`);
  }
}

export class ScheduleRunning extends HttpProblem {
  constructor(scheduleId: string, jobId: string) {
    super(409, 'schedule-running', 'Conflict', `Schedule ${scheduleId} is still running job ${jobId}; it does not overlap its runs (allow_overlap is off).`);
  }
}

export function createJobService(deps: JobServiceDeps): JobService {
  const { jobs, schedules, queue } = deps;

  /** What a scrape would refuse, refused before anything is queued: bad selectors, a blocked target. */
  const check = (request: JobRequest, at = '/body'): void => {
    checkScrapeRequest(request, deps.allowPrivateNetworks, at);
    for (const side of ['include', 'exclude'] as const) {
      for (const [i, glob] of (request.crawl?.[side] ?? []).entries()) {
        try {
          compileGlob(glob);
        } catch (error) {
          throw new ValidationFailed([{ path: `${at}/crawl/${side}/${i}`, message: (error as Error).message }]);
        }
      }
    }
  };

  /** The queue's calendar expression: a cron as given, "every N minutes" as a recurrence rule. */
  const expressionOf = (fields: Pick<ScheduleFields, 'cron' | 'every_minutes'>): string => fields.cron ?? `FREQ=MINUTELY;INTERVAL=${fields.every_minutes}`;

  const shown = (stored: StoredSchedule): Schedule => ({ ...stored, job: stored.job as Schedule['job'] });

  /** The schedule's first due time after `after`; null when paused (or its calendar has none). */
  const nextAfter = (stored: StoredSchedule, after: Date): Date | null => {
    if (stored.paused) return null;
    try {
      return queue.nextRun(expressionOf(stored), stored.timezone, after);
    } catch {
      return null;
    }
  };

  /**
   * Sets the next due time (where it still is `from`, unless undefined) and queues the one message
   * that waits for it. The queue hands over only due messages, so no pass over every schedule.
   */
  const plan = async (id: string, next: Date | null, from: string | null | undefined, tx: Queryable): Promise<boolean> => {
    const moved = await schedules.moveNextRun(id, from, next?.toISOString() ?? null, tx);
    if (moved && next !== null) {
      await queue.enqueue<ScheduleMessage>(JOB_QUEUES.scheduled, [{ data: { schedule_id: id, at: next.toISOString() } }], { tx, at: next });
    }
    return moved;
  };

  /**
   * A new or changed schedule's plan: its first due time after now, which is the time it shows and the
   * time it runs (a due time already begun is not run: `POST /schedules/{id}/run` runs one now).
   */
  const replan = (stored: StoredSchedule, tx: Queryable): Promise<boolean> => {
    const next = nextAfter(stored, new Date());
    // Unchanged: the message already queued for it stays the one.
    if ((next?.toISOString() ?? null) === stored.next_run_at) return Promise.resolve(false);
    return plan(stored.id, next, undefined, tx);
  };

  /** 422 for a calendar the queue cannot read, naming the field, before anything is stored. */
  const checkCalendar = (fields: Pick<ScheduleFields, 'cron' | 'every_minutes' | 'timezone'>, given: { every_minutes?: number | undefined }): void => {
    if ((fields.cron === null) === (fields.every_minutes === null)) {
      throw new ValidationFailed([{ path: '/body/cron', message: 'give exactly one of cron and every_minutes' }]);
    }
    // The queue's calendar also reads six fields (seconds first); schedules run at minute resolution.
    if (fields.cron !== null && fields.cron.trim().split(/\s+/).length !== 5) {
      throw new ValidationFailed([{ path: '/body/cron', message: 'must have five fields (minute hour day-of-month month day-of-week); seconds are not supported' }]);
    }
    try {
      new Intl.DateTimeFormat('en', { timeZone: fields.timezone });
    } catch {
      throw new ValidationFailed([{ path: '/body/timezone', message: `is not an IANA time zone: "${fields.timezone}"` }]);
    }
    try {
      queue.nextRun(expressionOf(fields), fields.timezone);
    } catch (error) {
      const path = given.every_minutes !== undefined ? '/body/every_minutes' : '/body/cron';
      throw new ValidationFailed([{ path, message: `is not a schedule the queue can run: ${(error as Error).message}` }]);
    }
  };

  const cancelPages = async (jobId: string): Promise<void> => {
    let after: string | undefined;
    for (;;) {
      const ids = await jobs.pendingPageIds(jobId, { limit: CANCEL_SLICE, ...(after === undefined ? {} : { after }) });
      if (ids.length === 0) return;
      await queue.cancel(JOB_QUEUES.page, [...ids, ...ids.map(waitingMessageId)]);
      after = ids.at(-1);
    }
  };

  return {
    async create(request, options = {}) {
      check(request);
      const id = randomUUID();
      const insert = async (tx: Queryable) => {
        const job = await jobs.create(
          { id, kind: request.crawl === undefined ? 'scrape' : 'crawl', sourceUrl: request.url ?? deps.demoSiteUrl, request, scheduleId: options.scheduleId ?? null },
          tx,
        );
        await queue.enqueue<JobMessage>(JOB_QUEUES.job, [{ id, data: { job_id: id } }], { tx });
        return job;
      };
      const job = options.tx === undefined ? await deps.db.transaction(insert) : await insert(options.tx);
      deps.changed(id);
      return job;
    },

    async cancel(id) {
      // This process's pages of the crawl stop at once, before the job is even read (the pool may be busy
      // with them); the other workers' once the request is written. Ending the job comes last: it waits
      // for the pages committing under the job row's lock (crawl-page-store.ts).
      const unheard = deps.cancels.hear(id);
      let requested = false;
      let job: Job | undefined;
      let cancelled: Job | undefined;
      try {
        job = await jobs.get(id);
        if (job === undefined) throw new NotFound(`Job ${id} does not exist.`);
        if (job.status === 'cancelled') return job;
        if (FINAL_STATUSES.has(job.status)) throw new JobAlreadyEnded(job);
        if (job.kind === 'crawl') {
          await deps.cancels.request(id);
          requested = true;
        }
        cancelled = await jobs.finish(id, 'cancelled', { type: 'urn:data-aggregator:problem:cancelled', status: 409, detail: 'Cancelled by request.' });
      } catch (error) {
        // The job goes on, and so do its pages (a request left by a process that died here is ended by the sweep).
        unheard();
        if (requested) await deps.cancels.withdraw(id).catch(() => undefined);
        throw error;
      }
      if (cancelled === undefined) {
        const now = (await jobs.get(id))!;
        if (now.status === 'cancelled') return now;
        throw new JobAlreadyEnded(now);
      }
      await queue.cancel(JOB_QUEUES.job, [id]);
      if (job.kind === 'crawl') {
        // A crawl's pages commit under the job row's lock, so every page stored before the cancel is in this log.
        await writeCrawlLog(deps.logs, cancelled, await jobs.pages(id), 'cancelled', cancelled.error);
        await jobs.addLog(id, id);
        // Its pending pages are many (tens of thousands): the answer does not wait for their messages.
        // None fetches meanwhile: each page reads its crawl's state before fetching (crawl-runner.ts).
        void cancelPages(id).catch((error: unknown) =>
          deps.logger?.warn({ err: error, job: id }, 'cancelling the queued pages of a cancelled crawl failed; they end unfetched when delivered'),
        );
      }
      deps.changed(id);
      return (await jobs.get(id))!;
    },

    checkSchedule(input) {
      this.checkCalendar(input);
      check(input.job, '/body/job');
    },

    checkCalendar(input) {
      checkCalendar({ cron: input.cron ?? null, every_minutes: input.every_minutes ?? null, timezone: input.timezone ?? 'UTC' }, input);
    },

    async createSchedule(input, options = {}) {
      const fields: ScheduleFields = {
        name: input.name ?? null,
        cron: input.cron ?? null,
        every_minutes: input.every_minutes ?? null,
        timezone: input.timezone ?? 'UTC',
        job: input.job,
        paused: input.paused ?? false,
        allow_overlap: input.allow_overlap ?? false,
      };
      checkCalendar(fields, input);
      check(input.job, '/body/job');
      const id = randomUUID();
      const insert = async (tx: Queryable) => {
        await replan(await schedules.create(id, fields, deps.schedulesMax, tx), tx);
        return shown((await schedules.get(id, tx))!);
      };
      return options.tx === undefined ? deps.db.transaction(insert) : insert(options.tx);
    },

    async getSchedule(id) {
      const stored = await schedules.get(id);
      if (stored === undefined) throw new NotFound(`Schedule ${id} does not exist.`);
      return shown(stored);
    },

    listSchedules: (items) => items.map(shown),

    async updateSchedule(id, patch, options = {}) {
      const current = await schedules.get(id, options.tx);
      if (current === undefined) throw new NotFound(`Schedule ${id} does not exist.`);
      // Giving one calendar form replaces the other.
      const calendar =
        patch.cron !== undefined
          ? { cron: patch.cron, every_minutes: null }
          : patch.every_minutes !== undefined
            ? { cron: null, every_minutes: patch.every_minutes }
            : { cron: current.cron, every_minutes: current.every_minutes };
      const fields: ScheduleFields = {
        name: patch.name === undefined ? current.name : patch.name,
        ...calendar,
        timezone: patch.timezone ?? current.timezone,
        job: patch.job ?? current.job,
        paused: patch.paused ?? current.paused,
        allow_overlap: patch.allow_overlap ?? current.allow_overlap,
      };
      if (patch.cron !== undefined && patch.every_minutes !== undefined) {
        throw new ValidationFailed([{ path: '/body/cron', message: 'give exactly one of cron and every_minutes' }]);
      }
      checkCalendar(fields, patch);
      if (patch.job !== undefined) check(patch.job, '/body/job');
      const change = async (tx: Queryable) => {
        await replan((await schedules.update(id, fields, tx))!, tx);
        return shown((await schedules.get(id, tx))!);
      };
      return options.tx === undefined ? deps.db.transaction(change) : change(options.tx);
    },

    async runSchedule(id, { manual }) {
      const schedule = await schedules.get(id);
      if (schedule === undefined) {
        if (manual) throw new NotFound(`Schedule ${id} does not exist.`);
        return undefined;
      }
      if (schedule.paused && !manual) return undefined;
      if (!schedule.allow_overlap) {
        const latest = (await jobs.list({ schedule_id: id, limit: 1, offset: 0 })).items[0];
        if (latest !== undefined && !FINAL_STATUSES.has(latest.status)) {
          if (manual) throw new ScheduleRunning(id, latest.id);
          await schedules.recordSkip(id);
          return undefined;
        }
      }
      return deps.db.transaction(async (tx) => {
        const job = await this.create((await schedules.jobToRun(id, tx)) ?? schedule.job, { scheduleId: id, tx });
        await schedules.recordRun(id, job.id, tx);
        return job;
      });
    },

    async deleteSchedule(id) {
      // Its queued message finds no schedule when due, and does nothing.
      if (!(await schedules.delete(id))) throw new NotFound(`Schedule ${id} does not exist.`);
    },

    async fireSchedule(id, at) {
      if (at === undefined) {
        // A calendar entry of a release before migration 14 (the queue evaluated every entry on each
        // pass): taken out; the schedule has its own planned message.
        await queue.unschedule(JOB_QUEUES.scheduled, id);
        return undefined;
      }
      const schedule = await schedules.get(id);
      if (schedule === undefined || schedule.next_run_at !== at) return undefined;
      // After a late firing (workers were down), the next due time counts from now: one catch-up run, not one per missed time.
      const next = nextAfter(schedule, new Date(Math.max(Date.parse(at), Date.now())));
      if (!(await deps.db.transaction((tx) => plan(id, next, at, tx)))) return undefined;
      return this.runSchedule(id, { manual: false });
    },

    async planSchedules() {
      let planned = 0;
      for (;;) {
        const batch = await schedules.unplanned(500);
        let moved = 0;
        for (const stored of batch) {
          const next = nextAfter(stored, new Date());
          if (next !== null && (await deps.db.transaction((tx) => plan(stored.id, next, null, tx)))) moved++;
        }
        planned += moved;
        if (moved === 0 || batch.length < 500) return planned;
      }
    },
  };
}
