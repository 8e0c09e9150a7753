// Child processes of the bench (services, ceiling servers): start, wait until they answer, stop, and never leave one behind.
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { request } from 'undici';

export interface Child {
  name: string;
  pid: number;
  proc: ChildProcess;
  /** The last few KB of what the process wrote, for error messages. */
  output(): string;
  stop(): Promise<void>;
}

const live = new Set<Child>();
const OUTPUT_KEEP = 8_192;
const STOP_GRACE_MS = 12_000;

/** A port that was free a moment ago (the small race is acceptable on a bench machine). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

/**
 * Spawns `node args…` (or `command args…`) as the leader of its own process group, so stopping it
 * also ends whatever it started (the headless browser) even if it has to be killed.
 */
export function startChild(name: string, args: string[], env: Record<string, string>, cwd: string, command = process.execPath): Child {
  const proc = spawn(command, args, {
    cwd,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  if (proc.pid === undefined) throw new Error(`${name}: could not start`);
  let out = '';
  const keep = (chunk: Buffer) => {
    out = (out + chunk.toString('utf8')).slice(-OUTPUT_KEEP);
  };
  proc.stdout?.on('data', keep);
  proc.stderr?.on('data', keep);
  const exited = new Promise<void>((resolve) => proc.once('exit', () => resolve()));
  const pid = proc.pid;
  const child: Child = {
    name,
    pid,
    proc,
    output: () => out,
    async stop() {
      live.delete(child);
      if (proc.exitCode !== null || proc.signalCode !== null) return;
      signalGroup(pid, 'SIGTERM');
      const timer = setTimeout(() => signalGroup(pid, 'SIGKILL'), STOP_GRACE_MS);
      await exited;
      clearTimeout(timer);
      // The leader is gone; anything it left in its group (a browser it could not close) goes too.
      signalGroup(pid, 'SIGKILL');
    },
  };
  live.add(child);
  return child;
}

function signalGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch {
    // already gone
  }
}

/** Kills every child still running, synchronously (process exit, signals). */
export function killAllChildrenNow(): void {
  for (const child of live) signalGroup(child.pid, 'SIGKILL');
  live.clear();
}

export async function stopAllChildren(): Promise<void> {
  await Promise.allSettled([...live].map((child) => child.stop()));
}

/** Polls `url` until it answers 2xx; fails early if the child exits. */
export async function waitUntilReady(child: Child, url: string, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child.proc.exitCode !== null || child.proc.signalCode !== null) {
      throw new Error(`${child.name} exited (${child.proc.exitCode ?? child.proc.signalCode}) before answering:\n${child.output()}`);
    }
    try {
      const res = await request(url, { headersTimeout: 2_000, bodyTimeout: 2_000 });
      await res.body.dump();
      if (res.statusCode >= 200 && res.statusCode < 300) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${child.name} did not answer ${url} within ${timeoutMs} ms:\n${child.output()}`);
}

/** Waits for the first line of stdout that parses as JSON (the ceiling server announces its port so). */
export function firstJsonLine<T>(child: Child, timeoutMs = 60_000): Promise<T> {
  return new Promise((resolve, reject) => {
    let buffer = '';
    const timer = setTimeout(() => reject(new Error(`${child.name} did not start:\n${child.output()}`)), timeoutMs);
    const onData = (chunk: Buffer) => {
      buffer += chunk.toString('utf8');
      for (const line of buffer.split('\n')) {
        try {
          const value = JSON.parse(line) as T;
          clearTimeout(timer);
          child.proc.stdout?.off('data', onData);
          resolve(value);
          return;
        } catch {
          // not a complete JSON line
        }
      }
    };
    child.proc.stdout?.on('data', onData);
    child.proc.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${child.name} exited (${code}) before starting:\n${child.output()}`));
    });
  });
}
