// Opens the stores the configuration names: PostgreSQL or PGlite, MongoDB or the JSONB log table, and the job queue beside them.
import type { Config } from '../config.js';
import { openDatabase, type Database } from '../db/database.js';
import { migrate, type MigrationReport } from '../db/migrate.js';
import type { JobQueue } from '../jobs/job-queue.js';
import { createPgBossQueue } from '../jobs/pgboss-queue.js';
import { createProductStore, type ProductStore } from '../products/product-store.js';
import { createJsonbLogStore } from '../scrape-logs/jsonb-log-store.js';
import { interruptDeadRuns, type LogStore } from '../scrape-logs/log-store.js';
import { createTracking, type Tracking } from '../tracking/tracking.js';

export interface Stores {
  db: Database;
  products: ProductStore;
  logs: LogStore;
  /** The job queue, not started yet (it lives in the same database). */
  queue: JobQueue;
  /** History, events and webhooks, written with the products through `products`. */
  tracking: Tracking;
  close(): Promise<void>;
}

export interface OpenStoresOptions {
  onPoolError?: (error: Error) => void;
  logger?: { warn(details: object, message: string): void; error(details: object, message: string): void };
  /** Test knobs of the queue: how fast a dead worker's job comes back, a schedule fires, a retry waits. */
  queueTiming?: { heartbeatSeconds?: number; superviseSeconds?: number; cronSeconds?: number; retryDelaySeconds?: number };
}

type StoreConfig = Pick<Config, 'databaseUrl' | 'dataDir' | 'mongodbUrl' | 'jobs' | 'tracking' | 'scrapeAllowPrivateNetworks'> & { scrape: Pick<Config['scrape'], 'userAgent'> };

/** Everything stored in the relational database, on an open one (tests build on their own databases). */
export function storesOn(db: Database, logs: LogStore, config: Omit<StoreConfig, 'databaseUrl' | 'dataDir' | 'mongodbUrl'>, options: OpenStoresOptions = {}): Stores {
  const queue = createPgBossQueue({ db, schema: config.jobs.queueSchema, ...(options.logger ? { logger: options.logger } : {}), ...options.queueTiming });
  const tracking = createTracking(db, queue, config, options.logger);
  return {
    db,
    logs,
    queue,
    tracking,
    products: createProductStore(db, { recorder: tracking.recorder }),
    async close() {
      await tracking.sender.close();
      await logs.close();
      await db.close();
    },
  };
}

/**
 * The stores, without touching a PostgreSQL server yet (its pool connects on first use), so a
 * service can start and answer /health while the server is still down. PGlite opens its files.
 */
export async function openStores(config: StoreConfig, options: OpenStoresOptions = {}): Promise<Stores> {
  const db = await openDatabase({ ...config, queueSchema: config.jobs.queueSchema }, { onError: options.onPoolError });
  try {
    return storesOn(db, await openLogStore(config, db), config, options);
  } catch (error) {
    await db.close();
    throw error;
  }
}

/** Migrates the relational schema and initialises the log store: what `npm run db:init` and every start do. */
export async function prepareStores(
  stores: Pick<Stores, 'db' | 'logs'>,
  options: { runDeadlineMs?: number } = {},
): Promise<{ migrations: MigrationReport; logInit: string; interrupted: number }> {
  const migrations = await migrate(stores.db);
  const logInit = await stores.logs.init();
  // Runs a dead process left running get their end: failed, interrupted.
  const interrupted =
    options.runDeadlineMs === undefined ? 0 : await interruptDeadRuns(stores.logs, { singleProcess: stores.db.backend === 'pglite', runDeadlineMs: options.runDeadlineMs });
  return { migrations, logInit, interrupted };
}

async function openLogStore(config: Pick<Config, 'mongodbUrl'>, db: Database): Promise<LogStore> {
  if (config.mongodbUrl === undefined) return createJsonbLogStore(db);
  const { createMongoLogStore } = await import('../scrape-logs/mongo-log-store.js');
  return createMongoLogStore(config.mongodbUrl);
}
