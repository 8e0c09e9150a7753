// Helpers for tests that run a service as a real child process.
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer, connect } from 'node:net';
import { fileURLToPath } from 'node:url';

/** An absolute loader URL, so services run from any working directory (no .env of the checkout). */
export const TSX = import.meta.resolve('tsx');
export const MAIN_SERVER = fileURLToPath(new URL('../src/main/server.ts', import.meta.url));

export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

export function listening(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

export interface ServiceProcess {
  child: ChildProcess;
  base: string;
  output(): string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** Runs a TypeScript entry point from source with exactly `env`, collecting what it prints. */
function spawnEntry(entry: string, env: Record<string, string>) {
  const child = spawn(process.execPath, ['--import', TSX, entry], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  return { child, output: () => output, exited };
}

/**
 * Runs the main service from source with exactly `env` (plus PATH), waiting until /health answers;
 * `entry` is a test entry point that wraps the service (see test/main/*-entry.ts).
 */
export async function startMainProcess(env: Record<string, string>, options: { upWithinMs?: number; entry?: string } = {}): Promise<ServiceProcess> {
  const upWithinMs = options.upWithinMs ?? 120_000;
  const port = await freePort();
  const { child, output: printed, exited } = spawnEntry(options.entry ?? MAIN_SERVER, { PATH: process.env.PATH ?? '', LOG_LEVEL: 'warn', PORT: String(port), ...env });
  const base = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + upWithinMs;
  for (;;) {
    const output = printed();
    if (child.exitCode !== null) throw new Error(`service exited early:\n${output}`);
    try {
      if ((await fetch(`${base}/health`)).status === 200) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`service not healthy within ${upWithinMs} ms:\n${output}`);
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  return { child, base, output: printed, exited };
}

export const WORKER_SERVER = fileURLToPath(new URL('../src/worker/server.ts', import.meta.url));

export interface WorkerProcess {
  child: ChildProcess;
  output(): string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/**
 * Runs a worker process from source with `env` (plus PATH). With `waitReady`, resolves once it says
 * it is ready (its queue started); otherwise at once, e.g. for a worker started before its database.
 */
export async function startWorkerProcess(env: Record<string, string>, options: { waitReady?: boolean; readyWithinMs?: number } = {}): Promise<WorkerProcess> {
  const worker = spawnEntry(WORKER_SERVER, { PATH: process.env.PATH ?? '', LOG_LEVEL: 'info', ...env });
  const { child, output } = worker;
  if (options.waitReady === false) return worker;
  const deadline = Date.now() + (options.readyWithinMs ?? 60_000);
  while (!output().includes('"worker ready"')) {
    if (child.exitCode !== null) throw new Error(`worker exited early:\n${output()}`);
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`worker not ready in time:\n${output()}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return worker;
}
