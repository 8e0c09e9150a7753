// Tags in the relational database: the tags table, which products carry each (product_tags) and which sources give them (source_tags).
import type { Database, Queryable } from '../db/queryable.js';
import type { SourceTags, Tag } from './tag-schema.js';

/** A run as tagging sees it: where it started (canonical), and the tags its request carries. */
export interface TaggingRun {
  source: string | null;
  tags?: readonly string[] | undefined;
}

export interface TagStore {
  list(query: { limit: number; offset: number }): Promise<{ items: Tag[]; total: number }>;
  get(name: string): Promise<Tag | undefined>;
  /** Deletes the tag from everything that carries it; false when there was none. */
  delete(name: string): Promise<boolean>;
  /** The tags of each product, sorted; a product without any is absent from the map. */
  ofProducts(productIds: readonly number[], tx?: Queryable): Promise<Map<number, string[]>>;
  /** Replaces a product's tags (normalised names); answers them. */
  setProduct(productId: number, names: readonly string[], tx?: Queryable): Promise<string[]>;
  addToProducts(productIds: readonly number[], names: readonly string[], tx?: Queryable): Promise<void>;
  removeFromProduct(productId: number, name: string): Promise<boolean>;
  /**
   * In the run's transaction: every product it saw gets the run's own tags and its source's. One
   * statement when there is nothing to give (a run without tags whose source has none).
   */
  tagRun(productIds: readonly number[], run: TaggingRun, tx: Queryable): Promise<void>;
  sources(query: { limit: number; offset: number }): Promise<{ items: SourceTags[]; total: number }>;
  source(source: string): Promise<SourceTags | undefined>;
  /**
   * Sets a source's tags (an empty list removes it). What its runs collected before gets them too:
   * answers how many products were tagged now.
   */
  setSource(source: string, names: readonly string[]): Promise<{ tags: string[]; applied: number }>;
}

const isoTime = (column: string) => `to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;

const TAG_COLUMNS = `t.name, (SELECT count(*)::int FROM product_tags pt WHERE pt.tag_id = t.id) AS products,
  COALESCE((SELECT jsonb_agg(s.source_key ORDER BY s.source_key) FROM source_tags s WHERE s.tag_id = t.id), '[]'::jsonb) AS sources,
  ${isoTime('t.created_at')} AS created_at`;

/** Creates the tags that do not exist yet; an existing one costs a read, not a write (no lock held by a long run). */
const ENSURE = `INSERT INTO tags (name) SELECT n FROM unnest($1::text[]) AS n WHERE NOT EXISTS (SELECT 1 FROM tags WHERE name = n) ON CONFLICT (name) DO NOTHING`;

export function createTagStore(db: Database): TagStore {
  const ensure = async (names: readonly string[], tx: Queryable) => {
    if (names.length > 0) await tx.query(ENSURE, [names]);
  };
  const addToProducts = async (productIds: readonly number[], names: readonly string[], tx: Queryable) => {
    if (productIds.length === 0 || names.length === 0) return;
    await ensure(names, tx);
    await tx.query(
      `INSERT INTO product_tags (tag_id, product_id)
       SELECT t.id, p FROM tags t, unnest($1::int[]) AS p WHERE t.name = ANY ($2::text[]) ON CONFLICT DO NOTHING`,
      [productIds, names],
    );
  };
  const ofProducts = async (productIds: readonly number[], tx: Queryable = db) => {
    if (productIds.length === 0) return new Map<number, string[]>();
    const rows = await tx.query<{ product_id: number; tags: string[] }>(
      `SELECT pt.product_id, jsonb_agg(t.name ORDER BY t.name) AS tags FROM product_tags pt JOIN tags t ON t.id = pt.tag_id
        WHERE pt.product_id = ANY ($1::int[]) GROUP BY pt.product_id`,
      [productIds],
    );
    return new Map(rows.map((row) => [row.product_id, row.tags]));
  };

  return {
    async list(query) {
      const rows = await db.query<Tag & { total: number }>(`SELECT ${TAG_COLUMNS}, count(*) OVER ()::int AS total FROM tags t ORDER BY t.name LIMIT $1 OFFSET $2`, [
        query.limit,
        query.offset,
      ]);
      return { items: rows.map(({ total: _total, ...tag }) => tag), total: rows[0]?.total ?? 0 };
    },

    async get(name) {
      const [row] = await db.query<Tag>(`SELECT ${TAG_COLUMNS} FROM tags t WHERE t.name = $1`, [name]);
      return row;
    },

    async delete(name) {
      return (await db.query('DELETE FROM tags WHERE name = $1 RETURNING id', [name])).length > 0;
    },

    ofProducts,

    async setProduct(productId, names, tx) {
      const write = async (q: Queryable) => {
        await q.query(`DELETE FROM product_tags pt USING tags t WHERE pt.tag_id = t.id AND pt.product_id = $1 AND NOT (t.name = ANY ($2::text[]))`, [productId, names]);
        await addToProducts([productId], names, q);
        return (await ofProducts([productId], q)).get(productId) ?? [];
      };
      return tx === undefined ? db.transaction(write) : write(tx);
    },

    addToProducts: (productIds, names, tx) => (tx === undefined ? db.transaction((q) => addToProducts(productIds, names, q)) : addToProducts(productIds, names, tx)),

    async removeFromProduct(productId, name) {
      const rows = await db.query(`DELETE FROM product_tags pt USING tags t WHERE pt.tag_id = t.id AND pt.product_id = $1 AND t.name = $2 RETURNING pt.tag_id`, [productId, name]);
      return rows.length > 0;
    },

    async tagRun(productIds, run, tx) {
      const names = run.tags ?? [];
      if (productIds.length === 0 || (names.length === 0 && run.source === null)) return;
      await ensure(names, tx);
      await tx.query(
        `INSERT INTO product_tags (tag_id, product_id)
         SELECT t.id, p FROM unnest($1::int[]) AS p
           JOIN tags t ON t.name = ANY ($2::text[]) OR t.id IN (SELECT s.tag_id FROM source_tags s WHERE s.source_key = $3)
         ON CONFLICT DO NOTHING`,
        [productIds, names, run.source],
      );
    },

    async sources(query) {
      const rows = await db.query<SourceTags & { total: number }>(
        `SELECT s.source_key AS source, jsonb_agg(t.name ORDER BY t.name) AS tags, ${isoTime('max(s.created_at)')} AS updated_at, count(*) OVER ()::int AS total
           FROM source_tags s JOIN tags t ON t.id = s.tag_id GROUP BY s.source_key ORDER BY s.source_key LIMIT $1 OFFSET $2`,
        [query.limit, query.offset],
      );
      return { items: rows.map(({ total: _total, ...row }) => row), total: rows[0]?.total ?? 0 };
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
        if (names.length === 0) return { tags: [], applied: 0 };
        await ensure(names, tx);
        await tx.query(`INSERT INTO source_tags (source_key, tag_id) SELECT $1, t.id FROM tags t WHERE t.name = ANY ($2::text[]) ON CONFLICT DO NOTHING`, [source, names]);
        const applied = await tx.query<{ product_id: number }>(
          `INSERT INTO product_tags (tag_id, product_id)
           SELECT t.id, p.id FROM products p JOIN tags t ON t.name = ANY ($2::text[]) WHERE p.source_key = $1
           ON CONFLICT DO NOTHING RETURNING product_id`,
          [source, names],
        );
        const [row] = await tx.query<{ tags: string[] }>(
          `SELECT COALESCE(jsonb_agg(t.name ORDER BY t.name), '[]'::jsonb) AS tags FROM source_tags s JOIN tags t ON t.id = s.tag_id WHERE s.source_key = $1`,
          [source],
        );
        return { tags: row?.tags ?? [], applied: new Set(applied.map((r) => r.product_id)).size };
      }),
  };
}
