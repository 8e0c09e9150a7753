// One page of a list with the count of the whole list: the shape every paged store list shares.
import type { Queryable } from './queryable.js';

export interface PagedQuery {
  /** The columns of each row. */
  columns: string;
  /** What follows the columns up to ORDER BY: `FROM … [WHERE …] [GROUP BY …]`, with `$1`… for `params`. */
  from: string;
  params?: readonly unknown[];
  orderBy: string;
  limit: number;
  offset: number;
}

export interface Page<T> {
  items: T[];
  /** Rows in the whole list, whatever page was asked for. */
  total: number;
}

/**
 * A page and the list's total in one statement (`count(*) OVER ()`), and, for a page past the end
 * (no rows to carry the count), the count on its own: an empty page still says how long the list is.
 */
export async function pagedList<T extends object>(db: Queryable, query: PagedQuery): Promise<Page<T>> {
  const params = query.params ?? [];
  const rows = await db.query<T & { total: number }>(
    `SELECT ${query.columns}, count(*) OVER ()::int AS total ${query.from} ORDER BY ${query.orderBy} LIMIT $${params.length + 1} OFFSET $${params.length + 2}`,
    [...params, query.limit, query.offset],
  );
  if (rows.length > 0) return { items: rows.map(({ total: _total, ...row }) => row as unknown as T), total: rows[0]!.total };
  if (query.offset === 0) return { items: [], total: 0 };
  const [counted] = await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM (SELECT 1 ${query.from}) AS listed`, params);
  return { items: [], total: counted?.n ?? 0 };
}
