// The general way of reading a text: words, graphemes and sentences as Intl.Segmenter finds them, for any script.
import { topWordOrder, type Tally, type TopWord } from './tally.js';

/** Counts a text of any script the way Intl.Segmenter segments it; `topWords` most frequent words listed. */
export function segmenterTally(text: string, topWords: number): Tally {
  const words = findWords(text);
  const graphemes = countGraphemes(text);

  // Count each spelling first: folding and measuring once per distinct spelling instead of once per
  // occurrence is most of the speed on long texts, where words repeat.
  const spellings = new Map<string, number>();
  for (const word of words.texts) spellings.set(word, (spellings.get(word) ?? 0) + 1);
  const counts = new Map<string, number>();
  let graphemesInWords = 0;
  for (const [word, n] of spellings) {
    graphemesInWords += graphemeLength(word) * n;
    const key = foldWord(word);
    counts.set(key, (counts.get(key) ?? 0) + n);
  }

  return {
    words: words.texts.length,
    graphemes: graphemes.total,
    whitespaceGraphemes: graphemes.whitespace,
    wordGraphemes: graphemesInWords,
    lines: countLines(text),
    sentences: countSentences(text, words),
    paragraphs: countParagraphs(text),
    uniqueWords: counts.size,
    topWords: mostFrequent(counts, topWords),
  };
}

// ---------------------------------------------------------------------------------------------
// Segmenting without the quadratic trap.
//
// In Node 20's V8 every step of an Intl.Segmenter iterator costs time proportional to the length
// of the whole input (V8 bug 326176949, fixed only in later V8 releases): 64 KiB takes seconds and
// 1 MiB takes minutes. So the segmenter only ever sees bounded windows, and the hot paths skip it
// where the Unicode rules (UAX #29) make the boundaries certain: graphemes of text without emoji,
// conjoining jamo or Indic conjuncts, and words of Latin, Greek, Cyrillic and Arabic text. The
// tests compare the result with a direct, naive use of Intl.Segmenter on random mixed-script text.
// ---------------------------------------------------------------------------------------------

// Segmenters hold no per-call state, so sharing immutable instances is safe and avoids reloading
// ICU break iterators on every request.
const WORDS = new Intl.Segmenter(undefined, { granularity: 'word' });
const GRAPHEMES = new Intl.Segmenter(undefined, { granularity: 'grapheme' });
const SENTENCES = new Intl.Segmenter(undefined, { granularity: 'sentence' });

/** Code units handed to the segmenter at once: small enough that each step stays cheap. */
const WINDOW = 1024;
/** Boundaries this close to a window's end may still move once the following text is seen. */
const MARGIN = 128;

type Visit = (segment: string, index: number, isWordLike: boolean) => void;

/** Visits the segments of text[start, end) in order, with absolute indexes, one window at a time. */
function forEachSegment(segmenter: Intl.Segmenter, text: string, start: number, end: number, visit: Visit): void {
  let pos = start;
  let size = WINDOW;
  while (pos < end) {
    const windowEnd = Math.min(end, pos + size);
    const keepUntil = windowEnd === end ? end : windowEnd - MARGIN;
    let next = pos;
    for (const s of segmenter.segment(text.slice(pos, windowEnd))) {
      const index = pos + s.index;
      const segmentEnd = index + s.segment.length;
      if (segmentEnd > keepUntil) break;
      visit(s.segment, index, s.isWordLike === true);
      next = segmentEnd;
    }
    if (next === pos) {
      // A single segment (a huge grapheme, a very long sentence) fills the window: look further.
      size *= 2;
    } else {
      pos = next;
      size = WINDOW;
    }
  }
}

// --- Character classes -----------------------------------------------------------------------

// Combining marks of the Latin, Greek, Cyrillic, Hebrew and Arabic blocks (all general category
// Mn/Me, Grapheme_Extend). Each attaches to the character before it, unless that is a control
// (GB4/GB9), and none is a virama, so unlike Indic marks they never glue two letters together.
const SIMPLE_MARK_RANGES: ReadonlyArray<readonly [number, number]> = [
  [0x0300, 0x036f],
  [0x0483, 0x0489],
  [0x0591, 0x05bd],
  [0x05bf, 0x05bf],
  [0x05c1, 0x05c2],
  [0x05c4, 0x05c5],
  [0x05c7, 0x05c7],
  [0x064b, 0x065f],
  [0x0670, 0x0670],
  [0x1ab0, 0x1ace],
  [0x1dc0, 0x1dff],
  [0x20d0, 0x20f0],
  [0xfe20, 0xfe2f],
];
const MARK = SIMPLE_MARK_RANGES.map(([a, b]) => `\\u{${a.toString(16)}}-\\u{${b.toString(16)}}`).join('');

function isSimpleMark(c: number): boolean {
  // Most text (ASCII, CJK, Hangul) is outside every range; answer that without the loop.
  if (c < 0x0300 || c > 0xfe2f || (c > 0x20f0 && c < 0xfe20)) return false;
  return SIMPLE_MARK_RANGES.some(([a, b]) => c >= a && c <= b);
}

// --- Graphemes -------------------------------------------------------------------------------

// A "plain" code point is one that no UAX #29 rule (GB3-GB13) joins to a plain neighbour, so a
// stretch of plain code points (plus simple marks riding on them) has one grapheme per base.
// COMPLEX matches everything else: format characters (ZWJ, Prepend),
// emoji and their modifiers, regional indicators, conjoining Hangul jamo (precomposed syllables
// are plain), other marks (Indic viramas join consonants), spacing marks and Prepend letters
// outside category M/Cf, and a simple mark that follows a control or starts the text.
// Controls are plain: GB4/GB5 break around them, except inside CR LF, which countPlain and the
// widening below treat as one unit.
const COMPLEX = new RegExp(
  '(?:' +
    `[^\\p{L}\\p{N}\\p{P}\\p{S}\\p{Zs}\\p{Zl}\\p{Zp}\\p{Cc}${MARK}]` +
    '|[\\p{Extended_Pictographic}\\p{Regional_Indicator}\\p{Emoji_Modifier}\\u1100-\\u11FF\\uA960-\\uA97F\\uD7B0-\\uD7FF' +
    '\\uFF9E\\uFF9F\\u0E33\\u0EB3\\u0D4E\\u{111C2}\\u{111C3}\\u{1193F}\\u{11941}\\u{11A3A}\\u{11A84}-\\u{11A89}\\u{11D46}\\u{11F02}]' +
    // The mark is matched before the look-behind so the look-behind runs only at marks.
    `|[${MARK}](?<=(?:^|[\\p{Cc}\\p{Zl}\\p{Zp}])[${MARK}])` +
    ')+',
  'gu',
);
const HAS_COMPLEX = new RegExp(COMPLEX.source, 'u');
const WHITESPACE_ONLY = /^\s+$/u;

interface GraphemeTally {
  total: number;
  whitespace: number;
}

function countGraphemes(text: string): GraphemeTally {
  const tally: GraphemeTally = { total: 0, whitespace: 0 };
  let counted = 0;
  let regionStart = -1;
  let regionEnd = -1;
  const flush = (): void => {
    if (regionStart < 0) return;
    countPlain(text, counted, regionStart, tally);
    forEachSegment(GRAPHEMES, text, regionStart, regionEnd, (segment) => {
      tally.total++;
      if (WHITESPACE_ONLY.test(segment)) tally.whitespace++;
    });
    counted = regionEnd;
  };
  for (const m of text.matchAll(COMPLEX)) {
    // Widen to whole plain graphemes on each side: the one before may take the run's marks, the
    // one after may be glued to a Prepend or virama at the run's end.
    const start = baseBefore(text, m.index);
    const end = graphemeAfter(text, m.index + m[0].length);
    if (regionStart >= 0 && start <= regionEnd) {
      regionEnd = end;
    } else {
      flush();
      regionStart = start;
      regionEnd = end;
    }
  }
  flush();
  countPlain(text, counted, text.length, tally);
  return tally;
}

/** Counts text[from, to), which holds only plain code points and simple marks riding on them. */
function countPlain(text: string, from: number, to: number, tally: GraphemeTally): void {
  for (let i = from; i < to; i++) {
    const c = text.charCodeAt(i);
    // Second halves of surrogate pairs, marks, and the LF of CR LF belong to the grapheme already counted.
    if ((c >= 0xdc00 && c <= 0xdfff) || isSimpleMark(c) || (c === 0x0a && text.charCodeAt(i - 1) === 0x0d)) continue;
    tally.total++;
    // " \u0301" is one grapheme, and not a whitespace one.
    if (isWhitespaceCode(c) && !isSimpleMark(text.charCodeAt(i + 1))) tally.whitespace++;
  }
}

/** The code points `\s` matches, tested without a regex because this runs once per character. */
function isWhitespaceCode(c: number): boolean {
  if (c <= 0x20) return c === 0x20 || (c >= 0x09 && c <= 0x0d);
  if (c < 0xa0) return false;
  return c === 0xa0 || c === 0x1680 || (c >= 0x2000 && c <= 0x200a) || c === 0x2028 || c === 0x2029 || c === 0x202f || c === 0x205f || c === 0x3000 || c === 0xfeff;
}

/** Start of the plain grapheme before index i (its base, not one of its marks; CR of CR LF). */
function baseBefore(text: string, i: number): number {
  let p = i;
  do {
    if (p === 0) return 0;
    p--;
    const c = text.charCodeAt(p);
    if (p > 0 && ((c >= 0xdc00 && c <= 0xdfff) || (c === 0x0a && text.charCodeAt(p - 1) === 0x0d))) p--;
  } while (isSimpleMark(text.charCodeAt(p)));
  return p;
}

/** End of the grapheme that starts at index i, counting the code point there and its simple marks. */
function graphemeAfter(text: string, i: number): number {
  if (i >= text.length) return text.length;
  const c = text.charCodeAt(i);
  const pair = (c >= 0xd800 && c <= 0xdbff) || (c === 0x0d && text.charCodeAt(i + 1) === 0x0a);
  let p = pair && i + 2 <= text.length ? i + 2 : i + 1;
  while (p < text.length && isSimpleMark(text.charCodeAt(p))) p++;
  return p;
}

function graphemeLength(word: string): number {
  let n = 0;
  if (HAS_COMPLEX.test(word)) {
    // Windowed, because format characters can make a single "word" as long as the whole text.
    forEachSegment(GRAPHEMES, word, 0, word.length, () => n++);
    return n;
  }
  for (let i = 0; i < word.length; i++) {
    const c = word.charCodeAt(i);
    if ((c < 0xdc00 || c > 0xdfff) && !isSimpleMark(c)) n++;
  }
  return n;
}

// --- Words -----------------------------------------------------------------------------------

// Tokens are the text between ASCII whitespace. A word boundary always falls before such
// whitespace, and after it unless the next character is a mark or format character (which then
// attaches to the whitespace, WB4), so tokens can be segmented separately.
const TOKEN = /[^ \t\n\v\f\r]+/g;

// Latin, Greek, Cyrillic and Arabic letters, all UAX #29 ALetter (Hangul syllables are not: ICU
// gives them their own rules). In a token made of these, ASCII, the usual quotes and dashes and
// simple marks, the word rules reduce to SIMPLE_WORD; the tests check it against Intl.Segmenter.
const LETTER =
  'A-Za-z\\u00C0-\\u00D6\\u00D8-\\u00F6\\u00F8-\\u024F\\u1E00-\\u1EFF\\u0400-\\u0481\\u048A-\\u052F' +
  '\\u0386\\u0388-\\u038A\\u038C\\u038E-\\u03A1\\u03A3-\\u03F5\\u03F7-\\u03FF\\u0621-\\u063A\\u0641-\\u064A';
const SIMPLE_CHAR = `\\x21-\\x7E${LETTER}\\u2018\\u2019\\u201C\\u201D\\u00AB\\u00BB\\u2013\\u2014\\u2026\\u060C\\u061B\\u061F`;
// ICU calls "a_" a word but "a_\u0301" not, so "_" followed by a mark takes the slow path.
const SIMPLE_TOKEN = new RegExp(`^(?![^]*_[${MARK}])[${SIMPLE_CHAR}][${SIMPLE_CHAR}${MARK}]*$`, 'u');
const WORD_CHAR = `${LETTER}0-9_`;
// Letters, digits and "_" join (WB5, WB8-WB10, WB13a/b) and marks ride along (WB4); ":" "." "'"
// and curly apostrophes join two letters (WB6/WB7); "," ";" "." "'" and "،" join two digits (WB11/WB12).
const SIMPLE_WORD = new RegExp(
  `[${WORD_CHAR}][${WORD_CHAR}${MARK}]*` +
    `(?:(?:(?<=[${LETTER}][${MARK}]*)[:.'\\u2018\\u2019][${MARK}]*(?=[${LETTER}])` +
    `|(?<=[0-9][${MARK}]*)[,;.'\\u2018\\u2019\\u060C][${MARK}]*(?=[0-9]))` +
    `[${WORD_CHAR}][${WORD_CHAR}${MARK}]*)*`,
  'gu',
);
const ONLY_LETTERS = new RegExp(`^[${LETTER}]+$`, 'u');

interface Words {
  texts: string[];
  starts: number[];
}

function findWords(text: string): Words {
  const words: Words = { texts: [], starts: [] };
  const add = (segment: string, index: number, isWordLike: boolean): void => {
    if (!isWordLike) return;
    words.texts.push(segment);
    words.starts.push(index);
  };
  // A private copy: exec() keeps its position in lastIndex.
  const simpleWord = new RegExp(SIMPLE_WORD);
  // Neighbouring complex tokens are segmented together so each segmenter call does real work.
  let pendingStart = -1;
  let pendingEnd = -1;
  const flush = (): void => {
    if (pendingStart >= 0) forEachSegment(WORDS, text, pendingStart, pendingEnd, add);
    pendingStart = -1;
  };
  for (const m of text.matchAll(TOKEN)) {
    const token = m[0];
    const start = m.index;
    if (ONLY_LETTERS.test(token)) {
      flush();
      add(token, start, true);
    } else if (SIMPLE_TOKEN.test(token)) {
      flush();
      simpleWord.lastIndex = 0;
      for (let w = simpleWord.exec(token); w !== null; w = simpleWord.exec(token)) {
        // ICU treats a lone "_" as punctuation but "__" or "a_" as a word.
        if (w[0] !== '_') add(w[0], start + w.index, true);
      }
    } else {
      const end = start + token.length;
      if (pendingStart >= 0 && end - pendingStart <= WINDOW) {
        pendingEnd = end;
      } else {
        flush();
        // Include the whitespace before the token: a leading mark belongs to it (WB4).
        pendingStart = start > 0 ? start - 1 : 0;
        pendingEnd = end;
      }
    }
  }
  flush();
  return words;
}

/** Case-folds for counting, so "Café", "café" and "cafe\u0301" are one word. */
function foldWord(word: string): string {
  // Lower-casing can itself produce combining marks (e.g. "İ"), so normalise afterwards.
  const lower = word.toLocaleLowerCase();
  return isAscii(lower) ? lower : lower.normalize('NFC');
}

function isAscii(s: string): boolean {
  for (let i = 0; i < s.length; i++) if (s.charCodeAt(i) > 0x7f) return false;
  return true;
}

function mostFrequent(counts: Map<string, number>, limit: number): TopWord[] {
  if (limit === 0) return [];
  const entries = [...counts].map(([word, count]) => ({ word, count }));
  entries.sort(topWordOrder);
  return entries.slice(0, limit);
}

// --- Lines, paragraphs, sentences ------------------------------------------------------------

const LINE_BREAK = /\r\n|\r|\n/;

function countLines(text: string): number {
  if (text === '') return 0;
  const lines = text.split(LINE_BREAK);
  // A final line break ends the last line rather than starting a new, empty one.
  return lines[lines.length - 1] === '' ? lines.length - 1 : lines.length;
}

function countParagraphs(text: string): number {
  let paragraphs = 0;
  let inParagraph = false;
  for (const line of text.split(LINE_BREAK)) {
    const blank = line.trim() === '';
    if (!blank && !inParagraph) paragraphs++;
    inParagraph = !blank;
  }
  return paragraphs;
}

/**
 * Sentence segments that hold at least part of a word; a lone emoji or "\n" is not a sentence.
 * "Part of" matters where one word spans a sentence boundary, as in "x.가" (two sentences, one word).
 */
function countSentences(text: string, words: Words): number {
  const { starts, texts } = words;
  let sentences = 0;
  let w = 0;
  // Both lists are in text order, so one forward walk pairs them in linear time.
  const visit: Visit = (segment, index) => {
    while (w < starts.length && starts[w]! + texts[w]!.length <= index) w++;
    if (w < starts.length && starts[w]! < index + segment.length) sentences++;
  };
  for (const [start, end] of linesWithWords(text, words)) forEachSegment(SENTENCES, text, start, end, visit);
  return sentences;
}

// A sentence always ends after a paragraph separator (SB4), and no rule looks back across one.
const PARAGRAPH_SEPARATOR = /\r\n|[\n\r\u0085\u2028\u2029]/g;

/** Spans of whole lines that contain words; the lines between cannot hold a sentence, so are skipped. */
function linesWithWords(text: string, words: Words): Array<[number, number]> {
  const { starts, texts } = words;
  const spans: Array<[number, number]> = [];
  let w = 0;
  let lineStart = 0;
  const line = (end: number): void => {
    while (w < starts.length && starts[w]! + texts[w]!.length <= lineStart) w++;
    if (w < starts.length && starts[w]! < end) {
      const last = spans[spans.length - 1];
      if (last !== undefined && last[1] === lineStart) last[1] = end;
      else spans.push([lineStart, end]);
    }
    lineStart = end;
  };
  for (const m of text.matchAll(PARAGRAPH_SEPARATOR)) line(m.index + m[0].length);
  if (lineStart < text.length) line(text.length);
  return spans;
}
