// `npm run db:init`: the one-off initialisation. Creates or migrates the products table and the log store.
import { loadConfig, loadDotEnv } from '../config.js';
import { openStores } from '../main/stores.js';

loadDotEnv();
const config = loadConfig();
const where = config.databaseUrl === undefined ? `embedded PostgreSQL (PGlite) in ${config.dataDir}` : 'PostgreSQL at DATABASE_URL';

try {
  const stores = await openStores(config);
  const { applied, current } = stores.migrations;
  console.log(`Relational store: ${where}`);
  console.log(
    applied.length === 0
      ? `  schema already up to date (version ${current})`
      : applied.map((m) => `  applied migration ${m.version}: ${m.name}`).join('\n') + `\n  schema now at version ${current}`,
  );
  console.log(`Log store: ${stores.logs.backend}\n  ${stores.logInit}`);
  await stores.close();
} catch (error) {
  console.error(`db:init failed (${where}): ${(error as Error).message}`);
  process.exitCode = 1;
}
