// Load generation with autocannon: warm-up, then the measured time split into slices that alternate between two servers.
import autocannon from 'autocannon';
import { cpuBetween, type BackendCpu } from './database-cpu.js';
import { cpuMs } from './memory.js';

export interface LoadSpec {
  /** Base URL of the server, no trailing slash. */
  base: string;
  method: 'GET' | 'POST';
  path: string;
  /** A fresh path per request (e.g. a random id). */
  pathFor?: () => string;
  body?: string;
  headers?: Record<string, string>;
  /** The server's process, whose CPU time per request is reported (independent of the machine's other load). */
  pid?: number;
  /** The PostgreSQL backends of the database it uses, whose CPU per request is reported too. */
  database?: { read(): Promise<BackendCpu> };
}

export interface LoadResult {
  /** Completed responses (any status) per second over the measured time. */
  requestsPerSecond: number;
  /** Latency percentiles in ms from every 2xx response's own timing (autocannon's histogram keeps whole ms only). */
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
  requests: number;
  errors: number;
  timeouts: number;
  non2xx: number;
  durationS: number;
  bytesPerSecond: number;
  /** Responses by status code. */
  statuses: Record<string, number>;
  /** Requests/s of each measured slice, to show how steady the machine was. */
  slices: number[];
  /** CPU time (user + system) of the server process per completed request, µs; NaN without a pid. */
  cpuUsPerRequest: number;
  /** CPU time of the database's backends per completed request, µs; NaN without `database`. */
  databaseCpuUsPerRequest: number;
}

export interface LoadOptions {
  connections: number;
  /** Measured seconds per server, split into `slices` alternating slices. */
  durationS: number;
  warmupS: number;
  slices: number;
}

interface Slice {
  latencies: Float64Array;
  completed: number;
  durationS: number;
  errors: number;
  timeouts: number;
  non2xx: number;
  bytes: number;
  statuses: Record<string, number>;
  cpuMs: number;
  databaseCpuMs: number;
}

function percentile(sorted: Float64Array, p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

async function run(spec: LoadSpec, connections: number, durationS: number): Promise<Slice> {
  const pathFor = spec.pathFor;
  let latencies = new Float64Array(1 << 15);
  let count = 0;
  const databaseBefore = await spec.database?.read();
  const cpuBefore = spec.pid === undefined ? Number.NaN : cpuMs(spec.pid);
  const slice = await new Promise<Omit<Slice, 'databaseCpuMs'>>((resolve, reject) => {
    const instance = autocannon(
      {
        url: spec.base,
        connections,
        duration: durationS,
        method: spec.method,
        ...(spec.body === undefined ? {} : { body: spec.body }),
        headers: spec.headers ?? {},
        requests: [
          {
            method: spec.method,
            path: spec.path,
            ...(pathFor === undefined ? {} : { setupRequest: (request: autocannon.Request) => ({ ...request, path: pathFor() }) }),
          },
        ],
      },
      (error: unknown, result: autocannon.Result) => {
        if (error) return reject(error as Error);
        const completed = result['1xx'] + result['2xx'] + result['3xx'] + result['4xx'] + result['5xx'];
        resolve({
          latencies: latencies.subarray(0, count),
          completed,
          durationS: result.duration,
          errors: result.errors,
          timeouts: result.timeouts,
          non2xx: result.non2xx,
          bytes: result.throughput.total,
          statuses: Object.fromEntries(Object.entries(result.statusCodeStats ?? {}).map(([code, stat]) => [code, stat.count ?? 0])),
          cpuMs: spec.pid === undefined ? Number.NaN : cpuMs(spec.pid) - cpuBefore,
        });
      },
    );
    instance.on('response', (_client, statusCode, _bytes, responseTime) => {
      if (statusCode < 200 || statusCode >= 300) return;
      if (count === latencies.length) {
        const bigger = new Float64Array(latencies.length * 2);
        bigger.set(latencies);
        latencies = bigger;
      }
      latencies[count++] = responseTime;
    });
  });
  const databaseAfter = await spec.database?.read();
  return { ...slice, databaseCpuMs: databaseBefore === undefined || databaseAfter === undefined ? Number.NaN : cpuBetween(databaseBefore, databaseAfter) };
}

function merge(slices: Slice[]): LoadResult {
  const total = slices.reduce((n, s) => n + s.latencies.length, 0);
  const all = new Float64Array(total);
  let at = 0;
  for (const s of slices) {
    all.set(s.latencies, at);
    at += s.latencies.length;
  }
  all.sort();
  const sum = (pick: (s: Slice) => number) => slices.reduce((n, s) => n + pick(s), 0);
  const durationS = sum((s) => s.durationS);
  const statuses: Record<string, number> = {};
  for (const s of slices) for (const [code, n] of Object.entries(s.statuses)) statuses[code] = (statuses[code] ?? 0) + n;
  return {
    requestsPerSecond: sum((s) => s.completed) / durationS,
    p50Ms: percentile(all, 50),
    p99Ms: percentile(all, 99),
    maxMs: total === 0 ? Number.NaN : all[total - 1]!,
    requests: sum((s) => s.completed),
    errors: sum((s) => s.errors),
    timeouts: sum((s) => s.timeouts),
    non2xx: sum((s) => s.non2xx),
    durationS,
    bytesPerSecond: sum((s) => s.bytes) / durationS,
    statuses,
    slices: slices.map((s) => s.completed / s.durationS),
    cpuUsPerRequest: (sum((s) => s.cpuMs) * 1000) / sum((s) => s.completed),
    databaseCpuUsPerRequest: (sum((s) => s.databaseCpuMs) * 1000) / sum((s) => s.completed),
  };
}

/**
 * Warms both servers up, then measures them in alternating slices (a, b, a, b…) so that a change
 * in the machine's background load falls on both rather than on one.
 */
export async function measurePair(a: LoadSpec, b: LoadSpec, options: LoadOptions, progress?: (line: string) => void): Promise<[LoadResult, LoadResult]> {
  const sliceS = Math.max(1, Math.round(options.durationS / options.slices));
  const aSlices: Slice[] = [];
  const bSlices: Slice[] = [];
  if (options.warmupS > 0) {
    await run(a, options.connections, options.warmupS);
    await run(b, options.connections, options.warmupS);
  }
  for (let i = 0; i < options.slices; i++) {
    progress?.(`slice ${i + 1}/${options.slices}`);
    aSlices.push(await run(a, options.connections, sliceS));
    bSlices.push(await run(b, options.connections, sliceS));
  }
  return [merge(aSlices), merge(bSlices)];
}

/** Warms one server up, then measures it for `options.durationS` (in slices, as measurePair does). */
export async function measureOne(spec: LoadSpec, options: LoadOptions): Promise<LoadResult> {
  const sliceS = Math.max(1, Math.round(options.durationS / options.slices));
  if (options.warmupS > 0) await run(spec, options.connections, options.warmupS);
  const slices: Slice[] = [];
  for (let i = 0; i < options.slices; i++) slices.push(await run(spec, options.connections, sliceS));
  return merge(slices);
}
