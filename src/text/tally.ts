// What a reading of a text counts, before textStats turns it into the answer; shared by both ways of reading.

export interface TopWord {
  word: string;
  count: number;
}

export interface Tally {
  /** Word-like segments. */
  words: number;
  /** Grapheme clusters, and those of them that are whitespace only. */
  graphemes: number;
  whitespaceGraphemes: number;
  /** Graphemes inside words, summed over every occurrence. */
  wordGraphemes: number;
  lines: number;
  /** Sentence segments that hold at least part of a word. */
  sentences: number;
  paragraphs: number;
  /** Distinct words after case folding. */
  uniqueWords: number;
  /** The most frequent folded words, in topWordOrder. */
  topWords: TopWord[];
}

/** Count descending, then code-unit order for ties: deterministic and independent of the host's collation data. */
export function topWordOrder(a: TopWord, b: TopWord): number {
  return b.count - a.count || (a.word < b.word ? -1 : a.word > b.word ? 1 : 0);
}
