// Makes the embedded database's template: `--into <dir>` is the child process that runs initdb, the migrations and the queue's schema install; without arguments (`npm run build`) it fills the template cache.
import { parseArgs } from 'node:util';
import { loadConfig, loadDotEnv } from '../config.js';
import { createPgBossQueue } from '../jobs/pgboss-queue.js';
import { createPgliteDatabase } from './database.js';
import { migrate } from './migrate.js';
import { defaultTemplateCache, ensureTemplate } from './pglite-template.js';

const { values } = parseArgs({ options: { into: { type: 'string' }, 'queue-schema': { type: 'string' } } });

if (values.into !== undefined) {
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
} else {
  try {
    loadDotEnv();
    // The queue schema the services will use, so their first start finds it in the template.
    const queueSchema = loadConfig().jobs.queueSchema;
    console.log(`Embedded database template: ${await ensureTemplate({ cacheDir: defaultTemplateCache(), queueSchema })}`);
  } catch (error) {
    // Not fatal: without a template a first start makes its database in a child process instead.
    console.warn(`Embedded database template not made (${(error as Error).message}); a first start on an empty DATA_DIR will make it.`);
  }
}
