// Articles in the relational database: the same parameterised SQL for PostgreSQL and PGlite. Knows its table and nothing else.
import type { Database, Queryable } from '../db/queryable.js';
import {
  ARTICLE_COLUMNS,
  AFTER,
  DEFAULT_SORT,
  isoTime,
  orderBy,
  pageStatement,
  planFor,
  rankedIdsSql,
  TOTAL_ALL,
  totalFromPage,
  whereClause,
  type Where,
} from './article-list-sql.js';
import type { Article, ArticleDetail, ArticleListQuery } from './article-schema.js';
import { siteKeys } from './article-site.js';
import type { RunTagging } from '../tags/tag-store.js';

/** An article a scrape found: the page's own (with its body) or a listing's entry (without). */
export interface ScrapedArticle {
  /** Its identity: the canonical URL (url-identity). */
  url_key: string;
  url: string;
  title: string;
  body: string | null;
  body_html: string | null;
  description: string | null;
  authors: readonly string[];
  published_at: string | null;
  modified_at: string | null;
  language: string | null;
  site_name: string | null;
  image_url: string | null;
  section: string | null;
  tags: readonly string[];
  word_count: number | null;
  provenance: { page_url: string; page_type: string; fields: Record<string, unknown> } | null;
}

/** The run that saw them: stored on each article (its last run, the source it was found from). */
export interface ArticleSeenBy {
  runId: string | null;
  /** The URL the run started from, as shown, and in canonical form. */
  sourceUrl: string | null;
  sourceKey: string | null;
}

export interface ArticleUpsert {
  articles: Article[];
  created: number;
  updated: number;
}

/** An unpaged list: the first batch, and the later ones (undefined when the first held them all). */
export interface ArticleBatches {
  total: number;
  first: Article[];
  rest: AsyncIterable<Article[]> | undefined;
}

export interface ArticleStore {
  /** A page and its total (`count: false` spares the count where no one needs it, as a feed). */
  list(query: ArticleListQuery, options?: { count?: boolean }): Promise<{ items: Article[]; total: number }>;
  /** Every article matching `query` (its `limit` ignored), read `batchSize` rows at a time, so memory stays bounded. */
  listAll(query: ArticleListQuery, batchSize: number): Promise<ArticleBatches>;
  /** One article with the provenance of its values. */
  get(id: number): Promise<ArticleDetail | undefined>;
  delete(id: number): Promise<boolean>;
  /**
   * Inserts or updates all items in one statement, in `tx`. What the article's own page says wins;
   * a listing's entry (no body) only fills what is unknown of an article already read, and never
   * takes its body away.
   */
  upsertScraped(items: readonly ScrapedArticle[], seenBy: ArticleSeenBy, tx: Queryable, tagging?: RunTagging): Promise<ArticleUpsert>;
}

const GET_SQL = `SELECT ${ARTICLE_COLUMNS}, provenance, ${isoTime('last_seen_at')} FROM articles WHERE id = $1`;

/**
 * published_at as an instant, for filters and order: a stated offset as stated, a local time (the
 * page gave no offset) or a bare date read as UTC. Null when it is no date.
 */
export function publishedInstant(stated: string | null): string | null {
  if (stated === null) return null;
  const text = /^\d{4}-\d{2}-\d{2}$/.test(stated) ? `${stated}T00:00:00Z` : /(?:Z|[+-]\d{2}:?\d{2})$/i.test(stated) ? stated : `${stated}Z`;
  const ms = Date.parse(text);
  return Number.isNaN(ms) ? null : new Date(ms).toISOString();
}

export function createArticleStore(db: Database): ArticleStore {
  const countMatching = async (where: Where): Promise<number> => {
    const sql = where.sql === '' ? `SELECT ${TOTAL_ALL} AS total` : `SELECT count(*)::int AS total FROM articles ${where.sql}`;
    const [row] = await db.query<{ total: number }>(sql, where.params, planFor(where));
    return row?.total ?? 0;
  };

  return {
    async list(query, options = {}) {
      const page = pageStatement(query);
      const rows = await db.query<Article & { total?: number }>(page.sql, page.params, planFor(page.where));
      const items = page.withTotal ? rows.map(withoutTotal) : rows;
      if (options.count === false) return { items, total: (query.offset ?? 0) + items.length };
      const total = totalFromPage(query, rows.length) ?? rows[0]?.total ?? (await countMatching(page.where));
      return { items, total };
    },

    async listAll(query, batchSize) {
      const where = whereClause(query);
      const offset = query.offset ?? 0;
      if (where.q !== undefined && query.sort === undefined) return rankedBatches(db, where, offset, batchSize);
      const sort = query.sort ?? DEFAULT_SORT;
      const { dated, after, afterNull } = AFTER[sort];
      type Row = Article & { sort_key?: string | null };
      const select = `SELECT ${ARTICLE_COLUMNS}${dated ? ', published_time::text AS sort_key' : ''} FROM articles`;
      const strip = (rows: Row[]): Article[] => (dated ? rows.map(withoutTotal) : rows);
      const firstParams = [...where.params, batchSize, offset];
      const firstRows = await db.query<Row>(
        `${select} ${where.sql} ORDER BY ${orderBy(sort)} LIMIT $${firstParams.length - 1} OFFSET $${firstParams.length}`,
        firstParams,
        planFor(where),
      );
      if (firstRows.length < batchSize) return { total: offset + firstRows.length, first: strip(firstRows), rest: undefined };
      const total = await countMatching(where);
      async function* rest(last: Row): AsyncGenerator<Article[]> {
        for (;;) {
          const params = [...where.params];
          const at = (value: unknown) => {
            params.push(value);
            return `$${params.length}`;
          };
          const key = last.sort_key ?? null;
          const condition = !dated ? after('', at(last.id)) : key === null ? afterNull(at(last.id)) : after(at(key), at(last.id));
          const sql = `${select} ${where.sql === '' ? 'WHERE' : `${where.sql} AND`} ${condition} ORDER BY ${orderBy(sort)} LIMIT ${at(batchSize)}`;
          const rows = await db.query<Row>(sql, params, planFor(where));
          if (rows.length > 0) yield strip(rows);
          if (rows.length < batchSize) return;
          last = rows[rows.length - 1]!;
        }
      }
      return { total, first: strip(firstRows), rest: rest(firstRows[firstRows.length - 1]!) };
    },

    async get(id) {
      const [row] = await db.query<ArticleDetail>(GET_SQL, [id]);
      return row;
    },

    async delete(id) {
      const rows = await db.query('DELETE FROM articles WHERE id = $1 RETURNING id', [id]);
      return rows.length > 0;
    },

    async upsertScraped(items, seenBy, tx, tagging) {
      const unique = [...new Map(items.map((item) => [item.url_key, item])).values()];
      // The same key seen twice in a run (a listing repeating an entry, an entry and its own page):
      // the one with a body wins, else the last.
      for (const item of items) if (item.body !== null) unique[unique.findIndex((u) => u.url_key === item.url_key)] = item;
      if (unique.length === 0) return { articles: [], created: 0, updated: 0 };
      return upsertBatch(tx, unique, seenBy, tagging);
    },
  };
}

function withoutTotal<T extends Article>(row: T): Article {
  const { total: _total, sort_key: _key, ...article } = row as T & { total?: unknown; sort_key?: unknown };
  return article;
}

/** An unpaged list in relevance order: the matching ids ranked once, then the rows read batch by batch by id. */
async function rankedBatches(db: Queryable, where: Where, offset: number, batchSize: number): Promise<ArticleBatches> {
  const [row] = await db.query<{ ids: number[] }>(rankedIdsSql(where), where.params, planFor(where));
  const ids = row?.ids ?? [];
  const batch = async (from: number): Promise<Article[]> => {
    const wanted = ids.slice(from, from + batchSize);
    if (wanted.length === 0) return [];
    const rows = await db.query<Article>(`SELECT ${ARTICLE_COLUMNS} FROM articles WHERE id = ANY($1::int[])`, [wanted]);
    const position = new Map(wanted.map((id, i) => [id, i]));
    return rows.sort((a, b) => position.get(a.id)! - position.get(b.id)!);
  };
  const first = await batch(offset);
  async function* rest(): AsyncGenerator<Article[]> {
    for (let from = offset + batchSize; from < ids.length; from += batchSize) {
      const rows = await batch(from);
      if (rows.length > 0) yield rows;
    }
  }
  return { total: ids.length, first, rest: offset + batchSize < ids.length ? rest() : undefined };
}

/**
 * `w` is whether the incoming row wins: it has a body (the article's own page), or the stored one has
 * none (both are listing entries). A winner's stated values replace, and what it leaves unsaid is kept;
 * a loser only fills what is unknown.
 */
const WINS = '(EXCLUDED.body IS NOT NULL OR articles.body IS NULL)';
const pick = (column: string) => `${column} = CASE WHEN ${WINS} THEN coalesce(EXCLUDED.${column}, articles.${column}) ELSE coalesce(articles.${column}, EXCLUDED.${column}) END`;
/** A list whose empty value means "not stated", and the keys that go with it. */
const pickList = (column: string, keys?: string) => {
  const take = `${WINS} AND cardinality(EXCLUDED.${column}) > 0 OR cardinality(articles.${column}) = 0`;
  return [
    `${column} = CASE WHEN ${take} THEN EXCLUDED.${column} ELSE articles.${column} END`,
    ...(keys ? [`${keys} = CASE WHEN ${take} THEN EXCLUDED.${keys} ELSE articles.${keys} END`] : []),
  ].join(', ');
};
const UPSERT_SET = [
  `url = CASE WHEN ${WINS} THEN EXCLUDED.url ELSE articles.url END`,
  `site_keys = CASE WHEN ${WINS} THEN EXCLUDED.site_keys ELSE articles.site_keys END`,
  `title = CASE WHEN ${WINS} THEN EXCLUDED.title ELSE articles.title END`,
  // A body is never taken away: an entry (no body) leaves the text read from the page.
  'body = coalesce(EXCLUDED.body, articles.body)',
  'body_html = CASE WHEN EXCLUDED.body IS NOT NULL THEN EXCLUDED.body_html ELSE articles.body_html END',
  'word_count = CASE WHEN EXCLUDED.body IS NOT NULL THEN EXCLUDED.word_count ELSE articles.word_count END',
  ...['description', 'modified_at', 'language', 'site_name', 'image_url', 'section'].map(pick),
  // The stated date and its instant go together.
  `published_time = CASE WHEN (${WINS} AND EXCLUDED.published_at IS NOT NULL) OR articles.published_at IS NULL THEN EXCLUDED.published_time ELSE articles.published_time END`,
  pick('published_at'),
  pickList('authors', 'author_keys'),
  pickList('tags'),
  `source_url = CASE WHEN ${WINS} THEN coalesce(EXCLUDED.source_url, articles.source_url) ELSE coalesce(articles.source_url, EXCLUDED.source_url) END`,
  `source_key = CASE WHEN ${WINS} THEN coalesce(EXCLUDED.source_key, articles.source_key) ELSE coalesce(articles.source_key, EXCLUDED.source_key) END`,
  // Each field keeps the provenance of the value it keeps.
  `provenance = CASE WHEN ${WINS}
     THEN jsonb_set(EXCLUDED.provenance, '{fields}', coalesce(articles.provenance->'fields', '{}') || coalesce(EXCLUDED.provenance->'fields', '{}'))
     ELSE jsonb_set(coalesce(articles.provenance, EXCLUDED.provenance), '{fields}', coalesce(EXCLUDED.provenance->'fields', '{}') || coalesce(articles.provenance->'fields', '{}')) END`,
  'last_seen_at = now()',
  'last_run = EXCLUDED.last_run',
  'updated_at = now()',
].join(',\n       ');

/**
 * One statement for any batch: the rows travel as one JSON array, read back by jsonb_to_recordset
 * (arrays of authors and tags included, which unnest() of ragged arrays cannot carry).
 */
const UPSERT = `INSERT INTO articles (url_key, url, title, body, body_html, description, authors, published_at, modified_at, published_time, language, site_name,
                           image_url, section, tags, word_count, site_keys, author_keys, provenance, source_url, source_key, last_seen_at, last_run)
     SELECT i.*, $2::text, $3::text, now(), $4::text
       FROM jsonb_to_recordset($1::jsonb) AS i (url_key text, url text, title text, body text, body_html text, description text, authors text[],
            published_at text, modified_at text, published_time timestamptz, language text, site_name text, image_url text, section text,
            tags text[], word_count integer, site_keys text[], author_keys text[], provenance jsonb)
     ON CONFLICT (url_key) DO UPDATE SET
       ${UPSERT_SET}
     RETURNING ${ARTICLE_COLUMNS}, (xmax = 0) AS inserted`;

async function upsertBatch(tx: Queryable, items: readonly ScrapedArticle[], seenBy: ArticleSeenBy, tagging: RunTagging | undefined): Promise<ArticleUpsert> {
  const rows = items.map((item) => ({
    ...item,
    published_time: publishedInstant(item.published_at),
    site_keys: siteKeys(item.url),
    author_keys: [...new Set(item.authors.map((a) => a.toLowerCase()))],
  }));
  const params = [JSON.stringify(rows), seenBy.sourceUrl, seenBy.sourceKey, seenBy.runId];
  // The run's tags in the same statement, on the rows it wrote.
  const statement = tagging?.around(UPSERT, params) ?? { sql: UPSERT, params };
  const stored = await tx.query<Article & { inserted: boolean }>(statement.sql, statement.params);
  let created = 0;
  const articles = stored.map(({ inserted, ...article }) => {
    if (inserted) created++;
    return article;
  });
  return { articles, created, updated: articles.length - created };
}
