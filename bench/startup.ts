// Start-up footprint of the main service: time to a healthy /health and idle RSS, on an empty DATA_DIR, on a warm restart, and on PostgreSQL.
//
// Run alone: `node --import tsx bench/startup.ts` (builds nothing: run `npm run build` first; BENCH_DATABASE_URL as in run.ts).
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request } from 'undici';
import { createBenchDatabase } from './database.js';
import { cpuMs, rssMb } from './memory.js';
import { freePort, startChild, type Child } from './processes.js';
import { mark, num, section, table, type TargetCheck } from './report.js';
import { ROOT } from './services.js';

export interface StartupRun {
  label: string;
  /** From spawning `node dist/main/server.js` to the first 200 from GET /health. */
  healthyMs: number;
  /** VmRSS `idleAfterMs` after healthy, nothing asked of the service meanwhile. */
  idleRssMb: number;
  /** VmHWM: the highest RSS the process reached. */
  peakRssMb: number;
  /** CPU time (user + system) the process used until healthy: unlike the wall time, not stretched by a busy machine. */
  cpuToHealthyMs: number;
}

export interface StartupFigures {
  idleAfterMs: number;
  firstStart: StartupRun;
  warmRestart: StartupRun;
  postgresql?: StartupRun;
}

/** The targets of issue 13 (item 4); PostgreSQL has none of its own (it was 1.0 s and 131 MB there: unchanged). */
export const STARTUP_TARGETS = {
  firstStart: { healthyMs: 2000, idleRssMb: 250 },
  warmRestart: { healthyMs: 1000, idleRssMb: 250 },
} as const;

/** VmHWM of `pid` in MB; NaN when the process is gone. */
function peakMb(pid: number): number {
  try {
    const match = /^VmHWM:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match === null ? Number.NaN : Number(match[1]) / 1024;
  } catch {
    return Number.NaN;
  }
}

async function healthy(child: Child, url: string, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child.proc.exitCode !== null || child.proc.signalCode !== null) throw new Error(`${child.name} exited before healthy:\n${child.output()}`);
    try {
      const res = await request(url, { headersTimeout: 2_000, bodyTimeout: 2_000 });
      await res.body.dump();
      if (res.statusCode === 200) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`${child.name} was not healthy within ${timeoutMs} ms:\n${child.output()}`);
}

/**
 * Starts the main service as `npm run start:main` does (workers on, the default), waits for 200 on
 * /health, lets it idle, reads its memory and stops it. `nodeArgs` go before the script (what-if runs: `--wasm-tier-up`);
 * `root` is the checkout whose `dist/` runs (another commit's worktree, for bench/startup-compare.ts).
 */
export async function measureStart(label: string, env: Record<string, string>, idleAfterMs: number, nodeArgs: string[] = [], root = ROOT): Promise<StartupRun> {
  const port = await freePort();
  const started = performance.now();
  const child = startChild(
    `main service (${label})`,
    [...nodeArgs, 'dist/main/server.js'],
    {
      PORT: String(port),
      HOST: '127.0.0.1',
      LOG_LEVEL: 'warn',
      MONGODB_URL: '',
      API_KEY: '',
      EXTERNAL_POSTS_URL: 'http://127.0.0.1:9/posts',
      DEMO_SITE_URL: 'http://127.0.0.1:9/',
      ...env,
    },
    root,
  );
  try {
    await healthy(child, `http://127.0.0.1:${port}/health`);
    const healthyMs = performance.now() - started;
    const cpuToHealthyMs = cpuMs(child.pid);
    await new Promise((r) => setTimeout(r, idleAfterMs));
    return { label, healthyMs, idleRssMb: rssMb(child.pid), peakRssMb: peakMb(child.pid), cpuToHealthyMs };
  } finally {
    await child.stop();
  }
}

/** First start on an empty DATA_DIR, a restart on the same one, and (with `adminUrl`) a fresh PostgreSQL database. */
export async function measureStartup(options: { adminUrl?: string; idleAfterMs?: number } = {}): Promise<StartupFigures> {
  const idleAfterMs = options.idleAfterMs ?? 3_000;
  const dir = mkdtempSync(join(tmpdir(), 'bench-startup-'));
  try {
    const dataDir = join(dir, 'data');
    const firstStart = await measureStart('PGlite, empty DATA_DIR', { DATABASE_URL: '', DATA_DIR: dataDir }, idleAfterMs);
    const warmRestart = await measureStart('PGlite, warm restart', { DATABASE_URL: '', DATA_DIR: dataDir }, idleAfterMs);
    const figures: StartupFigures = { idleAfterMs, firstStart, warmRestart };
    if (options.adminUrl !== undefined) {
      const db = await createBenchDatabase(options.adminUrl);
      try {
        figures.postgresql = await measureStart('PostgreSQL, fresh database', { DATABASE_URL: db.url }, idleAfterMs);
      } finally {
        await db.drop();
      }
    }
    return figures;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The figures as a report section, each PGlite start against its target. */
export function startupSection(figures: StartupFigures): string {
  const row = (run: StartupRun | undefined, target?: { healthyMs: number; idleRssMb: number }): string[] =>
    run === undefined
      ? []
      : [
          run.label,
          `${num(run.healthyMs, 0)} ms ${target === undefined ? ' ' : mark(run.healthyMs <= target.healthyMs)}`,
          `${num(run.idleRssMb)} MB ${target === undefined ? ' ' : mark(run.idleRssMb <= target.idleRssMb)}`,
          `${num(run.peakRssMb)} MB`,
          `${num(run.cpuToHealthyMs, 0)} ms`,
          target === undefined ? '(reference)' : `<= ${target.healthyMs} ms, <= ${target.idleRssMb} MB`,
        ];
  const rows = [row(figures.firstStart, STARTUP_TARGETS.firstStart), row(figures.warmRestart, STARTUP_TARGETS.warmRestart), row(figures.postgresql)].filter((r) => r.length > 0);
  return section(
    'Start-up of the main service',
    `time from spawn to the first 200 from /health; RSS ${figures.idleAfterMs / 1000} s after that, idle (VmRSS), and the peak (VmHWM); CPU time used until healthy (not stretched by a busy machine)`,
    table(['start', 'to healthy', 'idle RSS', 'peak RSS', 'CPU to healthy', 'target'], rows),
  );
}

/** The PGlite starts judged against their targets, for run.ts's list of targets. */
export function startupTargets(figures: StartupFigures): TargetCheck[] {
  const checks: TargetCheck[] = [];
  for (const [run, target] of [
    [figures.firstStart, STARTUP_TARGETS.firstStart],
    [figures.warmRestart, STARTUP_TARGETS.warmRestart],
  ] as const) {
    checks.push({
      section: 'startup',
      name: `${run.label}: time to healthy`,
      value: run.healthyMs,
      unit: 'ms',
      target: `<= ${target.healthyMs} ms`,
      pass: run.healthyMs <= target.healthyMs,
    });
    checks.push({
      section: 'startup',
      name: `${run.label}: idle RSS`,
      value: run.idleRssMb,
      unit: 'MB',
      target: `<= ${target.idleRssMb} MB`,
      pass: run.idleRssMb <= target.idleRssMb,
    });
  }
  return checks;
}

if (import.meta.main) {
  const figures = await measureStartup({ adminUrl: process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres' });
  console.log(startupSection(figures));
  console.log(JSON.stringify(figures, null, 2));
}
