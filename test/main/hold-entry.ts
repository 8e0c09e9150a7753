// Test entry point: the real main service on PGlite, whose first transaction that writes products is held
// open (HOLD_PRODUCT_WRITE=inside) or held right after its COMMIT (=committed), saying so on stdout, so a
// test can kill the process at that very moment.
import { PGlite, type Transaction } from '@electric-sql/pglite';

const hold = process.env.HOLD_PRODUCT_WRITE;
const forever = () => new Promise<never>(() => undefined);

if (hold === 'inside' || hold === 'committed') {
  const transaction = PGlite.prototype.transaction;
  let heldOnce = false;
  PGlite.prototype.transaction = async function <T>(this: PGlite, callback: (tx: Transaction) => Promise<T>): Promise<T> {
    let wroteProducts = false;
    const result = await transaction.call(this, async (tx: Transaction) => {
      const watched: Transaction = Object.create(tx);
      watched.query = (async (sql: string, params?: unknown[], options?: object) => {
        const rows = await tx.query(sql, params, options);
        if (/^\s*INSERT INTO products\b/.test(sql) && !heldOnce) {
          wroteProducts = true;
          if (hold === 'inside') {
            heldOnce = true;
            process.stdout.write(`HELD inside the transaction after writing ${rows.rows.length} products\n`);
            await forever();
          }
        }
        return rows;
      }) as Transaction['query'];
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
