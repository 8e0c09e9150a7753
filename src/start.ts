// `npm start`: runs the main and auxiliary services as two child processes and stops them together.
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import pino from 'pino';
import { loadConfig, loadDotEnv } from './config/config.js';

/** After asking the children to stop, how long to wait before killing them (they force-exit after 10 s). */
const STOP_GRACE_MS = 12_000;
/**
 * Ctrl-C reaches the children too (same process group) and one may exit before our own handler runs;
 * an exit is only called unexpected if no stop signal follows within this window.
 */
const SIGNAL_RACE_MS = 250;

interface Service {
  name: string;
  /** Entry module, relative to this file. */
  entry: string;
}

const SERVICES: Service[] = [
  { name: 'main', entry: './main/server' },
  { name: 'auxiliary', entry: './auxiliary/server' },
];

interface Running {
  name: string;
  child: ChildProcess;
  exited: boolean;
}

function run(): void {
  loadDotEnv();
  let logLevel: string;
  try {
    logLevel = loadConfig().logLevel;
  } catch (error) {
    // Both children would fail the same way; say it once and do not start anything.
    console.error(`configuration error: ${(error as Error).message}`);
    process.exit(1);
  }
  const log = pino({ name: 'start', level: logLevel });

  // From dist/ the entries are .js; under tsx from src/ they are .ts and need the same loader,
  // which process.execArgv carries (`--import tsx`).
  const extension = import.meta.url.endsWith('.ts') ? '.ts' : '.js';
  // A debugger attached to this process must not make both children fight over its port.
  const execArgv = process.execArgv.filter((arg) => !arg.startsWith('--inspect'));
  const running: Running[] = SERVICES.map(({ name, entry }) => {
    const path = fileURLToPath(new URL(entry + extension, import.meta.url));
    const child = spawn(process.execPath, [...execArgv, path], { stdio: 'inherit', env: process.env });
    return { name, child, exited: false };
  });
  log.info({ pids: Object.fromEntries(running.map((r) => [r.name, r.child.pid])) }, 'services starting');

  let stopRequested = false;
  let failed = false;
  let killTimer: NodeJS.Timeout | undefined;

  const stopAll = (signal: NodeJS.Signals) => {
    for (const r of running) if (!r.exited) r.child.kill(signal);
    killTimer ??= setTimeout(() => {
      for (const r of running) {
        if (!r.exited) {
          log.error(`${r.name} service did not stop within ${STOP_GRACE_MS} ms; killing it`);
          failed = true;
          r.child.kill('SIGKILL');
        }
      }
    }, STOP_GRACE_MS);
  };

  const onSignal = (signal: NodeJS.Signals) => {
    if (stopRequested) {
      // A second Ctrl-C means "now".
      log.warn({ signal }, 'stopping the services immediately');
      for (const r of running) if (!r.exited) r.child.kill('SIGKILL');
      return;
    }
    stopRequested = true;
    log.info({ signal }, 'stopping both services');
    // The children may have had this very signal already (Ctrl-C signals the whole process group);
    // a service ignores repeats while it stops, so forwarding it is harmless.
    stopAll(signal);
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);

  const onExit = (r: Running, code: number | null, signal: NodeJS.Signals | null) => {
    if (r.exited) return;
    r.exited = true;
    const byStopSignal = signal === 'SIGTERM' || signal === 'SIGINT';
    const clean = code === 0 || byStopSignal;
    if (!clean) failed = true;
    if (stopRequested) {
      log[clean ? 'info' : 'error']({ code, signal }, `${r.name} service exited`);
    } else {
      setTimeout(() => {
        if (stopRequested) return;
        // Never leave one service running without the other.
        log.error({ code, signal }, `${r.name} service exited on its own; stopping the other one`);
        failed = true;
        stopRequested = true;
        stopAll('SIGTERM');
      }, SIGNAL_RACE_MS);
    }
    if (running.every((other) => other.exited)) {
      clearTimeout(killTimer);
      // Wait out the race window so an unexpected exit is still judged before we decide the code.
      setTimeout(
        () => {
          if (!stopRequested) failed = true;
          if (failed) log.error('services stopped with errors');
          else log.info('services stopped');
          process.exit(failed ? 1 : 0);
        },
        stopRequested ? 0 : SIGNAL_RACE_MS + 10,
      );
    }
  };

  for (const r of running) {
    r.child.once('exit', (code, signal) => onExit(r, code, signal));
    // Spawning itself failed (no 'exit' follows).
    r.child.once('error', (error) => {
      log.error({ err: error }, `${r.name} service could not be started`);
      onExit(r, 1, null);
    });
  }
}

run();
