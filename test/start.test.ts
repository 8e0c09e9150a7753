// `npm start` as a process: both services come up, stop together on a signal, and never stay half-alive.
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test, type TestContext } from 'node:test';
import { fileURLToPath } from 'node:url';
import { TSX, freePort, listening } from './process-helpers.js';

const START = fileURLToPath(new URL('../src/start.ts', import.meta.url));
/** PGlite's first start is slow on a loaded machine. */
const UP_WITHIN_MS = 60_000;
const STOP_WITHIN_MS = 15_000;

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

interface Started {
  child: ChildProcess;
  ports: { main: number; aux: number };
  output: () => string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** The children's pids, from start's own log line (needs LOG_LEVEL=info). */
  pids: () => { main: number; auxiliary: number };
}

async function startServices(t: TestContext, options: { logLevel?: string; auxPort?: number } = {}): Promise<Started> {
  const dir = mkdtempSync(join(tmpdir(), 'start-test-'));
  const main = await freePort();
  const aux = options.auxPort ?? (await freePort());
  const dead = await freePort();
  // Only what the services need: no DATABASE_URL or MONGODB_URL from the developer's shell.
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? '',
    PORT: String(main),
    AUX_PORT: String(aux),
    DATA_DIR: join(dir, 'data'),
    LOG_LEVEL: options.logLevel ?? 'warn',
    MAIN_SERVICE_URL: `http://127.0.0.1:${main}`,
    EXTERNAL_POSTS_URL: `http://127.0.0.1:${dead}/posts`,
    DEMO_SITE_URL: `http://127.0.0.1:${dead}/`,
  };
  // Its own process group, so cleanup can kill start and both services at once, whatever state they are in:
  // an orphaned service would keep the output pipes, and with them this test file, open forever.
  const child = spawn(process.execPath, ['--import', TSX, START], { cwd: dir, env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  t.after(async () => {
    try {
      process.kill(-child.pid!, 'SIGKILL');
    } catch {
      // The whole group is gone already.
    }
    await exited;
    child.stdout!.destroy();
    child.stderr!.destroy();
    rmSync(dir, { recursive: true, force: true });
  });
  return {
    child,
    ports: { main, aux },
    output: () => output,
    exited,
    pids() {
      const line = output.split('\n').find((l) => l.includes('"services starting"'));
      assert.ok(line, `start logs the children's pids:\n${output}`);
      return JSON.parse(line).pids;
    },
  };
}

// biome-ignore lint/suspicious/noExplicitAny: assertions read the health answers' fields without a schema
async function get(port: number, path: string): Promise<{ status: number; body: any } | undefined> {
  try {
    const res = await fetch(`http://127.0.0.1:${port}${path}`, { signal: AbortSignal.timeout(5_000) });
    return { status: res.status, body: await res.json() };
  } catch {
    return undefined;
  }
}

async function waitUntil(started: Started, ready: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + UP_WITHIN_MS;
  while (Date.now() < deadline) {
    if (await ready()) return;
    if (started.child.exitCode !== null) break;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  assert.fail(`the services did not come up within ${UP_WITHIN_MS} ms:\n${started.output()}`);
}

function waitUntilUp(started: Started): Promise<void> {
  return waitUntil(started, async () => {
    const [main, aux] = await Promise.all([get(started.ports.main, '/health'), get(started.ports.aux, '/health')]);
    return main?.status === 200 && aux?.status === 200 && aux.body.main_service.status === 'up';
  });
}

async function exitWithin<T>(exited: Promise<T>, ms: number, output: () => string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`start did not exit within ${ms} ms:\n${output()}`)), ms);
  });
  try {
    return await Promise.race([exited, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

// Only the first case waits for PGlite; side by side, the file takes about one service start.
describe('npm start (src/start.ts)', { concurrency: true, timeout: 120_000 }, () => {
  test('starts both services; SIGTERM stops both and exits 0', async (t) => {
    const started = await startServices(t);
    await waitUntilUp(started);
    const aux = await get(started.ports.aux, '/health');
    assert.deepEqual(
      { status: aux?.body.status, url: aux?.body.main_service.url, main: aux?.body.main_service.status },
      { status: 'ok', url: `http://127.0.0.1:${started.ports.main}`, main: 'up' },
    );
    const proxied = await get(started.ports.aux, '/proxy/products');
    assert.equal(proxied?.status, 200);
    assert.deepEqual(proxied?.body, []);

    started.child.kill('SIGTERM');
    const { code, signal } = await exitWithin(started.exited, STOP_WITHIN_MS, started.output);
    assert.equal(signal, null);
    assert.equal(code, 0, started.output());
    assert.equal(await listening(started.ports.main), false, 'main port closed');
    assert.equal(await listening(started.ports.aux), false, 'aux port closed');
  });

  test('when one service dies, the other is stopped and start exits non-zero', async (t) => {
    const started = await startServices(t, { logLevel: 'info' });
    // The auxiliary service is up long before the main one has opened its database; killing the main
    // one then is the same rule and spares this case a full PGlite start.
    await waitUntil(started, async () => (await get(started.ports.aux, '/health'))?.status === 200);
    const pids = started.pids();
    process.kill(pids.main, 'SIGKILL');
    const { code } = await exitWithin(started.exited, STOP_WITHIN_MS, started.output);
    assert.notEqual(code, 0);
    assert.equal(alive(pids.auxiliary), false, 'the auxiliary service is gone');
    assert.equal(await listening(started.ports.aux), false, 'aux port closed');
    assert.match(started.output(), /main service exited on its own/);
  });

  test('when a service cannot start (port taken), the other does not stay up', async (t) => {
    const blocker: Server = createServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
    t.after(() => new Promise<void>((resolve) => blocker.close(() => resolve())));
    const taken = (blocker.address() as { port: number }).port;
    const started = await startServices(t, { logLevel: 'info', auxPort: taken });
    const { code } = await exitWithin(started.exited, UP_WITHIN_MS, started.output);
    assert.notEqual(code, 0);
    assert.match(started.output(), /auxiliary service failed to start/);
    assert.equal(alive(started.pids().main), false, 'the main service is gone');
    assert.equal(await listening(started.ports.main), false, 'main port closed');
  });
});
