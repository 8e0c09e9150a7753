// Test helpers: the database backends to run against, and apps built on them.
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { createPgliteDatabase, createPostgresDatabase, type Database } from '../src/db/database.js';
import { migrate } from '../src/db/migrate.js';
import { migrations } from '../src/db/migrations/index.js';
import { loadConfig } from '../src/config/config.js';
import { createContext } from '../src/context.js';
import { buildMainApp } from '../src/main/app.js';
import { createPgBossQueue, type QueueTiming } from '../src/queue/pgboss-queue.js';
import { createJsonbLogStore } from '../src/scrape-logs/jsonb-log-store.js';
import { findChromium } from '../src/scraping/browser/index.js';
import { findPostgresBin } from './fixtures/throwaway-postgres.js';

export interface Backend {
  name: 'pglite' | 'postgresql';
  /** A fresh, migrated, empty database; closing it drops what it made. */
  open(): Promise<Database>;
}

const pgUrl = process.env.TEST_DATABASE_URL ?? process.env.DATABASE_URL;

/** PGlite always; PostgreSQL when TEST_DATABASE_URL or DATABASE_URL names a server. */
export function backends(): Backend[] {
  const list: Backend[] = [{ name: 'pglite', open: openPglite }];
  if (pgUrl) list.push({ name: 'postgresql', open: () => openPostgres(pgUrl) });
  return list;
}

/**
 * The dashboard's browser tests run on the embedded default, what a fresh install serves the
 * dashboard from. Every API call a screen makes is tested on both backends by the API suites; a
 * browser per backend doubled the longest part of the suite and checked no line of SQL more.
 */
export function dashboardBackends(): Backend[] {
  return backends().filter((backend) => backend.name === 'pglite');
}

/**
 * A suite's skip option: false (run it) when what it needs is here, else the reason it is skipped.
 * Under CI (CI set, as .ci/run does) never skipped: a missing dependency fails the suite instead.
 */
export function skipUnless(available: boolean, reason: string): string | false {
  return available || process.env.CI !== undefined ? false : reason;
}

/** Chromium for dynamic-mode and dashboard tests (CHROMIUM_PATH or a known install). */
export const chromiumPath = findChromium(process.env.CHROMIUM_PATH, process.env.PATH ?? '');
export const noChromium = skipUnless(chromiumPath !== undefined, 'no Chromium here: install chromium or set CHROMIUM_PATH');

/** Debian's PostgreSQL server binaries, for the tests that run a throwaway server of their own. */
const postgresBin = findPostgresBin();
export const noPostgresBinaries = skipUnless(!('missing' in postgresBin), 'missing' in postgresBin ? postgresBin.missing : '');

let warned = false;
export function warnIfNoPostgres(): void {
  if (!pgUrl && !warned) {
    warned = true;
    console.warn('# PostgreSQL runs skipped: set DATABASE_URL or TEST_DATABASE_URL to run the suites against a server too');
  }
}

/**
 * An in-memory PGlite, started from a migrated snapshot cached in the temp directory: initdb takes
 * seconds, loading a snapshot a fraction of that. The snapshot's name covers the schema version.
 */
async function openPglite(): Promise<Database> {
  // The queue's version too: its schema is in the snapshot.
  const queueVersion = JSON.parse(readFileSync(new URL('../node_modules/pg-boss/package.json', import.meta.url), 'utf8')).version;
  const schema = createHash('sha256')
    .update(JSON.stringify(migrations.map((m) => ({ ...m, run: m.run?.toString() }))))
    .update(queueVersion)
    .digest('hex')
    .slice(0, 12);
  const snapshot = join(tmpdir(), `data-aggregator-pglite-${schema}.tar`);
  if (existsSync(snapshot)) {
    return createPgliteDatabase(undefined, { loadDataDir: new Blob([readFileSync(snapshot)]) });
  }
  const db = await createPgliteDatabase();
  await migrate(db);
  // The queue's schema too, so each test's queue starts on it instead of creating it.
  const queue = createPgBossQueue({ db, schema: 'pgboss' });
  await queue.start();
  await queue.stop(1000);
  const dump = await db.dumpDataDir();
  const partial = `${snapshot}.${process.pid}`;
  writeFileSync(partial, Buffer.from(await dump.arrayBuffer()));
  renameSync(partial, snapshot); // atomic: parallel test files never read half a snapshot
  return db;
}

/**
 * Each test file's PostgreSQL store is a database of its own on the server, so test files run in
 * parallel without seeing each other: not their tables, and not their open transactions (the event
 * feed holds back events newer than the oldest transaction still open in the same database).
 */
async function openPostgres(url: string): Promise<Database> {
  const name = `test_${randomBytes(6).toString('hex')}`;
  const admin = async (sql: string) => {
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      await client.query(sql);
    } finally {
      await client.end();
    }
  };
  await admin(`CREATE DATABASE ${name}`);
  const scoped = new URL(url);
  scoped.pathname = `/${name}`;
  const db = createPostgresDatabase(scoped.toString(), { max: 5 });
  await migrate(db);
  return {
    ...db,
    async close() {
      await db.close();
      await admin(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    },
  };
}

/**
 * The main app on `db` with the JSONB log store, real fetcher and browser, and a posts client for
 * EXTERNAL_POSTS_URL, closed when the test ends. `env` adds configuration (DEMO_SITE_URL,
 * SCRAPE_ALLOW_PRIVATE_NETWORKS, EXTERNAL_POSTS_URL, EXTERNAL_POSTS_TIMEOUT_MS...).
 */
export async function mainAppOn(db: Database, t: { after(fn: () => Promise<void>): void }, env: Record<string, string> = {}) {
  return (await mainServiceOn(db, t, env)).app;
}

/**
 * The main app on `db` through the same composition root as the service (context.ts), with the JSONB
 * log store, the real fetcher and browser, and a posts client for EXTERNAL_POSTS_URL, closed when the
 * test ends. The queue gets a schema of its own on PostgreSQL (test files never share a queue);
 * this process works jobs only when `work` is set.
 */
export async function mainServiceOn(
  db: Database,
  t: { after(fn: () => Promise<void>): void },
  env: Record<string, string> = {},
  options: { work?: boolean; queueTiming?: QueueTiming } = {},
) {
  const queueSchema = env.JOBS_SCHEMA ?? (db.backend === 'postgresql' ? `q_${randomBytes(5).toString('hex')}` : 'pgboss');
  const config = loadConfig({ LOG_LEVEL: 'silent', ...env, JOBS_SCHEMA: queueSchema });
  const context = await createContext(config, { db, logs: createJsonbLogStore(db), ...(options.queueTiming ? { queueTiming: options.queueTiming } : {}) });
  // Apps on a database that is down (fault tests) still build: only a test that works jobs needs the queue.
  await context.start(options.work === true).catch((error: unknown) => {
    if (options.work === true) throw error;
  });
  const app = await buildMainApp(context);
  t.after(async () => {
    await app.close();
    await context.drain(1000);
    await context.close();
    if (db.backend === 'postgresql' && env.JOBS_SCHEMA === undefined) await db.exec(`DROP SCHEMA IF EXISTS ${queueSchema} CASCADE`).catch(() => undefined);
  });
  return { app, context, config };
}

/** The main service of a suite on one backend, and what the suite opened beside it, closed together. */
export interface OpenService extends Awaited<ReturnType<typeof mainServiceOn>> {
  db: Database;
  /** Closes `thing` (a fixture site, a receiver) after the service, before the database: returns it. */
  own<T extends { close(): Promise<void> }>(thing: T): T;
  /** Runs `fn` at close, after the service and before what the suite owns. */
  onClose(fn: () => Promise<void>): void;
  /** The service first (its handlers stop), then what the suite owns (last owned first), then the database. */
  close(): Promise<void>;
}

/**
 * A fresh database on `backend` with the main service on it (mainServiceOn: `env`, and with `work` its
 * workers): what most suites open in `before` and close in `after`.
 */
export async function openService(backend: Backend, env: Record<string, string> = {}, options: { work?: boolean; queueTiming?: QueueTiming } = {}): Promise<OpenService> {
  const db = await backend.open();
  const first: Array<() => Promise<void>> = [];
  const owned: Array<() => Promise<void>> = [];
  const service = await mainServiceOn(db, { after: (fn) => first.unshift(fn) }, env, options);
  return {
    ...service,
    db,
    own(thing) {
      owned.unshift(() => thing.close());
      return thing;
    },
    onClose(fn) {
      first.push(fn);
    },
    async close() {
      for (const close of [...first.splice(0), ...owned.splice(0)]) await close();
      await db.close();
    },
  };
}

/** Asserts an RFC 9457 problem answer with `status` and no stack trace; returns its parsed body. */
export function assertProblem(res: { statusCode: number; headers: Record<string, unknown>; body: string }, status: number) {
  assert.equal(res.statusCode, status, res.body);
  assert.match(String(res.headers['content-type']), /^application\/problem\+json/);
  const body = JSON.parse(res.body);
  assert.equal(body.status, status);
  assert.equal(typeof body.title, 'string');
  assert.equal(typeof body.detail, 'string');
  assert.match(body.type, /^urn:data-aggregator:problem:/);
  assert.doesNotMatch(res.body, /at .*\.(ts|js):\d+/, 'no stack trace');
  return body;
}
