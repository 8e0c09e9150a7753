// Entry point of the main service: open the stores, build the app, listen, shut down on signals.
import { loadConfig, loadDotEnv } from '../config.js';
import { runService } from '../http/run-service.js';
import { buildMainApp } from './app.js';
import { createExternalPosts, createScraping } from './compose.js';
import { openStores } from './stores.js';

loadDotEnv();
const config = loadConfig();

await runService({
  name: 'main',
  host: config.host,
  port: config.port,
  logLevel: config.logLevel,
  async start(log) {
    const stores = await openStores(config, { onPoolError: (err) => log.warn({ err }, 'database connection lost') });
    if (stores.migrations.applied.length > 0) {
      log.info({ applied: stores.migrations.applied }, 'applied database migrations');
    }
    const scraping = createScraping(config, stores, log);
    const posts = createExternalPosts(config);
    const app = await buildMainApp({ config, ...stores, ...scraping, posts });
    return {
      app,
      drain: (graceMs) => scraping.scraper.drain(graceMs),
      async close() {
        await Promise.allSettled([scraping.close(), posts.close()]);
        await stores.close();
      },
    };
  },
});
