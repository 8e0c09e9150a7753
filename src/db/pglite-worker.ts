// The thread PGlite runs on (see pglite-thread.ts): one engine, driven by the service's messages, one at a time in their order.
import { parentPort, workerData } from 'node:worker_threads';
import { PGlite, type Transaction } from '@electric-sql/pglite';
import { pgliteOptions } from './pglite-options.js';
import { createStatementRunner } from './pglite-statements.js';
import type { EngineData, Reply, Request, WireError } from './pglite-wire.js';

const port = parentPort!;
const data = workerData as EngineData;

/** A transaction the service has open: its statements run in `tx` until it says commit or roll back. */
interface OpenTransaction {
  tx: Transaction;
  /** Commits (or rolls back) and settles with the outcome: a failed COMMIT is the caller's error. */
  end(commit: boolean): Promise<void>;
}

const ROLLED_BACK = Symbol('rolled back');

function wireError(error: unknown): WireError {
  if (!(error instanceof Error)) return { message: String(error) };
  const wire: WireError = { message: error.message, name: error.name };
  // A DatabaseError's fields (code, detail, constraint, ...) are what callers tell errors apart by.
  for (const [key, value] of Object.entries(error)) {
    if (typeof value === 'string' || typeof value === 'number') wire[key] = value;
  }
  return wire;
}

const reply = (message: Reply) => port.postMessage(message);

async function main(): Promise<void> {
  let db: PGlite;
  try {
    const options = { ...pgliteOptions(data.sharedBuffersMb), ...(data.loadDataDir === undefined ? {} : { loadDataDir: data.loadDataDir }) };
    db = data.dataDir === undefined ? new PGlite(options) : new PGlite(data.dataDir, options);
    await db.waitReady;
  } catch (error) {
    reply({ id: 0, error: wireError(error) });
    return;
  }
  reply({ id: 0, value: null });
  const statements = createStatementRunner(db);

  // A transaction's statements may arrive before its BEGIN has run (the service does not wait for it):
  // each waits for its transaction to be open, and fails with its BEGIN when that fails.
  const open = new Map<number, Promise<OpenTransaction>>();
  const unlisteners = new Map<number, () => Promise<void>>();

  const begin = (id: number, number: number) => {
    let decide!: (commit: boolean) => void;
    const decided = new Promise<boolean>((resolve) => {
      decide = resolve;
    });
    let began = false;
    const entry = new Promise<OpenTransaction>((resolve, reject) => {
      const outcome: Promise<void> = db.transaction(async (tx) => {
        began = true;
        resolve({
          tx,
          async end(commit) {
            decide(commit);
            await outcome.catch((error: unknown) => {
              if (error !== ROLLED_BACK) throw error;
            });
          },
        });
        reply({ id, value: null });
        if (!(await decided)) throw ROLLED_BACK;
      });
      // Only BEGIN's failure is the begin request's: the transaction's own outcome is its end's.
      outcome.catch((error: unknown) => {
        if (began) return;
        reject(error);
        reply({ id, error: wireError(error) });
      });
    });
    entry.catch(() => undefined);
    open.set(number, entry);
  };

  /** The open transaction `tx` (waiting for its BEGIN), or undefined for a statement of its own. */
  const transaction = async (tx: number | undefined): Promise<Transaction | undefined> => {
    if (tx === undefined) return undefined;
    const entry = open.get(tx);
    if (entry === undefined) throw new Error('the transaction has already ended');
    return (await entry).tx;
  };

  const handle = async (request: Request): Promise<void> => {
    const { id } = request;
    try {
      switch (request.op) {
        case 'query': {
          const result = await statements.run(request.sql, request.params, {
            tx: await transaction(request.tx),
            ...(request.prepared === false ? { prepared: false } : {}),
          });
          reply({ id, value: result.rows });
          return;
        }
        case 'exec': {
          const results = await ((await transaction(request.tx)) ?? db).exec(request.sql);
          reply({ id, value: results.map((r) => r.rows) });
          return;
        }
        case 'begin':
          begin(id, request.tx);
          return;
        case 'end': {
          const entry = open.get(request.tx);
          if (entry === undefined) throw new Error('the transaction has already ended');
          open.delete(request.tx);
          await (await entry).end(request.commit);
          reply({ id, value: null });
          return;
        }
        case 'listen': {
          const unlisten = await db.listen(request.channel, (payload) => reply({ id: 0, notify: request.listener, payload }));
          unlisteners.set(request.listener, unlisten);
          reply({ id, value: null });
          return;
        }
        case 'unlisten': {
          const unlisten = unlisteners.get(request.listener);
          unlisteners.delete(request.listener);
          await unlisten?.();
          reply({ id, value: null });
          return;
        }
        case 'dump': {
          reply({ id, value: await db.dumpDataDir('none') });
          return;
        }
        case 'close': {
          await db.close();
          reply({ id, value: null });
          port.close();
          return;
        }
      }
    } catch (error) {
      reply({ id, error: wireError(error) });
    }
  };

  port.on('message', (request: Request) => {
    void handle(request);
  });
}

await main();
