// The request log of the main service as a process: one line per request at info, and the last line still written when the process is stopped or crashes.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { test, type TestContext } from 'node:test';
import { freePort, MAIN_SERVER, TSX } from '../process-helpers.js';

const CRASH_ENTRY = fileURLToPath(new URL('./crash-entry.ts', import.meta.url));

interface Started {
  base: string;
  /** What the process wrote to stdout (the log), and to stderr, each apart. */
  stdout(): string;
  stderr(): string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  kill(signal: NodeJS.Signals): void;
}

/** Runs `entry` from source at LOG_LEVEL=info on a fresh PGlite directory, until /health answers. */
async function start(t: TestContext, entry: string, env: Record<string, string> = {}): Promise<Started> {
  const dir = mkdtempSync(join(tmpdir(), 'request-log-'));
  const port = await freePort();
  const child = spawn(process.execPath, ['--import', TSX, entry], {
    env: { PATH: process.env.PATH ?? '', LOG_LEVEL: 'info', PORT: String(port), DATA_DIR: dir, WORKERS: '0', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  t.after(async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGKILL');
      await exited;
    }
    rmSync(dir, { recursive: true, force: true });
  });
  const base = `http://127.0.0.1:${port}`;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`service exited early:\n${stdout}\n${stderr}`);
    try {
      if ((await fetch(`${base}/health`)).status === 200) break;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  return { base, stdout: () => stdout, stderr: () => stderr, exited, kill: (signal) => child.kill(signal) };
}

/** The JSON lines of a log that parse (a line per entry). */
function entries(log: string): Array<Record<string, unknown>> {
  return log.split('\n').flatMap((line) => {
    try {
      return [JSON.parse(line) as Record<string, unknown>];
    } catch {
      return [];
    }
  });
}

test('at info each request is one line: request id, method, url, route, status and duration', async (t) => {
  const service = await start(t, MAIN_SERVER);
  const res = await fetch(`${service.base}/products?limit=5&q=lamp`, { headers: { 'x-request-id': 'one-line-please' } });
  assert.equal(res.status, 200);
  await res.arrayBuffer();
  service.kill('SIGTERM');
  assert.equal((await service.exited).code, 0, service.stderr());
  const lines = entries(service.stdout()).filter((e) => e.request_id === 'one-line-please');
  assert.equal(lines.length, 1, `one line for the request:\n${service.stdout()}`);
  const [line] = lines;
  assert.equal(line!.msg, 'request');
  assert.equal(line!.level, 30);
  assert.equal(line!.method, 'GET');
  assert.equal(line!.url, '/products?limit=5&q=lamp');
  assert.equal(line!.route, '/products');
  assert.equal(line!.status, 200);
  assert.equal(typeof line!.ms, 'number');
  assert.equal(line!.req, undefined, 'no request object beside the fields');
  assert.equal(line!.res, undefined, 'no reply object beside the fields');
});

test('a client error is one line too: its status on the request line, its reason to the client', async (t) => {
  const service = await start(t, MAIN_SERVER);
  const res = await fetch(`${service.base}/products/not-a-number`, { headers: { 'x-request-id': 'bad-id' } });
  assert.equal(res.status, 422);
  await res.arrayBuffer();
  service.kill('SIGTERM');
  assert.equal((await service.exited).code, 0, service.stderr());
  const lines = entries(service.stdout()).filter((e) => e.request_id === 'bad-id');
  assert.deepEqual(
    lines.map((e) => [e.msg, e.status]),
    [['request', 422]],
    service.stdout(),
  );
});

test("SIGTERM: the last request's line is in stdout when the process has exited", async (t) => {
  const service = await start(t, MAIN_SERVER);
  const res = await fetch(`${service.base}/products/1`, { headers: { 'x-request-id': 'last-before-sigterm' } });
  await res.arrayBuffer();
  service.kill('SIGTERM');
  const { code } = await service.exited;
  assert.equal(code, 0, service.stderr());
  const log = entries(service.stdout());
  const line = log.find((e) => e.request_id === 'last-before-sigterm' && e.msg === 'request');
  assert.ok(line, `the request's line reached stdout:\n${service.stdout()}`);
  assert.equal(line.status, res.status);
  assert.ok(
    log.some((e) => e.msg === 'main service stopped'),
    'the shutdown itself was logged to the end',
  );
});

test("an uncaught exception: the request's line and the fatal error both reach stdout, exit code 1", async (t) => {
  // The crash happens right after the line is logged, while the line is still held for writing
  // (see crash-entry.ts).
  const service = await start(t, CRASH_ENTRY, { CRASH_AFTER_REQUEST_ID: 'last-before-crash' });
  const answered = await fetch(`${service.base}/products/1`, { headers: { 'x-request-id': 'last-before-crash' } }).then(
    async (res) => {
      await res.arrayBuffer();
      return res.status;
    },
    () => 'no answer',
  );
  const { code } = await service.exited;
  assert.equal(code, 1, `exit code 1:\n${service.stdout()}\n${service.stderr()}`);
  const log = entries(service.stdout());
  const requestAt = log.findIndex((e) => e.request_id === 'last-before-crash' && e.msg === 'request');
  const fatalAt = log.findIndex((e) => e.level === 60);
  assert.ok(requestAt >= 0, `the request's line reached stdout (answered: ${answered}):\n${service.stdout()}`);
  assert.ok(fatalAt > requestAt, `a fatal line follows it:\n${service.stdout()}`);
  const fatal = log[fatalAt]!;
  assert.match(String(fatal.msg), /^uncaught exception: boom: the crash the test asked for/);
  const err = fatal.err as { type?: string; message?: string; stack?: string };
  assert.equal(err.type, 'Error');
  assert.equal(err.message, 'boom: the crash the test asked for');
  assert.match(err.stack ?? '', /crash-entry/);
});
