// The job queue as the rest of the service sees it: one small port, whatever queue runs behind it.
import type { Queryable } from '../db/database.js';

/** One page of a crawl, as queued: its frontier row's id is the queue job's id. */
export interface QueuedPage {
  id: string;
  job_id: string;
  url: string;
  depth: number;
}

export interface WorkContext {
  /** The queue's own id of this delivery (a job id, a frontier row id). */
  id: string;
  /** Aborted when the job is cancelled, times out, or the process shuts down. */
  signal: AbortSignal;
  /** Deliveries before this one; `retryLimit` more are allowed in all. */
  retryCount: number;
  retryLimit: number;
}

/** One attempt to deliver one event to one webhook. */
export interface QueuedDelivery {
  webhook_id: string;
  event_id: number;
  attempt: number;
}

export type Handler<T> = (data: T, context: WorkContext) => Promise<void>;

export interface Handlers {
  job: Handler<{ job_id: string }>;
  page: Handler<QueuedPage>;
  scheduled: Handler<{ schedule_id: string }>;
  delivery: Handler<QueuedDelivery>;
}

export type QueueState = 'created' | 'retry' | 'active' | 'completed' | 'cancelled' | 'failed';

export interface JobQueue {
  /** Connects, creates or migrates the queue's schema, and starts its supervision and calendar. */
  start(): Promise<void>;
  /** Queues a job whose row exists; within `tx` when given, so the row and its queue entry commit together. */
  enqueueJob(jobId: string, tx?: Queryable): Promise<void>;
  enqueuePages(pages: readonly QueuedPage[], tx?: Queryable): Promise<void>;
  /** Queues webhook deliveries (within `tx`, with the events they carry), each after `delayMs`. */
  enqueueDeliveries(deliveries: readonly QueuedDelivery[], options?: { tx?: Queryable; delayMs?: number }): Promise<void>;
  /** Stops queued and running work; a running handler sees its signal abort within about a heartbeat. */
  cancelJob(jobId: string): Promise<void>;
  cancelPages(ids: readonly string[]): Promise<void>;
  /** Puts a schedule in the queue's calendar (or replaces it); it fires once per due time across all processes. */
  schedule(scheduleId: string, expression: string, timezone: string): Promise<void>;
  unschedule(scheduleId: string): Promise<void>;
  /** When an expression fires next after now; throws a readable Error when it is not valid. */
  nextRun(expression: string, timezone: string): Date | null;
  /** The queue's states of page jobs, for reconciling a crawl whose worker died. */
  pageStates(ids: readonly string[]): Promise<Map<string, QueueState>>;
  jobState(jobId: string): Promise<QueueState | null>;
  /** Starts handling work in this process. */
  work(handlers: Handlers, concurrency: number): Promise<void>;
  /**
   * Stops fetching work, gives running handlers `graceMs`, then aborts them: each goes back to the
   * queue to be retried, so nothing stays marked running.
   */
  stop(graceMs: number): Promise<void>;
}
