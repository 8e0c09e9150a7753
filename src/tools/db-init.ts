// `npm run db:init`: the one-off initialisation. Creates or migrates the products table, the log store and the job queue's schema.
import { loadConfig, loadDotEnv } from '../config/config.js';
import { createContext } from '../context.js';

loadDotEnv();
const config = loadConfig();
const where = config.database.url === undefined ? `embedded PostgreSQL (PGlite) in ${config.database.dataDir}` : 'PostgreSQL at DATABASE_URL';

try {
  const context = await createContext(config);
  try {
    const { migrations, logInit } = await context.prepare();
    const { applied, current } = migrations;
    console.log(`Relational store: ${where}`);
    console.log(
      applied.length === 0
        ? `  schema already up to date (version ${current})`
        : `${applied.map((m) => `  applied migration ${m.version}: ${m.name}`).join('\n')}\n  schema now at version ${current}`,
    );
    console.log(`Log store: ${context.logs.backend}\n  ${logInit}`);
    // The queue creates or migrates its own schema when it starts.
    await context.start(false);
    await context.drain(1000);
    console.log(`Job queue: pg-boss\n  schema "${config.jobs.queueSchema}" ready`);
  } finally {
    await context.close();
  }
} catch (error) {
  console.error(`db:init failed (${where}): ${(error as Error).message}`);
  process.exitCode = 1;
}
