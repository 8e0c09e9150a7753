// The work queue as the rest of the service sees it: named queues of JSON messages, whatever engine runs behind them (pg-boss-queue.ts).
import type { Queryable } from '../db/queryable.js';

/** How a queue retries and expires its messages; each owner defines its own queues. */
export interface QueuePolicy {
  /** Deliveries after the first that a failed (thrown, or lost with its worker) message gets. */
  retryLimit: number;
  /** The first retry's delay; with `retryBackoff` each later one doubles, up to `retryDelayMaxSeconds`. */
  retryDelaySeconds?: number;
  retryBackoff?: boolean;
  retryDelayMaxSeconds?: number;
  /** A delivery still running after this is taken back and retried. */
  expireInSeconds: number;
}

/** What a handler knows about the delivery it runs. */
export interface WorkContext {
  /** The message's id (given at enqueue, or made by the queue). */
  id: string;
  /** Aborted when the message is cancelled, expires, or the process shuts down. */
  signal: AbortSignal;
  /** Deliveries before this one; `retryLimit` more are allowed in all. */
  retryCount: number;
  retryLimit: number;
}

export type Handler<T> = (data: T, context: WorkContext) => Promise<void>;

export interface Message<T> {
  data: T;
  /** An id of the caller's (a row's id), to cancel or look the message up later. */
  id?: string;
  /** Handed out before every ready message of a lower priority (0 by default); equal ones oldest first. */
  priority?: number;
  /** Its group (a destination, say): with `WorkOptions.perGroup`, at most that many of a group run at once. */
  group?: string;
}

export interface EnqueueOptions {
  /** The caller's transaction: the messages commit or roll back with its rows. */
  tx?: Queryable;
  /** Not delivered before this many milliseconds have passed. */
  delayMs?: number;
  /** Not delivered before this moment (instead of `delayMs`: a due time the caller also stores stays the same to the millisecond). */
  at?: Date;
}

export interface WorkOptions {
  /** Messages this process handles at once. */
  concurrency: number;
  /** Claim and complete messages this many at a time (one round trip per batch); 1 by default. */
  batchSize?: number;
  /**
   * At most this many messages of one group run at once, across every process: a group that is slow
   * (a destination that hangs) holds that many handlers, and the others go on with the rest.
   */
  perGroup?: number;
}

export type QueueState = 'created' | 'retry' | 'active' | 'completed' | 'cancelled' | 'failed';

export interface Queue {
  /** Declares a queue and its policy; every queue is declared before `start`. */
  define(name: string, policy: QueuePolicy): void;
  /** Connects, creates or migrates the queue's schema and the declared queues, starts supervision and the calendar. */
  start(): Promise<void>;
  enqueue<T extends object>(name: string, messages: ReadonlyArray<Message<T>>, options?: EnqueueOptions): Promise<void>;
  /** Stops queued and running messages; a running handler sees its signal abort within about a heartbeat. */
  cancel(name: string, ids: readonly string[]): Promise<void>;
  /** The queue's states of messages, by id (absent ids are unknown to it). */
  states(name: string, ids: readonly string[]): Promise<Map<string, QueueState>>;
  /** Puts `key` in `name`'s calendar (or replaces it): `data` is enqueued once per due time, across all processes. */
  schedule<T extends object>(name: string, key: string, expression: string, timezone: string, data: T): Promise<void>;
  unschedule(name: string, key: string): Promise<void>;
  /** When an expression fires next after `from` (default now); throws a readable Error when it is not valid. */
  nextRun(expression: string, timezone: string, from?: Date): Date | null;
  /** Handles `name`'s messages in this process. */
  work<T extends object>(name: string, options: WorkOptions, handler: Handler<T>): Promise<void>;
  /**
   * Stops fetching work, gives running handlers `graceMs`, then aborts them: each goes back to the
   * queue to be retried, so nothing stays marked running.
   */
  stop(graceMs: number): Promise<void>;
}
