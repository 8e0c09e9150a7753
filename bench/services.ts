// Starting the services under test (from dist/) and the ceiling servers, each as its own process.
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { firstJsonLine, freePort, startChild, waitUntilReady, type Child } from './processes.js';

export const ROOT = join(import.meta.dirname, '..');

/** Logging every request at info would dominate a 10 s load run; the report says so. */
export const SERVICE_LOG_LEVEL = 'warn';

export interface Running {
  child: Child;
  url: string;
  /** Inspector port (main service only), used to force a GC before memory readings. */
  inspectPort?: number;
}

export interface MainOptions {
  label: string;
  /** PostgreSQL; else PGlite in `dataDir`. */
  databaseUrl?: string;
  dataDir?: string;
  demoSiteUrl: string;
  /** Directory for a V8 CPU profile of the service (BENCH_CPU_PROF). */
  cpuProfDir?: string;
  /** Settings over the bench's defaults (what-if runs). */
  env?: Record<string, string>;
}

export async function startMain(options: MainOptions): Promise<Running> {
  const port = await freePort();
  const env: Record<string, string> = {
    PORT: String(port),
    HOST: '127.0.0.1',
    LOG_LEVEL: SERVICE_LOG_LEVEL,
    SCRAPE_ALLOW_PRIVATE_NETWORKS: 'true',
    DEMO_SITE_URL: options.demoSiteUrl,
    // Nothing in the bench may reach the internet.
    EXTERNAL_POSTS_URL: 'http://127.0.0.1:9/posts',
    // Logs go to the relational database's JSONB table, whatever the caller's environment says.
    MONGODB_URL: '',
    // Rate limits stay on (their cost is part of every write) but far above what a load run sends.
    RATE_LIMIT_WRITES_PER_MINUTE: '10000000',
    RATE_LIMIT_SCRAPE_PER_MINUTE: '1000000',
    API_KEY: '',
    CORS_ORIGINS: '',
    // The API alone: job benches start worker processes of their own; idle workers would poll during load runs.
    WORKERS: '0',
  };
  if (process.env.CHROMIUM_PATH === undefined) env.CHROMIUM_PATH = '/usr/bin/chromium';
  if (options.databaseUrl !== undefined) env.DATABASE_URL = options.databaseUrl;
  else env.DATABASE_URL = '';
  if (options.dataDir !== undefined) env.DATA_DIR = options.dataDir;
  Object.assign(env, options.env);
  // The inspector only listens (nothing attaches during load runs); memory readings use it to force a GC.
  const inspectPort = await freePort();
  const args = [`--inspect=127.0.0.1:${inspectPort}`];
  if (options.cpuProfDir !== undefined) args.push('--cpu-prof', `--cpu-prof-dir=${options.cpuProfDir}`);
  args.push('dist/main/server.js');
  const child = startChild(`main service (${options.label})`, args, env, ROOT);
  const url = `http://127.0.0.1:${port}`;
  await waitUntilReady(child, `${url}/health`);
  return { child, url, inspectPort };
}

export async function startAux(mainUrl: string): Promise<Running> {
  const port = await freePort();
  const child = startChild(
    'auxiliary service',
    ['dist/auxiliary/server.js'],
    {
      AUX_PORT: String(port),
      HOST: '127.0.0.1',
      MAIN_SERVICE_URL: mainUrl,
      LOG_LEVEL: SERVICE_LOG_LEVEL,
      RATE_LIMIT_WRITES_PER_MINUTE: '10000000',
      API_KEY: '',
      CORS_ORIGINS: '',
    },
    ROOT,
  );
  const url = `http://127.0.0.1:${port}`;
  await waitUntilReady(child, `${url}/`);
  return { child, url };
}

/**
 * The Flask stand-in for the original text service (bench/reference/flask_text.py), or why it
 * cannot start (this machine's python3 has no Flask).
 */
export async function startFlaskText(): Promise<Running | { missing: string }> {
  const probe = spawnSync('python3', ['-c', 'import flask'], { encoding: 'utf8' });
  if (probe.status !== 0) return { missing: `python3 with Flask is not available here (${(probe.error?.message ?? probe.stderr).trim().split('\n').pop()})` };
  const port = await freePort();
  const child = startChild('Flask stand-in', ['bench/reference/flask_text.py'], { PORT: String(port) }, ROOT, 'python3');
  const url = `http://127.0.0.1:${port}`;
  await waitUntilReady(child, `${url}/`);
  return { child, url };
}

export async function startCeiling(label: string, target: { databaseUrl: string } | { pgliteDir: string; seedRows: number }): Promise<Running> {
  const env: Record<string, string> =
    'databaseUrl' in target ? { CEILING_DATABASE_URL: target.databaseUrl } : { CEILING_PGLITE_DIR: target.pgliteDir, CEILING_SEED_ROWS: String(target.seedRows) };
  const child = startChild(`ceiling (${label})`, ['--import', 'tsx', 'bench/ceiling-server.ts'], { ...env, PORT: '0' }, ROOT);
  const { port } = await firstJsonLine<{ port: number }>(child);
  return { child, url: `http://127.0.0.1:${port}` };
}
