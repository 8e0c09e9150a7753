// The port every scrape-log backend implements; the pipeline and routes see only this.
import type { LogListQuery, ScrapeLog } from './log-schema.js';

export interface LogStore {
  /** Backend name for /health, e.g. "mongodb" or "postgresql-jsonb". */
  readonly backend: string;
  /** Creates indexes (MongoDB) or checks the table exists; idempotent. Returns what it did. */
  init(): Promise<string>;
  /** Writes one complete document in a single operation. */
  insert(log: ScrapeLog): Promise<void>;
  /** Newest first. */
  list(query: LogListQuery): Promise<{ items: ScrapeLog[]; total: number }>;
  get(id: string): Promise<ScrapeLog | undefined>;
  ping(): Promise<void>;
  close(): Promise<void>;
}
