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
  migrations: MigrationReport;
  logInit: string;
  close(): Promise<void>;
}

export interface OpenStoresOptions {
  onPoolError?: (error: Error) => void;
}

export async function openStores(
  config: Pick<Config, 'databaseUrl' | 'dataDir' | 'mongodbUrl'>,
  options: OpenStoresOptions = {},
): Promise<Stores> {
  const db = await openDatabase(config, { onError: options.onPoolError });
  try {
    const migrations = await migrate(db);
    const logs = await openLogStore(config, db);
    const logInit = await logs.init();
    return {
      db,
      products: createProductStore(db),
      logs,
      migrations,
      logInit,
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

async function openLogStore(config: Pick<Config, 'mongodbUrl'>, db: Database): Promise<LogStore> {
  if (config.mongodbUrl === undefined) return createJsonbLogStore(db);
  const { createMongoLogStore } = await import('../scrape-logs/mongo-log-store.js');
  return createMongoLogStore(config.mongodbUrl);
}
