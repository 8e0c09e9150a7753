// PGlite on a thread of its own. The engine is PostgreSQL compiled to WebAssembly: on the service's
// thread, every statement it ran was time that thread could not fetch, parse or answer in, and a crawl
// on the embedded database kept 6.6 of its 8 requests in flight where PostgreSQL kept 7.9. Here the
// service only posts statements and reads rows back; the engine runs them one at a time, in order.
import { Worker } from 'node:worker_threads';
import type { EngineData, Reply, Request, WireError } from './pglite-wire.js';
import type { QueryOptions } from './queryable.js';

/** Statements in one session: the engine's own connection, or one transaction's. */
export interface EngineSession {
  query<T = Record<string, unknown>>(sql: string, params?: readonly unknown[], options?: QueryOptions): Promise<{ rows: T[] }>;
  /** Several statements, unparameterised: each one's rows. */
  exec(sql: string): Promise<Array<{ rows: unknown[] }>>;
}

/** A request before its id is given: each kind of Request without `id`. */
type WithoutId<R> = R extends unknown ? Omit<R, 'id'> : never;
type Call = WithoutId<Request>;

/** The service's side of the engine's thread. A class: a test entry point wraps `transaction`. */
export class PgliteThread implements EngineSession {
  readonly #worker: Worker;
  readonly #pending = new Map<number, { resolve(value: unknown): void; reject(error: Error): void }>();
  readonly #listeners = new Map<number, (payload: string) => void>();
  #next = 1;
  #gone: Error | undefined;

  private constructor(worker: Worker) {
    this.#worker = worker;
  }

  /** Starts the engine on its thread; resolves once it is ready, rejects with its start-up error. */
  static async start(data: EngineData): Promise<PgliteThread> {
    const worker = new Worker(new URL(`./pglite-worker${import.meta.url.endsWith('.ts') ? '.ts' : '.js'}`, import.meta.url), {
      workerData: data,
      // The thread's own JavaScript is PGlite's glue: a small young generation keeps its garbage from
      // adding tens of MB to the service's footprint under load (its queries are the WebAssembly's memory).
      resourceLimits: { maxYoungGenerationSizeMb: 4 },
    });
    const thread = new PgliteThread(worker);
    const ready = new Promise<unknown>((resolve, reject) => thread.#pending.set(0, { resolve, reject }));
    worker.on('message', (reply: Reply) => thread.#answer(reply));
    worker.on('error', (error) => thread.#lost(error));
    worker.on('exit', (code) => thread.#lost(new Error(`the embedded database's thread ended (exit code ${code}); the database is closed`)));
    try {
      await ready;
    } catch (error) {
      await worker.terminate();
      throw error;
    }
    thread.#idle();
    return thread;
  }

  query<T = Record<string, unknown>>(sql: string, params?: readonly unknown[], options?: QueryOptions): Promise<{ rows: T[] }> {
    return this.#query<T>(sql, params, undefined, options?.prepared);
  }

  exec(sql: string): Promise<Array<{ rows: unknown[] }>> {
    return this.#exec(sql, undefined);
  }

  /** `fn`'s statements in one transaction: committed when it resolves, rolled back when it throws. */
  async transaction<T>(fn: (tx: EngineSession) => Promise<T>): Promise<T> {
    // Not awaited before the first statement: a round trip between the threads saved per transaction.
    // The engine's thread runs them in order, and a BEGIN that fails fails the statements after it.
    const tx = this.#next++;
    const begun = this.#call({ op: 'begin', tx });
    begun.catch(() => undefined);
    let result: T;
    try {
      result = await fn({ query: (sql, params, options) => this.#query(sql, params, tx, options?.prepared), exec: (sql) => this.#exec(sql, tx) });
      await begun;
    } catch (error) {
      await this.#call({ op: 'end', tx, commit: false }).catch(() => undefined);
      throw error;
    }
    await this.#call({ op: 'end', tx, commit: true });
    return result;
  }

  /** Calls `callback` with each payload NOTIFY sends on `channel`, until the returned function is called. */
  async listen(channel: string, callback: (payload: string) => void): Promise<() => Promise<void>> {
    const listener = this.#next++;
    this.#listeners.set(listener, callback);
    await this.#call({ op: 'listen', channel, listener });
    return async () => {
      this.#listeners.delete(listener);
      await this.#call({ op: 'unlisten', listener });
    };
  }

  /** The whole data directory as an uncompressed tarball (PGlite's `loadDataDir` reads it). */
  async dumpDataDir(): Promise<Blob> {
    return (await this.#call({ op: 'dump' })) as Blob;
  }

  async close(): Promise<void> {
    if (this.#gone !== undefined) return;
    try {
      await this.#call({ op: 'close' });
    } finally {
      this.#gone ??= new Error('the embedded database is closed');
      await this.#worker.terminate();
    }
  }

  async #query<T>(sql: string, params: readonly unknown[] | undefined, tx: number | undefined, prepared: boolean | undefined): Promise<{ rows: T[] }> {
    const request: Call = { op: 'query', sql, ...(params === undefined ? {} : { params }), ...(tx === undefined ? {} : { tx }), ...(prepared === false ? { prepared } : {}) };
    return { rows: (await this.#call(request)) as T[] };
  }

  async #exec(sql: string, tx: number | undefined): Promise<Array<{ rows: unknown[] }>> {
    const results = (await this.#call({ op: 'exec', sql, ...(tx === undefined ? {} : { tx }) })) as unknown[][];
    return results.map((rows) => ({ rows }));
  }

  #call(request: Call): Promise<unknown> {
    if (this.#gone !== undefined) return Promise.reject(this.#gone);
    const id = this.#next++;
    // The thread keeps the process alive only while an answer is awaited, as a socket would.
    if (this.#pending.size === 0) this.#worker.ref();
    return new Promise((resolve, reject) => {
      this.#pending.set(id, { resolve, reject });
      this.#worker.postMessage({ ...request, id });
    });
  }

  #answer(reply: Reply): void {
    if ('notify' in reply) {
      this.#listeners.get(reply.notify)?.(reply.payload);
      return;
    }
    const pending = this.#pending.get(reply.id);
    if (pending === undefined) return;
    this.#pending.delete(reply.id);
    if ('error' in reply) pending.reject(fromWire(reply.error));
    else pending.resolve(reply.value);
    if (this.#pending.size === 0) this.#idle();
  }

  #idle(): void {
    this.#worker.unref();
  }

  #lost(error: Error): void {
    this.#gone ??= error;
    for (const pending of this.#pending.values()) pending.reject(this.#gone);
    this.#pending.clear();
  }
}

/** An Error with the fields the engine gave it; the stack is this thread's, where the statement was sent. */
function fromWire(wire: WireError): Error {
  const { message, name, ...fields } = wire;
  const error = Object.assign(new Error(message), fields);
  if (typeof name === 'string') error.name = name;
  return error;
}
