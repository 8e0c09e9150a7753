// Pure text statistics (words, graphemes, lines, sentences, paragraphs) for any script, by Intl.Segmenter's rules.
import { asciiTally } from './ascii-tally.js';
import { segmenterTally } from './segmenter-tally.js';
import type { TopWord } from './tally.js';

export type { TopWord } from './tally.js';

export interface TextStats {
  word_count: number;
  character_count: number;
  character_count_no_spaces: number;
  line_count: number;
  sentence_count: number;
  paragraph_count: number;
  unique_word_count: number;
  average_word_length: number;
  top_words: TopWord[];
  reading_time_seconds: number;
}

export interface TextStatsOptions {
  /** How many of the most frequent words to list (default 10). */
  topWords?: number;
  /** Reading speed used for `reading_time_seconds` (default 200). */
  wordsPerMinute?: number;
}

export function textStats(text: string, options: TextStatsOptions = {}): TextStats {
  if (typeof text !== 'string') throw new TypeError(`text must be a string, got ${typeof text}`);
  const topWords = options.topWords ?? 10;
  const wordsPerMinute = options.wordsPerMinute ?? 200;
  if (!Number.isInteger(topWords) || topWords < 0) {
    throw new RangeError(`topWords must be a non-negative integer, got ${topWords}`);
  }
  if (!Number.isFinite(wordsPerMinute) || wordsPerMinute <= 0) {
    throw new RangeError(`wordsPerMinute must be a positive number, got ${wordsPerMinute}`);
  }

  // Pure ASCII (most request bodies) has a direct reading that gives the same counts several times faster.
  const tally = asciiTally(text, topWords) ?? segmenterTally(text, topWords);
  const wordCount = tally.words;
  return {
    word_count: wordCount,
    character_count: tally.graphemes,
    character_count_no_spaces: tally.graphemes - tally.whitespaceGraphemes,
    line_count: tally.lines,
    sentence_count: tally.sentences,
    paragraph_count: tally.paragraphs,
    unique_word_count: tally.uniqueWords,
    average_word_length: wordCount === 0 ? 0 : Math.round((tally.wordGraphemes / wordCount) * 100) / 100,
    top_words: tally.topWords,
    // Multiply before dividing: 10 / 200 * 60 is 3.0000000000000004 in floating point, which would ceil to 4.
    reading_time_seconds: Math.ceil((wordCount * 60) / wordsPerMinute),
  };
}
