// How lists of articles are read, as SQL: columns, filters, sort orders, search pages and keyset batches. Pure text and parameters; article-store.ts runs them.
import type { QueryOptions } from '../db/database.js';
import { canonicalUrl } from '../url-identity/url-key.js';
import type { ArticleListQuery, ArticleSort } from './article-schema.js';
import { searchCondition, searchRank } from './article-search.js';
import { siteFilterKey } from './article-site.js';
import { normalizeTag } from '../tags/tag-schema.js';

/** A timestamptz as the API shows it (ISO 8601, UTC, milliseconds), made by the database. */
export const isoTime = (column: string) => `to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS ${column}`;

/** The Article schema's fields, in its order. */
export const ARTICLE_COLUMNS =
  'id, url, title, body, body_html, description, authors, published_at, modified_at, language, site_name, image_url, section, tags, word_count, source_url, ' +
  `${isoTime('created_at')}, ${isoTime('updated_at')}`;

/** Undated articles come last in either direction; id breaks ties in the same direction. `time` names the published_time column. */
export function orderBy(sort: ArticleSort, time = 'published_time'): string {
  switch (sort) {
    case 'id':
      return 'id ASC';
    case '-id':
      return 'id DESC';
    case 'published_at':
      return `${time} ASC NULLS LAST, id ASC`;
    case '-published_at':
      return `${time} DESC NULLS LAST, id DESC`;
  }
}

/** Best matches first: rank, then the newer, then the later stored. */
const ranked = (time = 'published_time') => `rank DESC, ${time} DESC NULLS LAST, id DESC`;

export const DEFAULT_SORT: ArticleSort = '-published_at';

/** Where the next batch starts after a row whose published_time (as exact text) is $k and id is $i; same order as ORDER_BY. */
export const AFTER: Record<ArticleSort, { dated: boolean; after: (k: string, i: string) => string; afterNull: (i: string) => string }> = {
  id: { dated: false, after: (_k, i) => `id > ${i}`, afterNull: (i) => `id > ${i}` },
  '-id': { dated: false, after: (_k, i) => `id < ${i}`, afterNull: (i) => `id < ${i}` },
  published_at: {
    dated: true,
    after: (k, i) => `((published_time, id) > (${k}::timestamptz, ${i}) OR published_time IS NULL)`,
    afterNull: (i) => `(published_time IS NULL AND id > ${i})`,
  },
  '-published_at': {
    dated: true,
    after: (k, i) => `((published_time, id) < (${k}::timestamptz, ${i}) OR published_time IS NULL)`,
    afterNull: (i) => `(published_time IS NULL AND id < ${i})`,
  },
};

/** Every article, from the running count the triggers of migration 11 keep: a few rows, whatever the table size. */
export const TOTAL_ALL = '(SELECT sum(n) FROM article_count_shards)::int';

export interface Where {
  sql: string;
  params: unknown[];
  /** The placeholder of q, when q is one of the conditions. */
  q: string | undefined;
}

/** The filters of the list (and of the feeds), as one WHERE clause. */
export function whereClause(query: Omit<ArticleListQuery, 'limit' | 'offset' | 'sort'>): Where {
  const conditions: string[] = [];
  const params: unknown[] = [];
  const at = (value: unknown) => {
    params.push(value);
    return `$${params.length}`;
  };
  let q: string | undefined;
  if (query.q !== undefined) {
    q = at(query.q);
    conditions.push(searchCondition(q));
  }
  if (query.site !== undefined) conditions.push(`(site_keys @> ARRAY[${at(siteFilterKey(query.site))}::text] OR lower(site_name) = lower(${at(query.site.trim())}::text))`);
  if (query.source_url !== undefined) conditions.push(`source_key = ${at(canonicalUrl(query.source_url) ?? query.source_url)}`);
  if (query.author !== undefined) conditions.push(`author_keys @> ARRAY[${at(query.author.trim().toLowerCase())}::text]`);
  if (query.language !== undefined) {
    conditions.push(query.language.includes('-') ? `lower(language) = ${at(query.language.toLowerCase())}` : `language_base = ${at(query.language.toLowerCase())}`);
  }
  if (query.published_since !== undefined) conditions.push(`published_time >= ${at(query.published_since)}::timestamptz`);
  if (query.published_before !== undefined) conditions.push(`published_time < ${at(query.published_before)}::timestamptz`);
  if (query.tag !== undefined) conditions.push(`id IN (SELECT at.article_id FROM article_tags at JOIN tags t ON t.id = at.tag_id WHERE t.name = ${at(normalizeTag(query.tag))})`);
  if (query.has_body !== undefined) conditions.push(query.has_body ? 'body IS NOT NULL' : 'body IS NULL');
  return { sql: conditions.length === 0 ? '' : `WHERE ${conditions.join(' AND ')}`, params, q };
}

/**
 * A search is planned for its text every time: a prepared (generic) plan cannot know whether q
 * matches ten rows or a million.
 */
export const planFor = (where: Where): QueryOptions | undefined => (where.q === undefined ? undefined : { prepared: false });

/** A page's statement: its rows (ARTICLE_COLUMNS, and `total` when `withTotal`) in the asked order. */
export interface PageStatement {
  sql: string;
  params: unknown[];
  where: Where;
  withTotal: boolean;
}

export function pageStatement(query: ArticleListQuery): PageStatement {
  const where = whereClause(query);
  const params = [...where.params];
  let paging = '';
  if (query.limit !== undefined) {
    params.push(query.limit);
    paging += ` LIMIT $${params.length}`;
  }
  if (query.offset) {
    params.push(query.offset);
    paging += ` OFFSET $${params.length}`;
  }
  const sort = query.sort ?? DEFAULT_SORT;
  if (where.q === undefined) {
    // An unfiltered page reads the running total in the same statement (and so the same snapshot).
    const withTotal = where.sql === '' && query.limit !== undefined;
    return {
      sql: `SELECT ${ARTICLE_COLUMNS}${withTotal ? `, ${TOTAL_ALL} AS total` : ''} FROM articles ${where.sql} ORDER BY ${orderBy(sort)}${paging}`,
      params,
      where,
      withTotal,
    };
  }
  // A search: its matches found once (the index gives them), kept with their rank, counted and
  // ordered; only the page's rows are read whole.
  const byRank = query.sort === undefined;
  const kept = byRank ? `id, published_time AS t, ${searchRank(where.q)} AS rank` : 'id, published_time AS t';
  const order = byRank ? ranked('t') : orderBy(sort, 't');
  const sql = `WITH matches AS MATERIALIZED (SELECT ${kept} FROM articles ${where.sql}),
      page AS (SELECT * FROM matches ORDER BY ${order}${paging})
    SELECT ${ARTICLE_COLUMNS}, (SELECT count(*) FROM matches)::int AS total
      FROM page JOIN articles USING (id) ORDER BY ${order}`;
  return { sql, params, where, withTotal: true };
}

/** Every match of a search, ranked, as ids: what an unpaged list in relevance order reads batch by batch. */
export function rankedIdsSql(where: Where): string {
  return `SELECT coalesce(array_agg(id ORDER BY ${ranked()}), '{}') AS ids FROM (SELECT id, published_time, ${searchRank(where.q!)} AS rank FROM articles ${where.sql}) m`;
}

/**
 * The total, when the page itself proves it: a page shorter than asked for (or an unlimited list)
 * ends the result. Otherwise count(*), which reads every matching row.
 */
export function totalFromPage(query: Pick<ArticleListQuery, 'limit' | 'offset'>, rows: number): number | undefined {
  const offset = query.offset ?? 0;
  if (rows === 0 && offset > 0) return undefined;
  if (query.limit === undefined || rows < query.limit) return offset + rows;
  return undefined;
}
