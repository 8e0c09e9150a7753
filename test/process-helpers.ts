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

/** Runs the main service from source with exactly `env` (plus PATH), waiting until /health answers. */
export async function startMainProcess(env: Record<string, string>, upWithinMs = 120_000): Promise<ServiceProcess> {
  const port = await freePort();
  const child = spawn(process.execPath, ['--import', TSX, MAIN_SERVER], {
    env: { PATH: process.env.PATH ?? '', LOG_LEVEL: 'warn', PORT: String(port), ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );
  const base = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + upWithinMs;
  for (;;) {
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
  return { child, base, output: () => output, exited };
}
