// Tags in the relational database: the tags table, which products and articles carry each (product_tags, article_tags) and which sources give them (source_tags).
import { pagedList } from '../db/paged-list.js';
import type { Database, Queryable } from '../db/queryable.js';
import type { SourceTags, Tag } from './tag-schema.js';

/** A run as tagging sees it: where it started (canonical), and the tags its request carries. */
export interface TaggingRun {
  source: string | null;
  tags?: readonly string[] | undefined;
}

/** What can carry tags: each kind has its join table of the same shape. */
export type Tagged = 'product' | 'article';

const JOIN: Record<Tagged, { table: string; column: string; rows: string }> = {
  product: { table: 'product_tags', column: 'product_id', rows: 'products' },
  article: { table: 'article_tags', column: 'article_id', rows: 'articles' },
};

/** The sorted names of the tags a row carries, as a JSON array (empty when none): an expression on its id column, for a read that shows them with it. */
export function tagNamesSql(kind: Tagged, idColumn: string): string {
  const { table, column } = JOIN[kind];
  return `COALESCE((SELECT jsonb_agg(t.name ORDER BY t.name) FROM ${table} j JOIN tags t ON t.id = j.tag_id WHERE j.${column} = ${idColumn}), '[]'::jsonb)`;
}

export interface TagStore {
  list(query: { limit: number; offset: number }): Promise<{ items: Tag[]; total: number }>;
  get(name: string): Promise<Tag | undefined>;
  /** Deletes the tag from everything that carries it; false when there was none. */
  delete(name: string): Promise<boolean>;
  /** The tags of each product (or article), sorted; one without any is absent from the map. */
  of(kind: Tagged, ids: readonly number[], tx?: Queryable): Promise<Map<number, string[]>>;
  /** Replaces one's tags (normalised names); answers them. */
  set(kind: Tagged, id: number, names: readonly string[], tx?: Queryable): Promise<string[]>;
  add(kind: Tagged, ids: readonly number[], names: readonly string[], tx?: Queryable): Promise<void>;
  remove(kind: Tagged, id: number, name: string): Promise<boolean>;
  /**
   * In the run's transaction, every product (or article) it saw gets the run's own tags and its
   * source's, in the statement that writes them. The run's own tags are created here first (that
   * statement cannot see tags it makes itself); undefined when a run could give nothing (no tags, no
   * source).
   */
  runTagging(kind: Tagged, run: TaggingRun, tx: Queryable): Promise<RunTagging | undefined>;
  sources(query: { limit: number; offset: number }): Promise<{ items: SourceTags[]; total: number }>;
  source(source: string): Promise<SourceTags | undefined>;
  /**
   * Sets a source's tags (an empty list removes it). What its runs collected before gets them too:
   * answers how many products and articles were tagged now.
   */
  setSource(source: string, names: readonly string[]): Promise<{ tags: string[]; applied: number; applied_articles: number }>;
}

const isoTime = (column: string) => `to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;

const TAG_COLUMNS = `t.name, (SELECT count(*)::int FROM product_tags pt WHERE pt.tag_id = t.id) AS products,
  (SELECT count(*)::int FROM article_tags at WHERE at.tag_id = t.id) AS articles,
  COALESCE((SELECT jsonb_agg(s.source_key ORDER BY s.source_key) FROM source_tags s WHERE s.tag_id = t.id), '[]'::jsonb) AS sources,
  ${isoTime('t.created_at')} AS created_at`;

/** A run's tagging inside the statement that writes its rows (its own tags exist by then). */
export interface RunTagging {
  /**
   * `upsert` (an INSERT ... RETURNING the rows with their `id`) and its `params`, with the tagging of
   * what it returns after it: one statement answering what the upsert returns.
   */
  around(upsert: string, params: readonly unknown[]): { sql: string; params: unknown[] };
}

const taggedStatements: Record<Tagged, Map<string, string>> = { product: new Map(), article: new Map() };
/**
 * An upsert with its rows' tagging after it: the run's tags by name (the next parameter) and its
 * source's (the one after). The same text object each time for the same upsert: the driver names
 * prepared statements by their text, and a string built afresh per page would be hashed afresh.
 */
function taggedStatement(kind: Tagged, upsert: string, paramCount: number): string {
  let sql = taggedStatements[kind].get(upsert);
  if (sql === undefined) {
    const { table, column } = JOIN[kind];
    sql = `WITH upserted AS (${upsert}),
      tagged AS (
        INSERT INTO ${table} (tag_id, ${column})
        SELECT t.id, r.id FROM upserted AS r
          JOIN tags t ON t.name = ANY ($${paramCount + 1}::text[]) OR t.id IN (SELECT s.tag_id FROM source_tags s WHERE s.source_key = $${paramCount + 2}::text)
        ON CONFLICT DO NOTHING)
      SELECT * FROM upserted`;
    taggedStatements[kind].set(upsert, sql);
  }
  return sql;
}

/** Creates the tags that do not exist yet; an existing one costs a read, not a write (no lock held by a long run). */
const ENSURE = `INSERT INTO tags (name) SELECT n FROM unnest($1::text[]) AS n WHERE NOT EXISTS (SELECT 1 FROM tags WHERE name = n) ON CONFLICT (name) DO NOTHING`;

export function createTagStore(db: Database): TagStore {
  const ensure = async (names: readonly string[], tx: Queryable) => {
    if (names.length > 0) await tx.query(ENSURE, [names]);
  };
  const add = async (kind: Tagged, ids: readonly number[], names: readonly string[], tx: Queryable) => {
    if (ids.length === 0 || names.length === 0) return;
    const { table, column } = JOIN[kind];
    await ensure(names, tx);
    await tx.query(
      `INSERT INTO ${table} (tag_id, ${column})
       SELECT t.id, x FROM tags t, unnest($1::int[]) AS x WHERE t.name = ANY ($2::text[]) ON CONFLICT DO NOTHING`,
      [ids, names],
    );
  };
  const of = async (kind: Tagged, ids: readonly number[], tx: Queryable = db) => {
    if (ids.length === 0) return new Map<number, string[]>();
    const { table, column } = JOIN[kind];
    const rows = await tx.query<{ id: number; tags: string[] }>(
      `SELECT j.${column} AS id, jsonb_agg(t.name ORDER BY t.name) AS tags FROM ${table} j JOIN tags t ON t.id = j.tag_id
        WHERE j.${column} = ANY ($1::int[]) GROUP BY j.${column}`,
      [ids],
    );
    return new Map(rows.map((row) => [row.id, row.tags]));
  };
  /** What a source's earlier runs collected of one kind gets these tags now; answers how many were tagged. */
  const applyToCollected = async (kind: Tagged, source: string, names: readonly string[], tx: Queryable) => {
    const { table, column, rows } = JOIN[kind];
    const applied = await tx.query<{ id: number }>(
      `INSERT INTO ${table} (tag_id, ${column})
       SELECT t.id, r.id FROM ${rows} r JOIN tags t ON t.name = ANY ($2::text[]) WHERE r.source_key = $1
       ON CONFLICT DO NOTHING RETURNING ${column} AS id`,
      [source, names],
    );
    return new Set(applied.map((r) => r.id)).size;
  };

  return {
    async list(query) {
      return pagedList<Tag>(db, { columns: TAG_COLUMNS, from: 'FROM tags t', orderBy: 't.name', limit: query.limit, offset: query.offset });
    },

    async get(name) {
      const [row] = await db.query<Tag>(`SELECT ${TAG_COLUMNS} FROM tags t WHERE t.name = $1`, [name]);
      return row;
    },

    async delete(name) {
      return (await db.query('DELETE FROM tags WHERE name = $1 RETURNING id', [name])).length > 0;
    },

    of,

    async set(kind, id, names, tx) {
      const { table, column } = JOIN[kind];
      const write = async (q: Queryable) => {
        await q.query(`DELETE FROM ${table} j USING tags t WHERE j.tag_id = t.id AND j.${column} = $1 AND NOT (t.name = ANY ($2::text[]))`, [id, names]);
        await add(kind, [id], names, q);
        return (await of(kind, [id], q)).get(id) ?? [];
      };
      return tx === undefined ? db.transaction(write) : write(tx);
    },

    add: (kind, ids, names, tx) => (tx === undefined ? db.transaction((q) => add(kind, ids, names, q)) : add(kind, ids, names, tx)),

    async remove(kind, id, name) {
      const { table, column } = JOIN[kind];
      const rows = await db.query(`DELETE FROM ${table} j USING tags t WHERE j.tag_id = t.id AND j.${column} = $1 AND t.name = $2 RETURNING j.tag_id`, [id, name]);
      return rows.length > 0;
    },

    async runTagging(kind, run, tx) {
      const names = run.tags ?? [];
      if (names.length === 0 && run.source === null) return undefined;
      await ensure(names, tx);
      return {
        around: (upsert, params) => ({ sql: taggedStatement(kind, upsert, params.length), params: [...params, names, run.source] }),
      };
    },

    async sources(query) {
      return pagedList<SourceTags>(db, {
        columns: `s.source_key AS source, jsonb_agg(t.name ORDER BY t.name) AS tags, ${isoTime('max(s.created_at)')} AS updated_at`,
        from: 'FROM source_tags s JOIN tags t ON t.id = s.tag_id GROUP BY s.source_key',
        orderBy: 's.source_key',
        limit: query.limit,
        offset: query.offset,
      });
    },

    async source(source) {
      const [row] = await db.query<SourceTags>(
        `SELECT s.source_key AS source, jsonb_agg(t.name ORDER BY t.name) AS tags, ${isoTime('max(s.created_at)')} AS updated_at
           FROM source_tags s JOIN tags t ON t.id = s.tag_id WHERE s.source_key = $1 GROUP BY s.source_key`,
        [source],
      );
      return row;
    },

    setSource: (source, names) =>
      db.transaction(async (tx) => {
        await tx.query(`DELETE FROM source_tags s USING tags t WHERE s.tag_id = t.id AND s.source_key = $1 AND NOT (t.name = ANY ($2::text[]))`, [source, names]);
        if (names.length === 0) return { tags: [], applied: 0, applied_articles: 0 };
        await ensure(names, tx);
        await tx.query(`INSERT INTO source_tags (source_key, tag_id) SELECT $1, t.id FROM tags t WHERE t.name = ANY ($2::text[]) ON CONFLICT DO NOTHING`, [source, names]);
        const applied = await applyToCollected('product', source, names, tx);
        const appliedArticles = await applyToCollected('article', source, names, tx);
        const [row] = await tx.query<{ tags: string[] }>(
          `SELECT COALESCE(jsonb_agg(t.name ORDER BY t.name), '[]'::jsonb) AS tags FROM source_tags s JOIN tags t ON t.id = s.tag_id WHERE s.source_key = $1`,
          [source],
        );
        return { tags: row?.tags ?? [], applied, applied_articles: appliedArticles };
      }),
  };
}
