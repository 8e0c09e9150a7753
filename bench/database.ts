// A throw-away PostgreSQL database per bench run, and direct SQL on it (seeding, growth).
import pg from 'pg';
import { SEED_SQL } from './seed.js';

export interface BenchDatabase {
  name: string;
  url: string;
  /** Runs SQL on the bench database over one connection kept for the whole run. */
  query(sql: string, params?: unknown[]): Promise<pg.QueryResult>;
  /** Inserts products numbered from..to (inclusive) by `sql` (default SEED_SQL) and refreshes the planner's statistics. */
  seed(from: number, to: number, sql?: string): Promise<void>;
  drop(): Promise<void>;
}

function withDatabase(url: string, database: string): string {
  const u = new URL(url);
  u.pathname = `/${database}`;
  return u.href;
}

export async function createBenchDatabase(adminUrl: string): Promise<BenchDatabase> {
  const name = `bench_${new Date().toISOString().replace(/\D/g, '').slice(0, 14)}_${process.pid}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE ${name}`);
  } finally {
    await admin.end();
  }
  const url = withDatabase(adminUrl, name);
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  let dropped = false;
  return {
    name,
    url,
    query: (sql, params) => client.query(sql, params),
    async seed(from, to, sql = SEED_SQL) {
      await client.query(sql, [from, to]);
      await client.query('ANALYZE products');
    },
    async drop() {
      if (dropped) return;
      dropped = true;
      await client.end().catch(() => undefined);
      const again = new pg.Client({ connectionString: adminUrl });
      await again.connect();
      try {
        // FORCE: a service killed mid-run may leave connections behind.
        await again.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      } finally {
        await again.end();
      }
    },
  };
}
