// Entry point of a worker process: runs queued jobs (scrapes, crawl pages, schedules) and nothing else; any number may run.
import pino from 'pino';
import { loadConfig, loadDotEnv } from '../config.js';
import { exitOnUncaughtError, stdoutLogDestination } from '../http/logging.js';
import { createJobSystem } from '../jobs/job-system.js';
import { createScraping } from '../main/compose.js';
import { prepareInBackground } from '../main/readiness.js';
import { openStores, prepareStores } from '../main/stores.js';

/** A job running at SIGTERM gets this long to finish; then it goes back to the queue for another worker. */
const GRACE_MS = 8_000;
/** A hung shutdown must not keep the process alive forever. */
const HARD_EXIT_MS = 15_000;

loadDotEnv();
const config = loadConfig();
const log = pino({ name: 'worker', level: config.logLevel }, stdoutLogDestination());
// A crash writes the error as one fatal line and exits 1 (a job it held goes back to the queue).
exitOnUncaughtError(log);

try {
  const stores = await openStores(config, { onPoolError: (err) => log.warn({ err }, 'database connection lost'), logger: log });
  const scraping = createScraping(config, stores, log);
  const jobSystem = createJobSystem({ db: stores.db, queue: stores.queue, tracking: stores.tracking, config, products: stores.products, logs: stores.logs, ...scraping, logger: log });
  const preparation = prepareInBackground(
    [
      { name: 'the database schema', run: () => prepareStores(stores, { runDeadlineMs: config.scrape.runDeadlineMs }) },
      { name: 'the job queue', run: () => jobSystem.start(true) },
    ],
    log,
  );
  void preparation.done.then(() => {
    if (preparation.ready()) log.info({ pid: process.pid, concurrency: config.jobs.workerConcurrency }, 'worker ready');
  });

  // A worker serves nothing; this keeps it running while it waits for work (or for its database).
  const keepAlive = setInterval(() => undefined, 60_000);
  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    clearInterval(keepAlive);
    log.info({ signal }, 'worker stopping');
    setTimeout(() => {
      log.error(`worker did not stop within ${HARD_EXIT_MS} ms; exiting`);
      process.exit(1);
    }, HARD_EXIT_MS).unref();
    try {
      preparation.stop();
      await Promise.all([jobSystem.stop(GRACE_MS), scraping.scraper.drain(GRACE_MS)]);
      await scraping.close();
      await stores.close();
      log.info('worker stopped');
      process.exit(0);
    } catch (error) {
      log.error({ err: error }, 'worker failed to stop cleanly');
      process.exit(1);
    }
  };
  process.on('SIGINT', () => void stop('SIGINT'));
  process.on('SIGTERM', () => void stop('SIGTERM'));
} catch (error) {
  log.fatal({ err: error }, `worker failed to start: ${(error as Error).message}`);
  process.exit(1);
}
