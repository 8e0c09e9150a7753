// The shape of one schema migration (src/db/migrations/, one frozen file each).
import type { Queryable } from './queryable.js';

export interface Migration {
  version: number;
  name: string;
  sql: string;
  /**
   * Work SQL cannot express (run after `sql`, in the same transaction). It may only use code of its
   * own file: a migration that called live application code would change when that code changes.
   */
  run?: (tx: Queryable) => Promise<void>;
}
