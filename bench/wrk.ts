// Load with wrk (Debian's package) for servers that close the connection after every answer, as
// Flask's own server does: autocannon stalls on such a close, wrk reconnects at once.
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { median } from './client.js';
import { cpuMs } from './memory.js';

export interface WrkSpec {
  url: string;
  body: string;
  contentType: string;
  /** The server's process, for its CPU time per request. */
  pid: number;
}

export interface WrkResult {
  requestsPerSecond: number;
  /** Medians of the slices' own percentiles (wrk reports percentiles per run, which cannot be merged). */
  p50Ms: number;
  p99Ms: number;
  requests: number;
  /** Non-2xx/3xx answers and socket errors (connect, read, write, timeout). */
  errors: number;
  cpuUsPerRequest: number;
}

interface WrkSlice {
  requests: number;
  durationS: number;
  p50Ms: number;
  p99Ms: number;
  errors: number;
  cpuMs: number;
}

/** Undefined when wrk is installed, else why it cannot run. */
export function wrkMissing(): string | undefined {
  const probe = spawnSync('wrk', ['--version'], { encoding: 'utf8' });
  return probe.error === undefined ? undefined : 'wrk is not installed (Debian package wrk)';
}

const UNIT_MS: Record<string, number> = { us: 0.001, ms: 1, s: 1000, m: 60_000 };

function parse(out: string, pattern: RegExp): number {
  const match = out.match(pattern);
  if (match === null) throw new Error(`wrk output without ${pattern}:\n${out}`);
  return match[2] === undefined ? Number(match[1]) : Number(match[1]) * UNIT_MS[match[2]]!;
}

function runWrk(spec: WrkSpec, script: string, connections: number, durationS: number): Promise<WrkSlice> {
  const before = cpuMs(spec.pid);
  return new Promise((resolve, reject) => {
    const wrk = spawn('wrk', ['-t2', `-c${connections}`, `-d${durationS}s`, '--latency', '-s', script, spec.url], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    wrk.stdout.on('data', (chunk: Buffer) => (out += chunk.toString('utf8')));
    wrk.stderr.on('data', (chunk: Buffer) => (out += chunk.toString('utf8')));
    wrk.once('error', reject);
    wrk.once('exit', (code) => {
      if (code !== 0) return reject(new Error(`wrk exited ${code}:\n${out}`));
      try {
        const socket = out.match(/Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/);
        const nonOk = out.match(/Non-2xx or 3xx responses: (\d+)/);
        resolve({
          requests: parse(out, /(\d+) requests in/),
          durationS: parse(out, /requests in ([\d.]+)(us|ms|s|m),/) / 1000,
          p50Ms: parse(out, /\s50%\s+([\d.]+)(us|ms|s|m)/),
          p99Ms: parse(out, /\s99%\s+([\d.]+)(us|ms|s|m)/),
          errors: (socket === null ? 0 : socket.slice(1).reduce((n, v) => n + Number(v), 0)) + (nonOk === null ? 0 : Number(nonOk[1])),
          cpuMs: cpuMs(spec.pid) - before,
        });
      } catch (error) {
        reject(error as Error);
      }
    });
  });
}

function merge(slices: WrkSlice[]): WrkResult {
  const sum = (pick: (s: WrkSlice) => number) => slices.reduce((n, s) => n + pick(s), 0);
  return {
    requestsPerSecond: sum((s) => s.requests) / sum((s) => s.durationS),
    p50Ms: median(slices.map((s) => s.p50Ms)),
    p99Ms: median(slices.map((s) => s.p99Ms)),
    requests: sum((s) => s.requests),
    errors: sum((s) => s.errors),
    cpuUsPerRequest: (sum((s) => s.cpuMs) * 1000) / sum((s) => s.requests),
  };
}

/** As measurePair (http.ts): warm-up, then a and b in alternating slices, with wrk. */
export async function measureWrkPair(
  a: WrkSpec,
  b: WrkSpec,
  options: { connections: number; durationS: number; warmupS: number; slices: number },
): Promise<[WrkResult, WrkResult]> {
  const dir = mkdtempSync(join(tmpdir(), 'bench-wrk-'));
  try {
    // wrk sends one request shape, described by a Lua script; the body is read from a file.
    const scriptFor = (spec: WrkSpec, name: string) => {
      const bodyFile = join(dir, `${name}.body`);
      writeFileSync(bodyFile, spec.body);
      const script = join(dir, `${name}.lua`);
      writeFileSync(
        script,
        `wrk.method = "POST"\nwrk.headers["Content-Type"] = ${JSON.stringify(spec.contentType)}\nlocal f = io.open(${JSON.stringify(bodyFile)}, "rb")\nwrk.body = f:read("*a")\nf:close()\n`,
      );
      return script;
    };
    const [scriptA, scriptB] = [scriptFor(a, 'a'), scriptFor(b, 'b')];
    const sliceS = Math.max(1, Math.round(options.durationS / options.slices));
    if (options.warmupS > 0) {
      await runWrk(a, scriptA, options.connections, options.warmupS);
      await runWrk(b, scriptB, options.connections, options.warmupS);
    }
    const [aSlices, bSlices]: [WrkSlice[], WrkSlice[]] = [[], []];
    for (let i = 0; i < options.slices; i++) {
      aSlices.push(await runWrk(a, scriptA, options.connections, sliceS));
      bSlices.push(await runWrk(b, scriptB, options.connections, sliceS));
    }
    return [merge(aSlices), merge(bSlices)];
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
