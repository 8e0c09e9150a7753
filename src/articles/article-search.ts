// How `q` finds and ranks articles: PostgreSQL full-text search, each article stemmed in its own language (migration 11).

/**
 * The configurations article_search_config() (migration 11) may give an article: one per language
 * with a snowball stemmer, and 'simple' for the rest. A search reads q with each of them that the
 * server has (PostgreSQL 15 lacks Estonian).
 */
export const SEARCH_CONFIGS = [
  'arabic',
  'armenian',
  'basque',
  'catalan',
  'danish',
  'dutch',
  'english',
  'estonian',
  'finnish',
  'french',
  'german',
  'greek',
  'hindi',
  'hungarian',
  'indonesian',
  'irish',
  'italian',
  'lithuanian',
  'nepali',
  'norwegian',
  'portuguese',
  'romanian',
  'russian',
  'serbian',
  'spanish',
  'swedish',
  'tamil',
  'turkish',
  'yiddish',
  'simple',
] as const;

const CONFIGS = `(SELECT c.oid::regconfig FROM pg_catalog.pg_ts_config c JOIN pg_catalog.pg_namespace n ON n.oid = c.cfgnamespace
   WHERE n.nspname = 'pg_catalog' AND c.cfgname IN (${SEARCH_CONFIGS.map((c) => `'${c}'`).join(', ')}))`;

/** Every configuration's reading of q, in the order of the configurations' oids; and those oids. Each computed once per statement. */
const READINGS = (q: string) => `(SELECT array_agg(websearch_to_tsquery(c, ${q}::text) ORDER BY c) FROM ${CONFIGS} AS configs (c))`;
const CONFIG_ORDER = `(SELECT array_agg(c ORDER BY c) FROM ${CONFIGS} AS configs (c))`;

/** q as the row's own language reads it: picked from the readings by the row's configuration, not parsed again per row. */
const rowQuery = (q: string) => `${READINGS(q)}[array_position(${CONFIG_ORDER}, search_config)]`;

/**
 * The filter, `q` being the placeholder of the search text. Two conditions: the first is what the
 * GIN index answers, the OR of q as every configuration reads it (an English article stores "flood"
 * for "floods", a German one "hochwass" for "Hochwasser", so q must be read both ways to find both);
 * the second holds each candidate to q as its own language reads it, so that a word stemmed alike in
 * another language does not match. The subqueries are uncorrelated: each runs once per statement.
 */
export function searchCondition(q: string): string {
  return `(search_vector @@ (SELECT article_tsquery_or(DISTINCT websearch_to_tsquery(c, ${q}::text)) FROM ${CONFIGS} AS configs (c))
    AND search_vector @@ ${rowQuery(q)})`;
}

/**
 * The relevance of a match, larger first: ts_rank_cd over the weighted vector (title A, description B,
 * body C), so terms close together in the title count most. Normalisation 1 divides by the log of the
 * document's length, so a long body does not win by length alone.
 */
export function searchRank(q: string): string {
  return `ts_rank_cd(search_vector, ${rowQuery(q)}, 1)`;
}
