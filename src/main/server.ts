// Entry point of the main service: build the context, listen at once, get the database and queue ready in the background.
import { loadConfig, loadDotEnv } from '../config/config.js';
import { createContext } from '../context.js';
import { runService } from '../http/run-service.js';
import { buildMainApp } from './app.js';
import { prepareInBackground } from '../http/readiness.js';

loadDotEnv();
const config = loadConfig();

await runService({
  name: 'main',
  host: config.http.host,
  port: config.http.port,
  logLevel: config.logLevel,
  async start(log) {
    const context = await createContext(config, { logger: log });
    // A database that is down at start is waited for, not fatal: /health says so until it answers.
    const preparation = prepareInBackground(
      [
        {
          name: 'the database schema',
          run: async () => {
            const { migrations, interrupted } = await context.prepare();
            if (migrations.applied.length > 0) log.info({ applied: migrations.applied }, 'applied database migrations');
            if (interrupted > 0) log.warn({ interrupted }, 'scrape runs left running by a stopped process were marked failed (interrupted)');
          },
        },
        { name: 'the job queue', run: () => context.start(config.jobs.runWorkers) },
      ],
      log,
    );
    const app = await buildMainApp({ ...context, readiness: preparation });
    return {
      app,
      drain: async (graceMs) => {
        preparation.stop();
        await context.drain(graceMs);
      },
      close: () => context.close(),
    };
  },
});
