// Cancels of crawls, seen by their pages before the job row says so: at once in the process that takes the cancel, and by every other worker through job_cancel_requests (migration 21), which a page reads before opening (JobStore.pageOpen).
import type { Queryable } from '../db/queryable.js';

export interface CancelRequests {
  /** Known at once to this process's pages (`heard`); answers a function that takes it back. */
  hear(jobId: string): () => void;
  /** Whether this process took a cancel of the job lately: checked where a page opens and where it is about to fetch, at no cost. */
  heard(jobId: string): boolean;
  /** Written for the other processes' pages, before the job row is (that update waits for the pages committing under the row's lock). */
  request(jobId: string): Promise<void>;
  /** Taken back when the cancel could not end the job: its pages open again. */
  withdraw(jobId: string): Promise<void>;
  /** Crawls still queued or running though their cancel was requested over `seconds` ago (its process died). */
  unfinished(seconds: number): Promise<string[]>;
}

/**
 * How long this process remembers a cancel it took. By then the job row says cancelled, and pages read it
 * before opening; the memory covers the pages that had opened before, and stays bounded.
 */
const HEARD_MS = 60_000;

export function createCancelRequests(db: Queryable): CancelRequests {
  const heard = new Map<string, NodeJS.Timeout>();
  const forget = (jobId: string, timer: NodeJS.Timeout) => {
    if (heard.get(jobId) !== timer) return;
    clearTimeout(timer);
    heard.delete(jobId);
  };
  return {
    hear(jobId) {
      clearTimeout(heard.get(jobId));
      const timer = setTimeout(() => forget(jobId, timer), HEARD_MS);
      timer.unref();
      heard.set(jobId, timer);
      return () => forget(jobId, timer);
    },
    heard: (jobId) => heard.has(jobId),
    async request(jobId) {
      await db.query('INSERT INTO job_cancel_requests (job_id) VALUES ($1) ON CONFLICT DO NOTHING', [jobId]);
    },
    async withdraw(jobId) {
      await db.query('DELETE FROM job_cancel_requests WHERE job_id = $1', [jobId]);
    },
    async unfinished(seconds) {
      const rows = await db.query<{ id: string }>(
        `SELECT j.id FROM jobs j JOIN job_cancel_requests c ON c.job_id = j.id
          WHERE j.status IN ('queued', 'running') AND c.requested_at < now() - make_interval(secs => $1)`,
        [seconds],
      );
      return rows.map((r) => r.id);
    },
  };
}
