// The fast way of reading a pure-ASCII text: the Unicode segmentation rules (UAX #29) written out for
// the 128 ASCII characters, in one pass over the bytes, with no segmenter and no string per word.
//
// In ASCII the rules reduce to little: every character is its own grapheme except CR LF; a word is a
// run of letters, digits and "_" joined across ":" "." "'" (between letters) and "," ";" "." "'"
// (between digits); a sentence ends after a line break, and after "." "!" "?" as SB6-SB11 say. A
// full stop inside a word never ends a sentence ("3.14", "U.S.A", "e.g": SB6-SB8), so words and
// sentences can be read in the same pass. The tests compare this path with the general one
// (Intl.Segmenter) on random ASCII text, and asciiTally checks itself against the segmenter once,
// on every ASCII character, before it answers anything.
import { segmenterTally } from './segmenter-tally.js';
import { topWordOrder, type Tally, type TopWord } from './tally.js';

// --- Character classes -----------------------------------------------------------------------

// Words (WB5-WB13b).
const LETTER = 1 << 0;
const DIGIT = 1 << 1;
const UNDERSCORE = 1 << 2;
/** Joins two letters (WB6/WB7: MidLetter, MidNumLetQ). */
const MID_LETTER = 1 << 3;
/** Joins two digits (WB11/WB12: MidNum, MidNumLetQ). */
const MID_NUM = 1 << 4;
const JOINS = LETTER | DIGIT | UNDERSCORE;
// Sentences (SB3-SB11). ASCII has no OLetter, Sep, Extend or Format characters.
const UPPER = 1 << 5;
const LOWER = 1 << 6;
const NUMERIC = 1 << 7;
const A_TERM = 1 << 8;
const S_TERM = 1 << 9;
const CLOSE = 1 << 10;
/** Sp; with PARA_SEP, exactly what `\s` matches in ASCII and String#trim removes. */
const SP = 1 << 11;
const PARA_SEP = 1 << 12;
const S_CONTINUE = 1 << 13;
const TERM = A_TERM | S_TERM;

const UPPERS = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ';
const LOWERS = 'abcdefghijklmnopqrstuvwxyz';
const DIGITS = '0123456789';

const CLASS = new Uint16Array(128);
for (const [flag, chars] of [
  [LETTER, UPPERS + LOWERS],
  [DIGIT, DIGITS],
  [UNDERSCORE, '_'],
  [MID_LETTER, ":.'"],
  [MID_NUM, ",;.'"],
  [UPPER, UPPERS],
  [LOWER, LOWERS],
  [NUMERIC, DIGITS],
  [A_TERM, '.'],
  [S_TERM, '!?'],
  [CLOSE, '"\'()[]{}'],
  [SP, ' \t\v\f'],
  [PARA_SEP, '\r\n'],
  [S_CONTINUE, ',-:;'],
] as const) {
  for (const c of chars) CLASS[c.charCodeAt(0)]! |= flag;
}

/** Lower case of each ASCII code: what toLocaleLowerCase() does to ASCII (checked on first use). */
const FOLD = Uint8Array.from({ length: 128 }, (_, c) => (c >= 0x41 && c <= 0x5a ? c + 0x20 : c));

const CR = 0x0d;
const LF = 0x0a;
const UNDERSCORE_CODE = 0x5f;

const ENCODER = new TextEncoder();

// --- Reading ---------------------------------------------------------------------------------

let agrees: boolean | undefined;

/**
 * The tally of `text` when it is pure ASCII (undefined otherwise, or when this path disagreed with
 * the segmenter on this host): equal to segmenterTally's, several times faster.
 */
export function asciiTally(text: string, topWords: number): Tally | undefined {
  // Indexing bytes is several times faster than charCodeAt, which checks the string's representation
  // on every call. Every non-ASCII character takes two or more bytes of UTF-8, so equal lengths mean ASCII.
  const codes = ENCODER.encode(text);
  if (codes.length !== text.length) return undefined;
  agrees ??= agreesWithSegmenter();
  return agrees ? read(text, codes, topWords) : undefined;
}

/**
 * Compares both paths on every ASCII character in the contexts the rules tell apart (letters,
 * digits and "_" around it; after a terminator, a space or a close; between a terminator and
 * another one or a comma; the case of "I"), so a segmenter whose Unicode data differs from the
 * table above turns the fast path off rather than giving different answers. About 1,500 short
 * texts, once per process (a few tens of ms, on the first ASCII text).
 */
function agreesWithSegmenter(): boolean {
  const contexts = ['a#b', '1#2', '_#_', 'A#', 'A.#b', 'A. #B', 'A.#B', 'a.#.a', 'a!#,A', 'x! #y', 'A.)#b', 'a #\n#b. C'];
  for (let c = 0; c < 128; c++) {
    const char = String.fromCharCode(c);
    for (const context of contexts) {
      const text = context.replaceAll('#', () => char);
      const fast = read(text, ENCODER.encode(text), 3);
      const general = segmenterTally(text, 3);
      for (const key of Object.keys(fast) as Array<keyof Tally>) {
        if (JSON.stringify(fast[key]) !== JSON.stringify(general[key])) return false;
      }
    }
  }
  return true;
}

function read(text: string, codes: Uint8Array, topWords: number): Tally {
  const n = codes.length;
  const seen = new WordTable(text, codes);
  let words = 0;
  let wordChars = 0;
  let crlf = 0;
  let whitespace = 0;
  let lineBreaks = 0;
  let paragraphs = 0;
  let lineBlank = true;
  let previousLineBlank = true;
  let sentences = 0;
  let sentenceHasWord = false;
  /** Where the current sentence ends (SB11), once a terminator has decided it; -1 while open. */
  let sentenceEnd = -1;

  let i = 0;
  while (i < n) {
    if (i === sentenceEnd) {
      if (sentenceHasWord) sentences++;
      sentenceHasWord = false;
      sentenceEnd = -1;
    }
    const c = codes[i]!;
    const k = CLASS[c]!;

    if ((k & JOINS) !== 0) {
      const start = i;
      // The word's end (WB5-WB13b: letters, digits and "_" always join; a middle character joins two
      // letters or two digits), hashing its folded bytes on the way (FNV-1a).
      let hash = 0x811c9dc5;
      for (;;) {
        let d: number;
        while (i < n && (CLASS[(d = codes[i]!)]! & JOINS) !== 0) {
          hash = Math.imul(hash ^ FOLD[d]!, 0x01000193);
          i++;
        }
        if (i + 1 >= n || !joinsAcross(codes[i - 1]!, codes[i]!, codes[i + 1]!)) break;
        hash = Math.imul(hash ^ codes[i]!, 0x01000193);
        i++;
      }
      if (lineBlank) {
        lineBlank = false;
        if (previousLineBlank) paragraphs++;
      }
      // ICU calls a lone "_" punctuation, but "__" or "a_" a word.
      if (i - start === 1 && c === UNDERSCORE_CODE) continue;
      words++;
      wordChars += i - start;
      seen.add(start, i - start, hash);
      sentenceHasWord = true;
      continue;
    }

    if ((k & PARA_SEP) !== 0) {
      // CR LF is one grapheme and one line break (GB3, SB3); a sentence ends after it (SB4).
      const pair = c === CR && codes[i + 1] === LF;
      if (pair) crlf++;
      whitespace++;
      lineBreaks++;
      previousLineBlank = lineBlank;
      lineBlank = true;
      if (sentenceHasWord) sentences++;
      sentenceHasWord = false;
      sentenceEnd = -1;
      i += pair ? 2 : 1;
      continue;
    }

    if ((k & SP) !== 0) {
      whitespace++;
    } else if (lineBlank) {
      // The first character String#trim keeps: a paragraph starts, unless the line before had one.
      lineBlank = false;
      if (previousLineBlank) paragraphs++;
    }
    if ((k & TERM) !== 0) sentenceEnd = sentenceBreakAfter(codes, i);
    i++;
  }
  if (sentenceHasWord) sentences++;

  const endsWithBreak = n > 0 && (CLASS[codes[n - 1]!]! & PARA_SEP) !== 0;
  return {
    words,
    graphemes: n - crlf,
    whitespaceGraphemes: whitespace,
    // Every character of an ASCII word is one grapheme.
    wordGraphemes: wordChars,
    lines: n === 0 ? 0 : lineBreaks + (endsWithBreak ? 0 : 1),
    sentences,
    paragraphs,
    uniqueWords: seen.size,
    topWords: seen.top(topWords),
  };
}

/** Whether `middle` joins the letters (WB6/WB7) or digits (WB11/WB12) on either side of it into one word. */
function joinsAcross(before: number, middle: number, after: number): boolean {
  const around = CLASS[before]! & CLASS[after]!;
  const joiner = CLASS[middle]!;
  return ((around & LETTER) !== 0 && (joiner & MID_LETTER) !== 0) || ((around & DIGIT) !== 0 && (joiner & MID_NUM) !== 0);
}

/**
 * Where the sentence of the terminator at `t` ends: after its closing punctuation and spaces
 * (SB9-SB11), or -1 when what follows continues it, or a line break there ends it anyway.
 */
function sentenceBreakAfter(codes: Uint8Array, t: number): number {
  const n = codes.length;
  const at = (i: number) => (i >= 0 && i < n ? CLASS[codes[i]!]! : 0);
  const fullStop = (at(t) & A_TERM) !== 0;
  // SB6: "a.1". (SB7, "U.S", never gets here: a full stop between two letters is inside a word.)
  if (fullStop && (at(t + 1) & NUMERIC) !== 0) return -1;
  let j = t + 1;
  while ((at(j) & CLOSE) !== 0) j++;
  while ((at(j) & SP) !== 0) j++;
  // At the end of the text, or before a line break (SB4), the sentence ends anyway.
  if (j >= n || (at(j) & PARA_SEP) !== 0) return -1;
  // SB8a: a comma, a colon, another terminator... go on.
  if ((at(j) & (S_CONTINUE | TERM)) !== 0) return -1;
  if (fullStop) {
    // SB8: a lower-case letter before any other letter, separator or terminator goes on ("etc. and").
    let m = j;
    while (m < n && (at(m) & (UPPER | LOWER | PARA_SEP | TERM)) === 0) m++;
    if ((at(m) & LOWER) !== 0) return -1;
  }
  return j;
}

/**
 * Distinct words, case-folded, as (offset, length) in the text with their counts: an open-addressing
 * table, so no string is made for a word unless it can make the top list.
 */
class WordTable {
  size = 0;
  private slots = new Int32Array(256); // entry + 1; 0 is empty
  private starts = new Int32Array(128);
  private lengths = new Int32Array(128);
  private hashes = new Int32Array(128);
  private counts = new Int32Array(128);

  constructor(
    private readonly text: string,
    private readonly codes: Uint8Array,
  ) {}

  /** Counts the word at text[start, start + length), whose folded bytes hash to `hash`. */
  add(start: number, length: number, hash: number): void {
    const mask = this.slots.length - 1;
    for (let slot = hash & mask; ; slot = (slot + 1) & mask) {
      const entry = this.slots[slot]! - 1;
      if (entry < 0) {
        this.insert(slot, start, length, hash);
        return;
      }
      if (this.hashes[entry] === hash && this.lengths[entry] === length && this.same(this.starts[entry]!, start, length)) {
        this.counts[entry]!++;
        return;
      }
    }
  }

  /** The `limit` most frequent words, in topWordOrder; strings only for those that can make the list. */
  top(limit: number): TopWord[] {
    if (limit === 0 || this.size === 0) return [];
    const least = this.size > limit ? this.counts.slice(0, this.size).sort()[this.size - limit]! : 0;
    const candidates: TopWord[] = [];
    for (let e = 0; e < this.size; e++) {
      const count = this.counts[e]!;
      const start = this.starts[e]!;
      if (count >= least) candidates.push({ word: this.text.slice(start, start + this.lengths[e]!).toLowerCase(), count });
    }
    return candidates.sort(topWordOrder).slice(0, limit);
  }

  private same(a: number, b: number, length: number): boolean {
    const codes = this.codes;
    for (let k = 0; k < length; k++) {
      const x = codes[a + k]!;
      const y = codes[b + k]!;
      if (x !== y && FOLD[x] !== FOLD[y]) return false;
    }
    return true;
  }

  private insert(slot: number, start: number, length: number, hash: number): void {
    const entry = this.size++;
    if (entry === this.starts.length) {
      this.starts = grown(this.starts);
      this.lengths = grown(this.lengths);
      this.hashes = grown(this.hashes);
      this.counts = grown(this.counts);
    }
    this.starts[entry] = start;
    this.lengths[entry] = length;
    this.hashes[entry] = hash;
    this.counts[entry] = 1;
    this.slots[slot] = entry + 1;
    // At most half full, so probes stay short.
    if (this.size * 2 > this.slots.length) this.rehash();
  }

  private rehash(): void {
    const slots = new Int32Array(this.slots.length * 2);
    const mask = slots.length - 1;
    for (let e = 0; e < this.size; e++) {
      let slot = this.hashes[e]! & mask;
      while (slots[slot] !== 0) slot = (slot + 1) & mask;
      slots[slot] = e + 1;
    }
    this.slots = slots;
  }
}

function grown(array: Int32Array<ArrayBuffer>): Int32Array<ArrayBuffer> {
  const bigger = new Int32Array(array.length * 2);
  bigger.set(array);
  return bigger;
}
