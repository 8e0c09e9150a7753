// Makes the embedded database's template: `--into <dir>` is the child process that runs initdb, the migrations and the queue's schema install; without arguments (`npm run build`) it fills the template cache.
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { loadConfig, loadDotEnv } from '../config/config.js';
import { createPgliteDatabase } from '../db/database.js';
import { migrate } from '../db/migrate.js';
import { defaultTemplateCache, ensureTemplate } from '../db/pglite-template.js';
import { createPgBossQueue } from '../queue/pgboss-queue.js';

/** This script: the template maker the database layer runs in a child process (see context.ts). */
const TEMPLATE_MAKER = fileURLToPath(import.meta.url);

const { values } = parseArgs({ options: { into: { type: 'string' }, 'queue-schema': { type: 'string' } } });

if (process.argv[1] === TEMPLATE_MAKER && values.into !== undefined) {
  // PGlite's own initdb, here: this process exits afterwards, and its memory with it.
  const db = await createPgliteDatabase(values.into, { template: false });
  try {
    await migrate(db);
    const schema = values['queue-schema'];
    if (schema !== undefined) {
      // pg-boss creates its schema as it starts.
      const queue = createPgBossQueue({ db, schema });
      await queue.start();
      await queue.stop(1000);
    }
  } finally {
    await db.close();
  }
} else if (process.argv[1] === TEMPLATE_MAKER) {
  try {
    loadDotEnv();
    // The queue schema the services will use, so their first start finds it in the template.
    const queueSchema = loadConfig().jobs.queueSchema;
    console.log(`Embedded database template: ${await ensureTemplate({ cacheDir: defaultTemplateCache(), queueSchema, maker: TEMPLATE_MAKER })}`);
  } catch (error) {
    // Not fatal: without a template a first start makes its database in a child process instead.
    console.warn(`Embedded database template not made (${(error as Error).message}); a first start on an empty DATA_DIR will make it.`);
  }
}
