// Entry point of the main service: open the stores, listen at once, get the database and queue ready in the background.
import { loadConfig, loadDotEnv } from '../config.js';
import { runService } from '../http/run-service.js';
import { createJobSystem } from '../jobs/job-system.js';
import { buildMainApp } from './app.js';
import { createExternalPosts, createScraping } from './compose.js';
import { prepareInBackground } from './readiness.js';
import { openStores, prepareStores } from './stores.js';

loadDotEnv();
const config = loadConfig();

await runService({
  name: 'main',
  host: config.host,
  port: config.port,
  logLevel: config.logLevel,
  async start(log) {
    const stores = await openStores(config, { onPoolError: (err) => log.warn({ err }, 'database connection lost'), logger: log });
    const scraping = createScraping(config, stores, log);
    const posts = createExternalPosts(config);
    const jobSystem = createJobSystem({ db: stores.db, queue: stores.queue, tracking: stores.tracking, config, products: stores.products, logs: stores.logs, ...scraping, logger: log });
    // A database that is down at start is waited for, not fatal: /health says so until it answers.
    const preparation = prepareInBackground(
      [
        {
          name: 'the database schema',
          run: async () => {
            const { migrations, interrupted } = await prepareStores(stores, { runDeadlineMs: config.scrape.runDeadlineMs });
            if (migrations.applied.length > 0) log.info({ applied: migrations.applied }, 'applied database migrations');
            if (interrupted > 0) log.warn({ interrupted }, 'scrape runs left running by a stopped process were marked failed (interrupted)');
          },
        },
        { name: 'the job queue', run: () => jobSystem.start(config.jobs.runWorkers) },
      ],
      log,
    );
    const app = await buildMainApp({ config, ...stores, ...scraping, posts, jobSystem, readiness: preparation });
    return {
      app,
      drain: async (graceMs) => {
        preparation.stop();
        await Promise.all([scraping.scraper.drain(graceMs), jobSystem.stop(graceMs)]);
      },
      async close() {
        await Promise.allSettled([scraping.close(), posts.close()]);
        await stores.close();
      },
    };
  },
});
