// How `q` finds and ranks products: a case-insensitive substring of the title or the description,
// served by trigram indexes (migrations 7 and 10), best matches first when no other order is asked for.

/** q with LIKE's wildcards escaped, so `q=50%` searches for "50%" literally. */
const literal = (text: string) => text.replace(/[\\%_]/g, (c) => `\\${c}`);

/** The LIKE pattern of "holds q". */
export function likePattern(text: string): string {
  return `%${literal(text)}%`;
}

/**
 * The filter: `pattern` is the placeholder of likePattern(q). ILIKE on UTF-8 text is LIKE between
 * the lower-cased sides, so the stored lower-cased title (search_title) matches as title ILIKE
 * would, without folding every row's case again.
 */
export function searchCondition(pattern: string): string {
  return `(search_title LIKE lower(${pattern}::text) OR description ILIKE ${pattern})`;
}

/**
 * The relevance of a matching row, smaller first, as one integer: the match's tier times 1000, plus
 * the title's length (at most 500, so a shorter title, closer to q, comes first within a tier). Tiers:
 * 0 the title is q; 1 it starts with q; 2 a word of it (after a space) starts with q; 3 it holds q
 * elsewhere; 4 only the description holds q. Case is folded as ILIKE folds it (lower(): ILIKE on
 * UTF-8 text compares the lower-cased text), so tier 3 is exactly "title ILIKE %q%". Ties: by id.
 * `lowered` is the title lower-cased (the search_title column); `terms` are the placeholders of
 * rankTerms(q). The tiers are LIKE patterns rather than strpos(), which sets up a skip table on
 * every call: a third of the ranking's cost at ten thousand matches.
 */
export function relevanceRank(lowered: string, terms: readonly [string, string, string, string]): string {
  const [exact, prefix, word, anywhere] = terms.map((term) => `lower(${term}::text)`);
  return `(CASE WHEN ${lowered} = ${exact} THEN 0
      WHEN ${lowered} LIKE ${prefix} THEN 1
      WHEN ${lowered} LIKE ${word} THEN 2
      WHEN ${lowered} LIKE ${anywhere} THEN 3
      ELSE 4 END * 1000 + char_length(title))`;
}

/** What relevanceRank compares with: q itself, and the patterns "starts with q", "a word starts with q", "holds q". */
export function rankTerms(q: string): [string, string, string, string] {
  return [q, `${literal(q)}%`, `% ${literal(q)}%`, likePattern(q)];
}
