// How `q` finds and ranks products: a case-insensitive substring of the title or the description,
// served by trigram indexes (migrations 7 and 10), best matches first when no other order is asked for.

/** Escapes LIKE wildcards so `q=50%` searches for "50%" literally. */
export function likePattern(text: string): string {
  return `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
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
 * `lowered` is the title lower-cased (the search_title column); `term` is q's placeholder.
 */
export function relevanceRank(lowered: string, term: string): string {
  const q = `lower(${term}::text)`;
  return `(CASE WHEN ${lowered} = ${q} THEN 0
      WHEN starts_with(${lowered}, ${q}) THEN 1
      WHEN strpos(${lowered}, ' ' || ${q}) > 0 THEN 2
      WHEN strpos(${lowered}, ${q}) > 0 THEN 3
      ELSE 4 END * 1000 + char_length(title))`;
}
