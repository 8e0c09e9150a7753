// One small interface over the relational database, with PostgreSQL (pg Pool) and PGlite adapters.
import { mkdirSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { setFlagsFromString } from 'node:v8';
import pg from 'pg';
import { ServiceUnavailable } from '../problems.js';
import { acquireDirLock } from './dir-lock.js';
import { defaultTemplateCache, seedDataDir, type TemplateSpec } from './pglite-template.js';
import { type EngineSession, PgliteThread } from './pglite-thread.js';

export type { Database, Queryable, QueryOptions } from './queryable.js';
import type { Database, Queryable, QueryOptions } from './queryable.js';

export interface PoolStats {
  total: number;
  idle: number;
  waiting: number;
}

/** SQLSTATE classes that mean "the database is not there", not "your statement is wrong". */
const UNAVAILABLE_SQLSTATE = /^(08|53|57P0[1-3])/;
const UNAVAILABLE_MESSAGE = /connect|terminat|timeout|ECONN|EPIPE|ENOTFOUND|EAI_AGAIN|closed|shutting down/i;

/** Missing table or schema: the service was started without `npm run db:init` and could not migrate. */
const MISSING_RELATION = '42P01';
/** statement_timeout fired: the database is overloaded or blocked, not the request wrong. */
const QUERY_CANCELED = '57014';

/**
 * Errors that mean a store is unreachable or uninitialised become 503 problems;
 * anything else (a bug or a constraint) is left for the caller.
 */
export function translateDbError(error: unknown): unknown {
  if (error instanceof ServiceUnavailable) return error;
  const e = error as { code?: unknown; message?: unknown };
  const code = typeof e?.code === 'string' ? e.code : '';
  const message = typeof e?.message === 'string' ? e.message : '';
  if (code === QUERY_CANCELED) {
    return new ServiceUnavailable('The database took too long to answer; try again shortly.', {
      cause: error,
      retryAfterSeconds: 1,
    });
  }
  if (code === MISSING_RELATION) {
    return new ServiceUnavailable('The database is not initialised: run `npm run db:init`.', { cause: error });
  }
  if (UNAVAILABLE_SQLSTATE.test(code) || (!/^[0-9A-Z]{5}$/.test(code) && UNAVAILABLE_MESSAGE.test(message))) {
    return new ServiceUnavailable('The relational database is unavailable; try again shortly.', {
      cause: error,
      retryAfterSeconds: 1,
    });
  }
  return error;
}

export interface PostgresOptions {
  max?: number;
  connectionTimeoutMillis?: number;
  statementTimeoutMillis?: number;
  /** Client-side limit on one statement; default: the statement timeout plus 5 s. */
  queryTimeoutMillis?: number;
  onError?: (error: Error) => void;
}

export interface PostgresDatabase extends Database {
  /** The server this pool connects to; other clients of the same database (the job queue) use it too. */
  readonly connectionString: string;
  poolStats(): PoolStats;
}

export function createPostgresDatabase(connectionString: string, options: PostgresOptions = {}): PostgresDatabase {
  const statementTimeout = options.statementTimeoutMillis ?? 30_000;
  const pool = new pg.Pool({
    connectionString,
    max: options.max ?? 10,
    // Without these a database restart leaves requests hanging on a connect that never completes.
    connectionTimeoutMillis: options.connectionTimeoutMillis ?? 3_000,
    statement_timeout: statementTimeout,
    // statement_timeout needs a server that runs: one frozen or cut off by the network leaves a sent
    // query, and its pool slot, waiting until TCP gives up (minutes). The client gives up instead.
    query_timeout: options.queryTimeoutMillis ?? statementTimeout + 5_000,
    idleTimeoutMillis: 30_000,
  });
  // An idle client losing its server emits 'error' on the pool; unhandled, it would crash the process.
  pool.on('error', (error) => options.onError?.(error));

  // Named statements are prepared once per connection and reused; the SQL text is the identity.
  const names = new Map<string, string>();
  const statement = (text: string, values: readonly unknown[] | undefined, options: QueryOptions | undefined): pg.QueryConfig => {
    if (options?.prepared === false) return { text, values: values as unknown[] };
    let name = names.get(text);
    if (name === undefined && names.size < 500) {
      name = `s${names.size + 1}`;
      names.set(text, name);
    }
    return name === undefined ? { text, values: values as unknown[] } : { name, text, values: values as unknown[] };
  };
  const run = async <R>(client: pg.Pool | pg.PoolClient, sql: string, params?: readonly unknown[], options?: QueryOptions): Promise<R[]> => {
    try {
      const result = await client.query(statement(sql, params, options));
      return result.rows as R[];
    } catch (error) {
      throw translateDbError(error);
    }
  };

  const exec = async (client: pg.Pool | pg.PoolClient, sql: string): Promise<void> => {
    try {
      await client.query(sql); // unnamed and unparameterised: the simple protocol allows several statements
    } catch (error) {
      throw translateDbError(error);
    }
  };

  return {
    backend: 'postgresql',
    connectionString,
    query: (sql, params, options) => run(pool, sql, params, options),
    exec: (sql) => exec(pool, sql),
    async transaction(fn) {
      let client: pg.PoolClient;
      try {
        client = await pool.connect();
      } catch (error) {
        throw translateDbError(error);
      }
      let broken = false;
      // A checked-out client whose server goes away between two statements emits 'error' on itself
      // (the pool listens only to idle ones); unheard, it would end the process. The next statement fails anyway.
      const lost = () => {
        broken = true;
      };
      client.on('error', lost);
      try {
        await run(client, 'BEGIN');
        const result = await fn({ query: (sql, params, options) => run(client, sql, params, options), exec: (sql) => exec(client, sql) });
        await run(client, 'COMMIT');
        return result;
      } catch (error) {
        try {
          await client.query('ROLLBACK');
        } catch {
          broken = true; // the connection is gone; do not hand it back to the pool
        }
        throw translateDbError(error);
      } finally {
        client.off('error', lost);
        client.release(broken);
      }
    },
    poolStats: () => ({ total: pool.totalCount, idle: pool.idleCount, waiting: pool.waitingCount }),
    async close() {
      await pool.end();
    },
  };
}

/**
 * Embedded PostgreSQL (WASM). `dataDir` undefined keeps it in memory (tests); otherwise the files
 * live there and a lock file makes a second process fail fast instead of corrupting them.
 */
export interface PgliteDatabase extends Database {
  /** The whole data directory as a tarball, loadable with `loadDataDir` (test snapshots). */
  dumpDataDir(): Promise<Blob>;
  /** The engine itself, for the job queue's PGlite adapter, which shares its one connection. */
  readonly pglite: Pick<PgliteThread, 'query' | 'exec' | 'listen'>;
}

/**
 * PGlite's buffer pool. WebAssembly memory never shrinks, and PGlite touches all of its shared
 * memory as it starts, so initdb's 128 MB was 128 MB of resident memory from the first second: a
 * small database gets 8 MB, and pages beyond it come from the operating system's page cache. But
 * each such page costs a trip through PGlite's file layer: at a million products a search spent two
 * thirds of its time there (72 ms with 8 MB, 35 ms with 128 MB). So the pool grows with the data:
 * a quarter of the data directory's relation files at start, from 8 to 256 MB.
 */
export function pgliteSharedBuffersMb(pgdata: string | { bytes: number }, setting: number | 'auto' = 'auto'): number {
  if (setting !== 'auto') return setting;
  return Math.min(256, Math.max(8, Math.round(relationBytes(pgdata) / 4 / 1_048_576)));
}

/**
 * The size of a data directory's relation files (its tables and indexes), 0 when it has none yet;
 * or a size read before (`{ bytes }`), so that a start walks the directory once.
 */
function relationBytes(pgdata: string | { bytes: number }): number {
  if (typeof pgdata !== 'string') return pgdata.bytes;
  let bytes = 0;
  try {
    for (const entry of readdirSync(join(pgdata, 'base'), { recursive: true, withFileTypes: true })) {
      if (entry.isFile()) bytes += statSync(join(entry.parentPath, entry.name)).size;
    }
  } catch {
    // no files yet
  }
  return bytes;
}

/** From this much relation data on, a store is large: its queries get V8's optimizing compiler. */
const LARGE_STORE_BYTES = 256 * 1_048_576;

/**
 * Whether PGlite's WebAssembly may be compiled by V8's optimizing tier (see useBaselineWasmCompiler):
 * with 'auto', only for a large store. There the footprint is large anyway (a million products: ~420
 * MB resident) and the optimizing tier is what answers a common word's search under 20 ms (31 ms
 * without it); the price is a one-time peak while it compiles (~930 MB) and ~70 MB more after.
 */
export function pgliteWasmTierUp(pgdata: string | { bytes: number }, setting: boolean | 'auto' = 'auto'): boolean {
  return setting === 'auto' ? relationBytes(pgdata) >= LARGE_STORE_BYTES : setting;
}

/**
 * V8 compiles PGlite's 9 MB of WebAssembly with its baseline compiler (Liftoff), then compiles again
 * with its optimizing one (TurboFan) each function that turns hot. PostgreSQL's parser (raw_parser,
 * 105 KB of WebAssembly) turns hot with the first queries, and TurboFan needs ~600 MB to compile it:
 * RSS leapt to ~750 MB during every start and kept ~60 MB of it. Liftoff alone keeps PGlite near its
 * start-up footprint, for CPU-bound queries (sorts, trigram scans) up to about twice as slow; a
 * large store keeps V8's default (pgliteWasmTierUp). Process-wide, so set before the first PGlite
 * compiles (both flags: `--liftoff-only` itself is not applied after start-up). A process started
 * with any --liftoff or --wasm-tier-up flag keeps its own choice.
 */
export function useBaselineWasmCompiler(): void {
  if (process.execArgv.some((arg) => /^--(no-)?(liftoff|wasm-tier-up|wasm-dynamic-tiering)/.test(arg))) return;
  setFlagsFromString('--no-wasm-tier-up');
  setFlagsFromString('--no-wasm-dynamic-tiering');
}

export interface PgliteOpenOptions {
  /** In memory only: start from this snapshot (dumpDataDir) instead of running initdb. */
  loadDataDir?: Blob;
  /**
   * A data directory without a database yet gets its files from a template (made once, by a child
   * process: see pglite-template.ts) instead of running initdb in this process. Without a template
   * maker (or `false`), PGlite's own initdb runs here (what the maker's child itself does).
   */
  template?: (Partial<TemplateSpec> & Pick<TemplateSpec, 'maker'>) | false;
  /** The buffer pool in MB, or 'auto' (pgliteSharedBuffersMb). */
  sharedBuffersMb?: number | 'auto';
  /** V8's optimizing tier for PGlite's WebAssembly, or 'auto' (pgliteWasmTierUp). */
  wasmTierUp?: boolean | 'auto';
}

export async function createPgliteDatabase(dataDir?: string, options: PgliteOpenOptions = {}): Promise<PgliteDatabase> {
  let release: (() => void) | undefined;
  let db: PgliteThread;
  if (dataDir === undefined) {
    useBaselineWasmCompiler();
    // A snapshot (dumpDataDir) skips initdb, which is most of PGlite's start-up time.
    db = await PgliteThread.start({ sharedBuffersMb: 8, ...(options.loadDataDir === undefined ? {} : { loadDataDir: options.loadDataDir }) });
  } else {
    mkdirSync(dataDir, { recursive: true });
    release = acquireDirLock(join(dataDir, 'pglite.lock'));
    try {
      // Under the lock: no other process seeds or opens this directory meanwhile.
      if (options.template !== undefined && options.template !== false) {
        await seedDataDir(dataDir, { ...options.template, cacheDir: options.template.cacheDir ?? defaultTemplateCache() });
      }
      const pgdata = join(dataDir, 'pglite');
      const size = { bytes: relationBytes(pgdata) };
      // Before this process's first PGlite compiles: the choice is process-wide, its threads' too.
      if (!pgliteWasmTierUp(size, options.wasmTierUp)) useBaselineWasmCompiler();
      db = await PgliteThread.start({ dataDir: pgdata, sharedBuffersMb: pgliteSharedBuffersMb(size, options.sharedBuffersMb) });
    } catch (error) {
      release();
      throw error;
    }
  }
  const run = async <R>(q: EngineSession, sql: string, params?: readonly unknown[], options?: QueryOptions): Promise<R[]> => {
    try {
      return (await q.query<R>(sql, params, options)).rows;
    } catch (error) {
      throw translateDbError(error);
    }
  };
  const exec = async (q: EngineSession, sql: string): Promise<void> => {
    try {
      await q.exec(sql);
    } catch (error) {
      throw translateDbError(error);
    }
  };
  // A statement seen again runs by name, its plan kept, as on PostgreSQL (pglite-statements.ts); QueryOptions says when not.
  const wrap = (q: EngineSession): Queryable => ({ query: (sql, params, options) => run(q, sql, params, options), exec: (sql) => exec(q, sql) });
  let closed = false;
  return {
    backend: 'pglite',
    ...wrap(db),
    pglite: db,
    dumpDataDir: () => db.dumpDataDir(),
    async transaction(fn) {
      try {
        return await db.transaction((tx) => fn(wrap(tx)));
      } catch (error) {
        throw translateDbError(error);
      }
    },
    async close() {
      if (closed) return;
      closed = true;
      try {
        await db.close();
      } finally {
        release?.();
      }
    },
  };
}

export interface DatabaseSettings {
  /** A PostgreSQL server; undefined: PGlite files under `dataDir`. */
  url: string | undefined;
  dataDir: string;
  /** PGlite: a new data directory starts with the job queue's schema under this name too. */
  queueSchema?: string;
  /** PGlite: the script that makes a new data directory's files (see PgliteOpenOptions.template). */
  templateMaker?: string;
  /** PGlite's buffer pool (pgliteSharedBuffersMb). */
  pgliteSharedBuffersMb?: number | 'auto';
  /** PGlite's WebAssembly compiler (pgliteWasmTierUp). */
  pgliteWasmTierUp?: boolean | 'auto';
}

/** DATABASE_URL set: that PostgreSQL server; unset: PGlite files under DATA_DIR. */
export async function openDatabase(settings: DatabaseSettings, options: PostgresOptions = {}): Promise<Database> {
  if (settings.url !== undefined) return createPostgresDatabase(settings.url, options);
  return createPgliteDatabase(settings.dataDir, {
    ...(settings.templateMaker === undefined
      ? {}
      : { template: { maker: settings.templateMaker, ...(settings.queueSchema === undefined ? {} : { queueSchema: settings.queueSchema }) } }),
    ...(settings.pgliteSharedBuffersMb === undefined ? {} : { sharedBuffersMb: settings.pgliteSharedBuffersMb }),
    ...(settings.pgliteWasmTierUp === undefined ? {} : { wasmTierUp: settings.pgliteWasmTierUp }),
  });
}
