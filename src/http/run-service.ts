// Runs one service in the foreground: start, listen, and close gracefully on SIGINT/SIGTERM.
import pino, { type Logger } from 'pino';
import type { App } from './base-app.js';

export interface ServiceSpec {
  name: string;
  host: string;
  port: number;
  logLevel: string;
  /** Opens what the service needs and builds its app; `close` releases those resources. */
  start(log: Logger): Promise<{ app: App; close: () => Promise<void> }>;
}

const SHUTDOWN_GRACE_MS = 10_000;

export async function runService(spec: ServiceSpec): Promise<void> {
  const log = pino({ name: spec.name, level: spec.logLevel });
  let started: Awaited<ReturnType<ServiceSpec['start']>>;
  try {
    started = await spec.start(log);
    await started.app.listen({ host: spec.host, port: spec.port });
  } catch (error) {
    log.fatal({ err: error }, `${spec.name} service failed to start: ${(error as Error).message}`);
    process.exit(1);
  }
  const { app, close } = started;

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
    try {
      await app.close(); // stops accepting, waits for in-flight requests
      await close();
      log.info(`${spec.name} service stopped`);
      process.exit(0);
    } catch (error) {
      log.error({ err: error }, `${spec.name} service failed to stop cleanly`);
      process.exit(1);
    }
  };
  process.once('SIGINT', () => void stop('SIGINT'));
  process.once('SIGTERM', () => void stop('SIGTERM'));
}
