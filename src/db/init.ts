// `npm run db:init`: the one-off initialisation. Creates or migrates the products table, the log store and the job queue's schema.
import { loadConfig, loadDotEnv } from '../config.js';
import { openStores, prepareStores } from '../main/stores.js';

loadDotEnv();
const config = loadConfig();
const where = config.databaseUrl === undefined ? `embedded PostgreSQL (PGlite) in ${config.dataDir}` : 'PostgreSQL at DATABASE_URL';

try {
  const stores = await openStores(config);
  try {
    const { migrations, logInit } = await prepareStores(stores);
    const { applied, current } = migrations;
    console.log(`Relational store: ${where}`);
    console.log(
      applied.length === 0
        ? `  schema already up to date (version ${current})`
        : applied.map((m) => `  applied migration ${m.version}: ${m.name}`).join('\n') + `\n  schema now at version ${current}`,
    );
    console.log(`Log store: ${stores.logs.backend}\n  ${logInit}`);
    // The queue creates or migrates its own schema when it starts.
    const queue = stores.queue;
    await queue.start();
    await queue.stop(1000);
    console.log(`Job queue: pg-boss\n  schema "${config.jobs.queueSchema}" ready`);
  } finally {
    await stores.close();
  }
} catch (error) {
  console.error(`db:init failed (${where}): ${(error as Error).message}`);
  process.exitCode = 1;
}
