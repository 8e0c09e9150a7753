// Entry point of a worker process: runs queued jobs, crawl pages, schedules and webhook deliveries, and nothing else; any number may run.
import { loadConfig, loadDotEnv } from '../config/config.js';
import { createContext } from '../context.js';
import { runService } from '../http/run-service.js';
import { prepareInBackground } from '../http/readiness.js';

loadDotEnv();
const config = loadConfig();

await runService({
  name: 'worker',
  logLevel: config.logLevel,
  async start(log) {
    const context = await createContext(config, { logger: log });
    const preparation = prepareInBackground(
      [
        { name: 'the database schema', run: () => context.prepare() },
        { name: 'the job queue', run: () => context.start(true) },
      ],
      log,
    );
    void preparation.done.then(() => {
      if (preparation.ready()) log.info({ pid: process.pid, concurrency: config.jobs.workerConcurrency }, 'worker ready');
    });
    return {
      drain: async (graceMs) => {
        preparation.stop();
        await context.drain(graceMs);
      },
      close: () => context.close(),
    };
  },
});
