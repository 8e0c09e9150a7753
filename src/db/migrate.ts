// Applies pending migrations in order, each in its own transaction, safe against concurrent starters.
import type { Database } from './queryable.js';
import type { Migration } from './migration.js';
import { migrations as allMigrations } from './migrations/index.js';

/** Arbitrary constant: the advisory lock that serialises migrators across processes. */
export const MIGRATION_LOCK = 72_410_001;

export interface MigrationReport {
  applied: Array<{ version: number; name: string }>;
  current: number;
}

export async function migrate(db: Database, migrations: readonly Migration[] = allMigrations): Promise<MigrationReport> {
  // Under the same lock as the migrations: two processes starting on an empty database at once would
  // otherwise both create it, and one fails (CREATE TABLE IF NOT EXISTS is not safe against a concurrent create).
  await db.transaction(async (tx) => {
    await tx.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK]);
    await tx.exec(`
      CREATE TABLE IF NOT EXISTS schema_migrations (
        version integer PRIMARY KEY,
        name text NOT NULL,
        applied_at timestamptz NOT NULL DEFAULT now()
      )`);
  });
  const applied: MigrationReport['applied'] = [];
  for (const migration of migrations) {
    const done = await db.transaction(async (tx) => {
      await tx.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK]);
      const seen = await tx.query('SELECT 1 FROM schema_migrations WHERE version = $1', [migration.version]);
      if (seen.length > 0) return false;
      await tx.exec(migration.sql);
      if (migration.run !== undefined) await migration.run(tx);
      await tx.query('INSERT INTO schema_migrations (version, name) VALUES ($1, $2)', [migration.version, migration.name]);
      return true;
    });
    if (done) applied.push({ version: migration.version, name: migration.name });
  }
  const [row] = await db.query<{ current: number | null }>('SELECT max(version)::int AS current FROM schema_migrations');
  return { applied, current: row?.current ?? 0 };
}
