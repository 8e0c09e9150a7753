// What the default request log costs: GET /products/{id} on two main services, one at LOG_LEVEL=info, one at warn, in alternating slices.
import { measurePair, type LoadOptions, type LoadResult } from './http.js';
import { num, section, table, type TargetCheck } from './report.js';
import { startMain, type MainOptions, type Running } from './services.js';

/** The default request log (info) may cost at most 8 % of GET /products/{id} throughput against warn. */
export const LOGGING_TARGET_RATIO = 0.92;

export interface LoggingFigures {
  /** The service at the default level: one JSON line per request, written to a pipe the bench reads. */
  info: LoadResult;
  /** The same service with request lines off. */
  warn: LoadResult;
  /** info req/s over warn req/s: 1 means logging is free (target: >= LOGGING_TARGET_RATIO). */
  ratio: number;
  /**
   * warn's CPU time per request over info's: the same question asked of the service's own CPU time,
   * which the machine's other load moves far less than req/s.
   */
  cpuRatio: number;
  /** Request lines the info service wrote, warm-up included (each request has one). */
  infoLines: number;
}

export interface LoggingTarget {
  /** PostgreSQL holding products 1..rows (the HTTP bench's seed); the two services share it. */
  databaseUrl: string;
  demoSiteUrl: string;
  rows: number;
  /** Starts a service; defaults to the bench's own (dist/main/server.js). */
  start?: (options: MainOptions) => Promise<Running>;
}

/**
 * Starts the main service twice on the same database, at LOG_LEVEL=info and at warn, and measures
 * GET /products/{random id} on both in alternating slices (as measurePair does for the ceiling), so
 * the machine's background load falls on both alike. Their stdout goes to a pipe this process reads,
 * as under a process manager or a container runtime.
 */
export async function measureLogging(target: LoggingTarget, options: LoadOptions, progress?: (line: string) => void): Promise<LoggingFigures> {
  const start = target.start ?? startMain;
  const base = { databaseUrl: target.databaseUrl, demoSiteUrl: target.demoSiteUrl };
  const info = await start({ ...base, label: 'LOG_LEVEL=info', env: { LOG_LEVEL: 'info' } });
  let infoLines = 0;
  info.child.proc.stdout?.on('data', (chunk: Buffer) => {
    for (let at = chunk.indexOf('"msg":"request"'); at !== -1; at = chunk.indexOf('"msg":"request"', at + 1)) infoLines++;
  });
  try {
    const warn = await start({ ...base, label: 'LOG_LEVEL=warn', env: { LOG_LEVEL: 'warn' } });
    try {
      const pathFor = () => `/products/${1 + Math.floor(Math.random() * target.rows)}`;
      const spec = { method: 'GET' as const, path: '/products/1', pathFor };
      const [i, w] = await measurePair({ ...spec, base: info.url, pid: info.child.pid }, { ...spec, base: warn.url, pid: warn.child.pid }, options, progress);
      return { info: i, warn: w, ratio: i.requestsPerSecond / w.requestsPerSecond, cpuRatio: w.cpuUsPerRequest / i.cpuUsPerRequest, infoLines };
    } finally {
      await warn.child.stop();
    }
  } finally {
    await info.child.stop();
  }
}

/** The figures as a section of the bench's report. */
export function loggingSection(f: LoggingFigures, options: LoadOptions): string {
  const row = (level: string, r: LoadResult) => [level, num(r.requestsPerSecond, 0), num(r.p50Ms, 2), num(r.p99Ms, 2), String(r.errors + r.non2xx), num(r.cpuUsPerRequest, 1)];
  return section(
    'Logging',
    `GET /products/{random id} on two main services (PostgreSQL), LOG_LEVEL=info and warn, ${options.connections} connections, ` +
      `${options.durationS} s each in ${options.slices} alternating slices. Target: info / warn req/s >= ${LOGGING_TARGET_RATIO}.`,
    table(['LOG_LEVEL', 'req/s', 'p50 ms', 'p99 ms', 'err', 'CPU µs/req'], [row('info', f.info), row('warn', f.warn)]) +
      `\n\ninfo / warn: ${num(f.ratio, 3)} req/s, ${num(f.cpuRatio, 3)} by CPU per request; ${f.infoLines.toLocaleString('en-US')} request lines written at info.`,
  );
}

/** The target the figures are judged against, for the bench's list of targets. */
export function loggingTarget(f: LoggingFigures): TargetCheck {
  return {
    section: 'logging',
    name: 'GET /products/{id} req/s at LOG_LEVEL=info vs warn',
    value: f.ratio,
    unit: 'x',
    target: `>= ${LOGGING_TARGET_RATIO}`,
    pass: f.ratio >= LOGGING_TARGET_RATIO,
  };
}
