// Schedules in the relational database: what to run and when. The queue's cron (pg-boss) fires them.
import { pagedList } from '../db/paged-list.js';
import type { Database, Queryable } from '../db/database.js';
import { LimitReached } from '../problems.js';
import { splitSecrets } from '../redact.js';
import type { JobRequest, Schedule, ScheduleListQuery } from './job-schema.js';

const isoTime = (column: string) => `to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;

const COLUMNS = `id, name, cron, every_minutes, timezone, job, paused, allow_overlap, runs, skipped,
  ${isoTime('last_run_at')} AS last_run_at, last_job_id, ${isoTime('last_skipped_at')} AS last_skipped_at,
  ${isoTime('next_run_at')} AS next_run_at, ${isoTime('created_at')} AS created_at, ${isoTime('updated_at')} AS updated_at`;

/** A schedule as stored, with its next due time (null: paused, or not planned yet). */
export type StoredSchedule = Omit<Schedule, 'job'> & { job: JobRequest };

export interface ScheduleFields {
  name: string | null;
  cron: string | null;
  every_minutes: number | null;
  timezone: string;
  job: JobRequest;
  paused: boolean;
  allow_overlap: boolean;
}

export interface ScheduleStore {
  /** Refuses (LimitReached, nothing stored) a schedule beyond `max` (SCHEDULES_MAX). */
  create(id: string, fields: ScheduleFields, max: number, tx?: Queryable): Promise<StoredSchedule>;
  get(id: string, tx?: Queryable): Promise<StoredSchedule | undefined>;
  list(query: ScheduleListQuery): Promise<{ items: StoredSchedule[]; total: number }>;
  update(id: string, fields: ScheduleFields, tx?: Queryable): Promise<StoredSchedule | undefined>;
  delete(id: string, tx?: Queryable): Promise<boolean>;
  recordRun(id: string, jobId: string, tx: Queryable): Promise<void>;
  recordSkip(id: string, tx?: Queryable): Promise<void>;
  /** The job as sent, passwords in URLs included: what each run starts (StoredSchedule.job shows them masked). */
  jobToRun(id: string, tx?: Queryable): Promise<JobRequest | undefined>;
  /** Every schedule's id and the URL its job starts at, oldest first (at most SCHEDULES_MAX of them). */
  jobUrls(): Promise<Array<{ id: string; url: string | null }>>;
  /** Schedules in all. */
  count(tx?: Queryable): Promise<number>;
  /**
   * Moves the next due time from `from` to `to` (null: none) where it still is `from` (undefined:
   * whatever it is); answers whether it did. The firing that moves it is the one that runs.
   */
  moveNextRun(id: string, from: string | null | undefined, to: string | null, tx?: Queryable): Promise<boolean>;
  /** Up to `limit` schedules that are not paused and have no next due time yet (older releases'). */
  unplanned(limit: number): Promise<StoredSchedule[]>;
}

/** The job as shown, and as sent when a URL in it holds a password (kept apart, never served). */
function jobColumns(job: JobRequest): [string, string | null] {
  const { shown, hidden } = splitSecrets(job);
  return [JSON.stringify(shown), hidden === null ? null : JSON.stringify(hidden)];
}

export function createScheduleStore(db: Database): ScheduleStore {
  return {
    async create(id, f, max, tx) {
      const insert = async (q: Queryable) => {
        // Locked against other writers, so two requests cannot both take the last place.
        await q.exec('LOCK TABLE schedules IN SHARE ROW EXCLUSIVE MODE');
        const [count] = await q.query<{ n: number }>('SELECT count(*)::int AS n FROM schedules');
        if (count!.n >= max) throw new LimitReached(`There are ${count!.n} schedules, the most SCHEDULES_MAX allows (${max}); delete one first.`);
        const rows = await q.query<StoredSchedule>(
          `INSERT INTO schedules (id, name, cron, every_minutes, timezone, job, job_private, paused, allow_overlap)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) RETURNING ${COLUMNS}`,
          [id, f.name, f.cron, f.every_minutes, f.timezone, ...jobColumns(f.job), f.paused, f.allow_overlap],
        );
        return rows[0]!;
      };
      return tx === undefined ? db.transaction(insert) : insert(tx);
    },

    async get(id, tx = db) {
      const rows = await tx.query<StoredSchedule>(`SELECT ${COLUMNS} FROM schedules WHERE id = $1`, [id]);
      return rows[0];
    },

    async list(query) {
      const where = query.paused === undefined ? '' : 'WHERE paused = $1';
      return pagedList<StoredSchedule>(db, {
        columns: COLUMNS,
        from: `FROM schedules ${where}`,
        params: query.paused === undefined ? [] : [query.paused],
        orderBy: 'schedules.created_at DESC, id DESC',
        limit: query.limit,
        offset: query.offset,
      });
    },

    async update(id, f, tx = db) {
      const rows = await tx.query<StoredSchedule>(
        // A job sent back as shown (its passwords masked) keeps the one stored apart.
        `UPDATE schedules SET name = $2, cron = $3, every_minutes = $4, timezone = $5,
                job_private = CASE WHEN $6::jsonb = job AND $7::jsonb IS NULL THEN job_private ELSE $7::jsonb END, job = $6,
                paused = $8, allow_overlap = $9, updated_at = now()
         WHERE id = $1 RETURNING ${COLUMNS}`,
        [id, f.name, f.cron, f.every_minutes, f.timezone, ...jobColumns(f.job), f.paused, f.allow_overlap],
      );
      return rows[0];
    },

    async jobToRun(id, tx = db) {
      const [row] = await tx.query<{ job: JobRequest }>('SELECT COALESCE(job_private, job) AS job FROM schedules WHERE id = $1', [id]);
      return row?.job;
    },

    async delete(id, tx = db) {
      const rows = await tx.query('DELETE FROM schedules WHERE id = $1 RETURNING id', [id]);
      return rows.length > 0;
    },

    async recordRun(id, jobId, tx) {
      await tx.query('UPDATE schedules SET runs = runs + 1, last_run_at = now(), last_job_id = $2 WHERE id = $1', [id, jobId]);
    },

    async recordSkip(id, tx = db) {
      await tx.query('UPDATE schedules SET skipped = skipped + 1, last_skipped_at = now() WHERE id = $1', [id]);
    },

    jobUrls: () => db.query<{ id: string; url: string | null }>("SELECT id, job->>'url' AS url FROM schedules ORDER BY created_at, id"),

    async count(tx = db) {
      const [row] = await tx.query<{ n: number }>('SELECT count(*)::int AS n FROM schedules');
      return row!.n;
    },

    async moveNextRun(id, from, to, tx = db) {
      const where = from === undefined ? '' : from === null ? ' AND next_run_at IS NULL' : ' AND next_run_at = $3::timestamptz';
      const rows = await tx.query(`UPDATE schedules SET next_run_at = $2::timestamptz WHERE id = $1${where} RETURNING id`, from ? [id, to, from] : [id, to]);
      return rows.length > 0;
    },

    unplanned: (limit) => db.query<StoredSchedule>(`SELECT ${COLUMNS} FROM schedules WHERE next_run_at IS NULL AND NOT paused ORDER BY schedules.created_at LIMIT $1`, [limit]),
  };
}
