// Opens the stores the configuration names: PostgreSQL or PGlite, and MongoDB or the JSONB log table.
import type { Config } from '../config.js';
import { openDatabase, type Database } from '../db/database.js';
import { migrate, type MigrationReport } from '../db/migrate.js';
import { createProductStore, type ProductStore } from '../products/product-store.js';
import { createJsonbLogStore } from '../scrape-logs/jsonb-log-store.js';
import type { LogStore } from '../scrape-logs/log-store.js';

export interface Stores {
  db: Database;
  products: ProductStore;
  logs: LogStore;
  close(): Promise<void>;
}

export interface OpenStoresOptions {
  onPoolError?: (error: Error) => void;
}

/**
 * The stores, without touching a PostgreSQL server yet (its pool connects on first use), so a
 * service can start and answer /health while the server is still down. PGlite opens its files.
 */
export async function openStores(config: Pick<Config, 'databaseUrl' | 'dataDir' | 'mongodbUrl'>, options: OpenStoresOptions = {}): Promise<Stores> {
  const db = await openDatabase(config, { onError: options.onPoolError });
  try {
    const logs = await openLogStore(config, db);
    return {
      db,
      products: createProductStore(db),
      logs,
      async close() {
        await logs.close();
        await db.close();
      },
    };
  } catch (error) {
    await db.close();
    throw error;
  }
}

/** Migrates the relational schema and initialises the log store: what `npm run db:init` and every start do. */
export async function prepareStores(stores: Pick<Stores, 'db' | 'logs'>): Promise<{ migrations: MigrationReport; logInit: string }> {
  const migrations = await migrate(stores.db);
  const logInit = await stores.logs.init();
  return { migrations, logInit };
}

async function openLogStore(config: Pick<Config, 'mongodbUrl'>, db: Database): Promise<LogStore> {
  if (config.mongodbUrl === undefined) return createJsonbLogStore(db);
  const { createMongoLogStore } = await import('../scrape-logs/mongo-log-store.js');
  return createMongoLogStore(config.mongodbUrl);
}
