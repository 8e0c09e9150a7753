// Named prepared statements for PGlite, on its thread (pglite-worker.ts). PGlite's own query() parses,
// analyses and plans every statement afresh: for the crawl's page statement (a CTE of six parts) that was
// 70 % of its 2.4 ms, on the one thread every statement waits for. A statement seen again is executed
// by name, as the PostgreSQL adapter's are (database.ts): Bind, Describe, Execute, Sync on the plan
// PostgreSQL keeps, with the parameter types read once.
import { parse, type PGlite, protocol, type Results, type Transaction } from '@electric-sql/pglite';

/** Statements kept prepared at most: a bound on the engine's memory, as on PostgreSQL. */
const MAX_PREPARED = 300;
/** Texts seen once, waiting for a second sighting before they are prepared; cleared when full. */
const MAX_SEEN = 2_000;

/** "cached plan must not change result type": a table changed under a prepared statement's plan. */
const planChanged = (error: unknown): boolean => (error as { code?: unknown }).code === '0A000';

type Messages = Awaited<ReturnType<PGlite['execProtocolStream']>>;

export interface StatementRunner {
  /**
   * Runs one parameterised statement: in `tx`, the open transaction that holds the engine, or else in
   * its own turn, as PGlite's query() does. `prepared: false` plans it for these parameters each time
   * (QueryOptions), as a text seen for the first time is.
   */
  run<T>(sql: string, params: readonly unknown[] | undefined, options: { tx: Transaction | undefined; prepared?: boolean }): Promise<Results<T>>;
}

/** Appends one by one: a result of many rows is as many messages, too many to spread as arguments. */
function append(messages: Messages, more: Messages): void {
  for (const message of more) messages.push(message);
}

export function createStatementRunner(db: PGlite): StatementRunner {
  const prepared = new Map<string, { name: string; types: number[] }>();
  let named = 0;
  // A text used once (a statement with values written into it, say) never takes a prepared slot.
  const seen = new Set<string>();

  const step = (message: Uint8Array): Promise<Messages> => db.execProtocolStream(message, { syncToFs: false });

  /** Bind, Describe, Execute and Sync on a prepared statement: the rows, parsed as query() parses them. */
  const execute = async <T>(sql: string, params: readonly unknown[]): Promise<Results<T>> => {
    const messages: Messages = [];
    try {
      let statement = prepared.get(sql);
      if (statement === undefined) {
        const name = `p${++named}`;
        append(messages, await step(protocol.serialize.parse({ name, text: sql })));
        const types = parse.parseDescribeStatementResults(await step(protocol.serialize.describe({ type: 'S', name })));
        statement = { name, types };
        prepared.set(sql, statement);
      }
      const { name, types } = statement;
      const values = params.map((param, i) => {
        if (param === null || param === undefined) return null;
        const serialize = db.serializers[types[i]!];
        return serialize ? serialize(param) : String(param);
      });
      append(messages, await step(protocol.serialize.bind({ statement: name, values })));
      append(messages, await step(protocol.serialize.describe({ type: 'P' })));
      append(messages, await step(protocol.serialize.execute({})));
    } finally {
      // Ends the extended query, after an error too (the engine then drops what it was doing).
      append(messages, await step(protocol.serialize.sync()));
    }
    return parse.parseResults(messages, db.parsers)[0] as Results<T>;
  };

  return {
    async run<T>(sql: string, params: readonly unknown[] | undefined, options: { tx: Transaction | undefined; prepared?: boolean }): Promise<Results<T>> {
      const reuse = options.prepared !== false && (prepared.has(sql) || (seen.has(sql) && prepared.size < MAX_PREPARED));
      if (!reuse) {
        if (options.prepared !== false && prepared.size < MAX_PREPARED) {
          if (seen.size >= MAX_SEEN) seen.clear();
          seen.add(sql);
        }
        return (options.tx ?? db).query<T>(sql, params as unknown[] | undefined);
      }
      seen.delete(sql);
      const own = async () => {
        try {
          return await db._runExclusiveQuery(() => execute<T>(sql, params ?? []));
        } catch (error) {
          // A table changed under the plan (a column added to what a SELECT * reads): prepared afresh next time.
          if (planChanged(error)) prepared.delete(sql);
          throw error;
        }
      };
      if (options.tx !== undefined) return own();
      // As query(): after any open transaction, and written through to the files when done.
      let result: Results<T>;
      try {
        result = await db._runExclusiveTransaction(own);
      } catch (error) {
        // Outside a transaction nothing was done: planned afresh, the statement runs as it would have.
        if (!planChanged(error)) throw error;
        return db.query<T>(sql, params as unknown[] | undefined);
      }
      await db.syncToFs();
      return result;
    },
  };
}
