// The relational database as every store sees it: parameterised statements, scripts, transactions.

export interface QueryOptions {
  /**
   * false: plan the statement for these parameters each time instead of reusing a prepared plan.
   * A reused (generic) plan guesses how selective its parameters are, which goes badly where that
   * decides the plan: a search pattern matching 1 % of the rows beside a price range matching 40 %.
   */
  prepared?: boolean;
}

export interface Queryable {
  /** Runs one parameterised statement and returns its rows. */
  query<R = Record<string, unknown>>(sql: string, params?: readonly unknown[], options?: QueryOptions): Promise<R[]>;
  /** Runs a script of several statements without parameters (migrations). */
  exec(sql: string): Promise<void>;
}

export interface Database extends Queryable {
  readonly backend: 'postgresql' | 'pglite';
  transaction<T>(fn: (tx: Queryable) => Promise<T>): Promise<T>;
  close(): Promise<void>;
}
