// The port every scrape-log backend implements; the pipeline and routes see only this.
import type { LogListQuery, ScrapeLog } from './log-schema.js';

export interface LogStore {
  /** Backend name for /health, e.g. "mongodb" or "postgresql-jsonb". */
  readonly backend: string;
  /** Creates indexes (MongoDB) or checks the table exists; idempotent. Returns what it did. */
  init(): Promise<string>;
  /** Writes one document in a single operation (URL passwords masked). */
  insert(log: ScrapeLog): Promise<void>;
  /** Sets `fields` on a document written before (a run's end on its running log), in one operation. */
  finish(id: string, fields: Partial<ScrapeLog>): Promise<void>;
  /**
   * Marks logs still `running` that started before `startedBefore` as failed with `error`: runs whose
   * process died (a live run ends, or is stopped by its deadline, long before). Answers how many.
   */
  interruptRunning(startedBefore: string, error: NonNullable<ScrapeLog['error']>): Promise<number>;
  /** Newest first. */
  list(query: LogListQuery): Promise<{ items: ScrapeLog[]; total: number }>;
  get(id: string): Promise<ScrapeLog | undefined>;
  ping(): Promise<void>;
  close(): Promise<void>;
}

/** How long past its deadline a run's log may stay running before its process counts as dead. */
const INTERRUPT_GRACE_MS = 60_000;

/**
 * Marks the logs of runs whose process died as failed (interrupted). With one process per database
 * (the embedded one, whose directory is locked) every running log at start is such a run; with
 * several, one older than the run deadline and a grace is (a live run has ended or been stopped by then).
 */
export function interruptDeadRuns(logs: Pick<LogStore, 'interruptRunning'>, options: { singleProcess: boolean; runDeadlineMs: number; now?: Date }): Promise<number> {
  const now = (options.now ?? new Date()).getTime();
  const before = options.singleProcess ? now : now - options.runDeadlineMs - INTERRUPT_GRACE_MS;
  return logs.interruptRunning(new Date(before).toISOString(), {
    type: 'urn:data-aggregator:problem:interrupted',
    status: 503,
    detail: 'The process running this scrape stopped before the run ended (a crash or a kill); products it had not stored yet were not stored.',
  });
}
