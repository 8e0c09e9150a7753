// Test entry point: the real main service on PGlite, whose first transaction that writes products is held
// open (HOLD_PRODUCT_WRITE=inside) or held right after its COMMIT (=committed), saying so on stdout, so a
// test can kill the process at that very moment.
import { type EngineSession, PgliteThread } from '../../src/db/pglite-thread.js';

const hold = process.env.HOLD_PRODUCT_WRITE;
const forever = () => new Promise<never>(() => undefined);

if (hold === 'inside' || hold === 'committed') {
  const transaction = PgliteThread.prototype.transaction;
  let heldOnce = false;
  PgliteThread.prototype.transaction = async function <T>(this: PgliteThread, callback: (tx: EngineSession) => Promise<T>): Promise<T> {
    let wroteProducts = false;
    const result = await transaction.call(this, async (tx: EngineSession) => {
      const watched: EngineSession = Object.create(tx);
      watched.query = (async (sql: string, params?: readonly unknown[]) => {
        const rows = await tx.query(sql, params);
        // The run's upsert, on its own or as the first CTE of a statement (with the run's tags after it).
        if (/^\s*(?:WITH \w+ AS \(\s*)?INSERT INTO products\b/.test(sql) && !heldOnce) {
          wroteProducts = true;
          if (hold === 'inside') {
            heldOnce = true;
            process.stdout.write(`HELD inside the transaction after writing ${rows.rows.length} products\n`);
            await forever();
          }
        }
        return rows;
      }) as EngineSession['query'];
      return callback(watched);
    });
    if (wroteProducts && hold === 'committed') {
      heldOnce = true;
      process.stdout.write('HELD after the commit of the products\n');
      await forever();
    }
    return result as T;
  } as typeof transaction;
}

await import('../../src/main/server.js');
