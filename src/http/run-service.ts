// Runs one service process in the foreground: start, listen (if it serves HTTP), and close gracefully on SIGINT/SIGTERM.
import pino, { type Logger } from 'pino';
import type { App } from './base-app.js';
import { exitOnUncaughtError, stdoutLogDestination } from './logging.js';

export interface ServiceSpec {
  name: string;
  /** Where it listens; a process that serves no HTTP (a worker) has neither. */
  host?: string;
  port?: number;
  logLevel: string;
  /**
   * Opens what the service needs and builds its app (if it serves HTTP); `close` releases those
   * resources; `drain`, if given, is told at shutdown how long in-flight work may still take before
   * it is stopped.
   */
  start(log: Logger): Promise<{ app?: App; close: () => Promise<void>; drain?: (graceMs: number) => Promise<void> }>;
}

const SHUTDOWN_GRACE_MS = 10_000;
/** Long-running work (a scrape) is stopped this long before the hard exit, to leave time to answer. */
const DRAIN_MS = 7_000;

export async function runService(spec: ServiceSpec): Promise<void> {
  // The same batched stdout as the app's request lines, so the service's lines stay in order with them.
  const log = pino({ name: spec.name, level: spec.logLevel }, stdoutLogDestination());
  // A crash still writes the lines held so far, then the error, and exits 1.
  exitOnUncaughtError(log);
  let started: Awaited<ReturnType<ServiceSpec['start']>>;
  try {
    started = await spec.start(log);
    await started.app?.listen({ host: spec.host ?? '127.0.0.1', port: spec.port ?? 0 });
  } catch (error) {
    log.fatal({ err: error }, `${spec.name} service failed to start: ${(error as Error).message}`);
    process.exit(1);
  }
  const { app, close, drain } = started;
  // A process that serves nothing must not end while it waits for work (or for its database).
  const keepAlive = app === undefined ? setInterval(() => undefined, 60_000) : undefined;

  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    log.info({ signal }, `${spec.name} service stopping`);
    // A hung close must not keep the process alive forever.
    const force = setTimeout(() => {
      log.error(`${spec.name} service did not stop within ${SHUTDOWN_GRACE_MS} ms; exiting`);
      process.exit(1);
    }, SHUTDOWN_GRACE_MS);
    force.unref();
    clearInterval(keepAlive);
    try {
      const drained = drain?.(DRAIN_MS);
      if (app !== undefined) {
        // A keep-alive connection whose request finishes after close() began would otherwise stay
        // open until its idle timeout, holding close() with it.
        const sweep = setInterval(() => app.server.closeIdleConnections(), 200);
        await app.close(); // stops accepting, waits for in-flight requests
        clearInterval(sweep);
      }
      await drained;
      await close();
      log.info(`${spec.name} service stopped`);
      process.exit(0);
    } catch (error) {
      log.error({ err: error }, `${spec.name} service failed to stop cleanly`);
      process.exit(1);
    }
  };
  // `on`, not `once`: a second signal (Ctrl-C in a terminal reaches every process of the group)
  // must be ignored while stopping, not kill the process half-way through closing.
  process.on('SIGINT', () => void stop('SIGINT'));
  process.on('SIGTERM', () => void stop('SIGTERM'));
}
