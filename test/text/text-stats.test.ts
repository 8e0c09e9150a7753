// Text statistics: a table of real texts in several scripts, a 1 MiB text, and properties over generated ones.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { asciiTally } from '../../src/text/ascii-tally.js';
import { segmenterTally } from '../../src/text/segmenter-tally.js';
import { textStats, type TextStats } from '../../src/text/text-stats.js';

type Expected = Omit<TextStats, 'top_words'> & { top_words?: TextStats['top_words'] };

/** [name, text, expected]; top_words is checked only where given. */
const CASES: ReadonlyArray<readonly [string, string, Expected]> = [
  [
    'Latin with precomposed accents',
    'Café naïve résumé. Café again!',
    {
      word_count: 5,
      character_count: 30,
      character_count_no_spaces: 26,
      line_count: 1,
      sentence_count: 2,
      paragraph_count: 1,
      unique_word_count: 4,
      average_word_length: 4.8,
      reading_time_seconds: 2,
      top_words: [
        { word: 'café', count: 2 },
        { word: 'again', count: 1 },
        { word: 'naïve', count: 1 },
        { word: 'résumé', count: 1 },
      ],
    },
  ],
  [
    // Same text with e + U+0301 etc.: same graphemes, and "Cafe\u0301" and "Café" fold to one word.
    'Latin with decomposed accents',
    'Cafe\u0301 nai\u0308ve re\u0301sume\u0301. Café again!',
    {
      word_count: 5,
      character_count: 30,
      character_count_no_spaces: 26,
      line_count: 1,
      sentence_count: 2,
      paragraph_count: 1,
      unique_word_count: 4,
      average_word_length: 4.8,
      reading_time_seconds: 2,
      top_words: [
        { word: 'café', count: 2 },
        { word: 'again', count: 1 },
        { word: 'naïve', count: 1 },
        { word: 'résumé', count: 1 },
      ],
    },
  ],
  [
    'Cyrillic',
    'Привет, мир! Как дела? Мир прекрасен.',
    {
      word_count: 6,
      character_count: 37,
      character_count_no_spaces: 32,
      line_count: 1,
      sentence_count: 3,
      paragraph_count: 1,
      unique_word_count: 5,
      average_word_length: 4.67,
      reading_time_seconds: 2,
      top_words: [
        { word: 'мир', count: 2 },
        { word: 'дела', count: 1 },
        { word: 'как', count: 1 },
        { word: 'прекрасен', count: 1 },
        { word: 'привет', count: 1 },
      ],
    },
  ],
  [
    // ICU's dictionary splits it as 今日|は|良い|天気|です|散歩|に|行き|ま|しょう.
    'Japanese (no spaces; words from the dictionary)',
    '今日は良い天気です。散歩に行きましょう。',
    {
      word_count: 10,
      character_count: 20,
      character_count_no_spaces: 20,
      line_count: 1,
      sentence_count: 2,
      paragraph_count: 1,
      unique_word_count: 10,
      average_word_length: 1.8,
      reading_time_seconds: 3,
    },
  ],
  [
    'Chinese',
    '我们今天去公园散步。天气很好！',
    {
      word_count: 7,
      character_count: 15,
      character_count_no_spaces: 15,
      line_count: 1,
      sentence_count: 2,
      paragraph_count: 1,
      unique_word_count: 7,
      average_word_length: 1.86,
      reading_time_seconds: 3,
    },
  ],
  [
    'Arabic',
    'مرحبا بالعالم. كيف حالك؟ العالم جميل.',
    {
      word_count: 6,
      character_count: 37,
      character_count_no_spaces: 32,
      line_count: 1,
      sentence_count: 3,
      paragraph_count: 1,
      unique_word_count: 6,
      average_word_length: 4.83,
      reading_time_seconds: 2,
    },
  ],
  [
    'Korean',
    '안녕하세요. 오늘 날씨가 좋네요.',
    {
      word_count: 4,
      character_count: 18,
      character_count_no_spaces: 15,
      line_count: 1,
      sentence_count: 2,
      paragraph_count: 1,
      unique_word_count: 4,
      average_word_length: 3.25,
      reading_time_seconds: 2,
    },
  ],
  [
    // 😀, 👍🏽 (skin tone), 👨‍👩‍👧 (ZWJ family) and 🇫🇷 (flag) are one grapheme each and no words.
    'emoji with skin tones, ZWJ sequences and flags between words',
    'Hi 😀 👍🏽 👨‍👩‍👧 🇫🇷 ok',
    {
      word_count: 2,
      character_count: 13,
      character_count_no_spaces: 8,
      line_count: 1,
      sentence_count: 1,
      paragraph_count: 1,
      unique_word_count: 2,
      average_word_length: 2,
      reading_time_seconds: 1,
      top_words: [
        { word: 'hi', count: 1 },
        { word: 'ok', count: 1 },
      ],
    },
  ],
  [
    'emoji only: three graphemes, no words, no sentence',
    '😀👍🏽👨‍👩‍👧',
    {
      word_count: 0,
      character_count: 3,
      character_count_no_spaces: 3,
      line_count: 1,
      sentence_count: 0,
      paragraph_count: 1,
      unique_word_count: 0,
      average_word_length: 0,
      reading_time_seconds: 0,
      top_words: [],
    },
  ],
  [
    'empty string',
    '',
    {
      word_count: 0,
      character_count: 0,
      character_count_no_spaces: 0,
      line_count: 0,
      sentence_count: 0,
      paragraph_count: 0,
      unique_word_count: 0,
      average_word_length: 0,
      reading_time_seconds: 0,
      top_words: [],
    },
  ],
  [
    // "\r\n" is one grapheme and one line break.
    'whitespace only',
    '  \t \n \r\n  ',
    {
      word_count: 0,
      character_count: 9,
      character_count_no_spaces: 0,
      line_count: 3,
      sentence_count: 0,
      paragraph_count: 0,
      unique_word_count: 0,
      average_word_length: 0,
      reading_time_seconds: 0,
      top_words: [],
    },
  ],
  [
    'paragraphs separated by CRLF blank lines (one of them spaces only), trailing CRLF',
    'First paragraph, line one.\r\nLine two.\r\n\r\n\r\nSecond paragraph.\r\n   \r\nThird one? Yes.\r\n',
    {
      word_count: 11,
      character_count: 77,
      character_count_no_spaces: 60,
      line_count: 7,
      sentence_count: 5,
      paragraph_count: 3,
      unique_word_count: 8,
      average_word_length: 4.91,
      reading_time_seconds: 4,
      top_words: [
        { word: 'line', count: 2 },
        { word: 'one', count: 2 },
        { word: 'paragraph', count: 2 },
        { word: 'first', count: 1 },
        { word: 'second', count: 1 },
        { word: 'third', count: 1 },
        { word: 'two', count: 1 },
        { word: 'yes', count: 1 },
      ],
    },
  ],
  [
    'contractions, decimals and abbreviations stay one word',
    "Don't stop: it's 3.14, e.g. the U.S.A. isn't.",
    {
      word_count: 8,
      character_count: 45,
      character_count_no_spaces: 38,
      line_count: 1,
      sentence_count: 1,
      paragraph_count: 1,
      unique_word_count: 8,
      average_word_length: 4.13,
      reading_time_seconds: 3,
      top_words: [
        { word: '3.14', count: 1 },
        { word: "don't", count: 1 },
        { word: 'e.g', count: 1 },
        { word: "isn't", count: 1 },
        { word: "it's", count: 1 },
        { word: 'stop', count: 1 },
        { word: 'the', count: 1 },
        { word: 'u.s.a', count: 1 },
      ],
    },
  ],
];

/** The definition, written as directly as possible; quadratic on Node 20, so only for short texts. */
function reference(text: string, topWords = 10): TextStats {
  const words = new Intl.Segmenter(undefined, { granularity: 'word' });
  const graphemes = new Intl.Segmenter(undefined, { granularity: 'grapheme' });
  const sentences = new Intl.Segmenter(undefined, { granularity: 'sentence' });
  const found = [...words.segment(text)].filter((s) => s.isWordLike);
  const clusters = [...graphemes.segment(text)].map((s) => s.segment);
  const counts = new Map<string, number>();
  for (const w of found) {
    const key = w.segment.toLocaleLowerCase().normalize('NFC');
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  const letters = found.reduce((n, w) => n + [...graphemes.segment(w.segment)].length, 0);
  const lines = text === '' ? [] : text.replace(/(\r\n|\r|\n)$/, '').split(/\r\n|\r|\n/);
  const paragraphs = text.split(/(?:\r\n|\r(?!\n)|\n)(?:[^\S\r\n]*(?:\r\n|\r(?!\n)|\n))+/).filter((p) => p.trim() !== '');
  const top = [...counts]
    .map(([word, count]) => ({ word, count }))
    .sort((a, b) => b.count - a.count || (a.word < b.word ? -1 : a.word > b.word ? 1 : 0))
    .slice(0, topWords);
  return {
    word_count: found.length,
    character_count: clusters.length,
    character_count_no_spaces: clusters.filter((g) => !/^\s+$/u.test(g)).length,
    line_count: lines.length,
    // A sentence counts when any word overlaps it (a word like "x.가" can straddle two sentences).
    sentence_count: [...sentences.segment(text)].filter((s) => found.some((w) => w.index < s.index + s.segment.length && w.index + w.segment.length > s.index)).length,
    paragraph_count: paragraphs.length,
    unique_word_count: counts.size,
    average_word_length: found.length === 0 ? 0 : Math.round((letters / found.length) * 100) / 100,
    top_words: top,
    reading_time_seconds: Math.ceil((found.length * 60) / 200),
  };
}

/** Pieces chosen to hit every special case of the segmentation rules and of our fast paths. */
const PIECES = [
  'a',
  'Z',
  'é',
  'e\u0301',
  'a\u0308\u0301',
  'ж',
  'λ',
  'ب',
  '\u064E',
  '1',
  '_',
  '.',
  ',',
  ':',
  ';',
  "'",
  '’',
  '-',
  '“',
  '»',
  '!',
  '?',
  '…',
  ' ',
  '  ',
  '\u00A0',
  '\u3000',
  '\n',
  '\r',
  '\r\n',
  '\t',
  '\u2029',
  '今日',
  'は',
  '天気',
  '。',
  '、',
  '😀',
  '👍🏽',
  '👨‍👩‍👧',
  '🇫🇷',
  '🇫',
  '\u200D',
  '\u0301',
  '\uFE0F',
  '#️⃣',
  '한국',
  '가',
  '\u1100\u1161',
  '\u11A8',
  'मन',
  'क्ष',
  '्',
  '\u0600',
  'ทดสอบ',
  'ำ',
  'İ',
  'ß',
  'ﬁ',
  '\uFEFF',
  '\uD800',
  '\uDC00',
  '𝐀',
  '_\u0301',
  'ـ',
  'x',
];
const mixedText = fc.array(fc.constantFrom(...PIECES), { maxLength: 40 }).map((parts) => parts.join(''));

describe('textStats', () => {
  for (const [name, text, expected] of CASES) {
    test(`${name}: ${JSON.stringify(text).slice(0, 50)}`, () => {
      const actual = textStats(text);
      const { top_words: topWords, ...counts } = expected;
      const { top_words: actualTopWords, ...actualCounts } = actual;
      assert.deepEqual(actualCounts, counts);
      if (topWords !== undefined) assert.deepEqual(actualTopWords, topWords);
      assert.deepEqual(actual, reference(text), 'agrees with the direct use of Intl.Segmenter');
    });
  }

  test('top words: count descending, then word ascending, limited by topWords', () => {
    const stats = textStats('b a c b a b d', { topWords: 2 });
    assert.deepEqual(stats.top_words, [
      { word: 'b', count: 3 },
      { word: 'a', count: 2 },
    ]);
    assert.deepEqual(textStats('x y', { topWords: 0 }).top_words, []);
  });

  test('top words fold case, including the Turkish dotted capital I', () => {
    const stats = textStats('HELLO hello Hello İstanbul i\u0307stanbul');
    assert.deepEqual(stats.top_words, [
      { word: 'hello', count: 3 },
      { word: 'i\u0307stanbul', count: 2 },
    ]);
  });

  test('reading time is exact for whole minutes and rounds partial seconds up', () => {
    const words = (n: number) => Array.from({ length: n }, () => 'w').join(' ');
    // 10 / 200 * 60 is 3.0000000000000004 in floating point: must still be 3 seconds.
    assert.equal(textStats(words(10)).reading_time_seconds, 3);
    assert.equal(textStats(words(200)).reading_time_seconds, 60);
    assert.equal(textStats(words(201)).reading_time_seconds, 61);
    assert.equal(textStats(words(1), { wordsPerMinute: 7 }).reading_time_seconds, 9);
  });

  test('lines: a trailing newline ends the last line; a lone newline is one empty line', () => {
    assert.equal(textStats('a\nb').line_count, 2);
    assert.equal(textStats('a\nb\n').line_count, 2);
    assert.equal(textStats('a\r\nb\r\n').line_count, 2);
    assert.equal(textStats('a\rb').line_count, 2);
    assert.equal(textStats('\n').line_count, 1);
    assert.equal(textStats('a\n\n').line_count, 2);
  });

  test('invalid options are rejected', () => {
    assert.throws(() => textStats('a', { topWords: -1 }), RangeError);
    assert.throws(() => textStats('a', { topWords: 1.5 }), RangeError);
    assert.throws(() => textStats('a', { wordsPerMinute: 0 }), RangeError);
    assert.throws(() => textStats('a', { wordsPerMinute: Number.NaN }), RangeError);
  });

  test('1 MiB of prose gives exact counts (its throughput is a bench row)', () => {
    const unit = 'The quick brown fox jumps over the lazy dog. It wasn’t “quoted” — really, 3.14 times!\n\n';
    const repeats = Math.ceil((1024 * 1024) / Buffer.byteLength(unit));
    const text = unit.repeat(repeats);
    const one = textStats(unit);
    const stats = textStats(text);
    assert.equal(stats.word_count, one.word_count * repeats);
    assert.equal(stats.character_count, one.character_count * repeats);
    assert.equal(stats.character_count_no_spaces, one.character_count_no_spaces * repeats);
    assert.equal(stats.sentence_count, 2 * repeats);
    assert.equal(stats.paragraph_count, repeats);
    assert.equal(stats.line_count, 2 * repeats);
    assert.equal(stats.unique_word_count, one.unique_word_count);
    assert.equal(stats.average_word_length, one.average_word_length);
    assert.deepEqual(stats.top_words[0], { word: 'the', count: 2 * repeats });
  });

  test('1 MiB of Japanese, emoji and combining marks without spaces or newlines agrees piecewise', () => {
    const unit = '今日は良い天気です。散歩に行きましょう。😀👍🏽👨‍👩‍👧cafe\u0301。';
    const repeats = Math.ceil((1024 * 1024) / Buffer.byteLength(unit));
    const one = textStats(unit);
    const stats = textStats(unit.repeat(repeats));
    assert.equal(stats.character_count, one.character_count * repeats);
    assert.equal(stats.word_count, one.word_count * repeats);
    assert.equal(stats.sentence_count, one.sentence_count * repeats);
    assert.equal(stats.line_count, 1);
  });

  test('one word or one grapheme longer than the segmenting window', () => {
    const long = 'x'.repeat(5000);
    assert.equal(textStats(long).word_count, 1);
    assert.equal(textStats(long).average_word_length, 5000);
    const zalgo = `e${'\u0301\u0489'.repeat(3000)}`;
    assert.equal(textStats(zalgo).character_count, 1);
    const family = `👨${'\u200D👨'.repeat(1500)}`;
    assert.equal(textStats(family).character_count, 1);
    const han = '天'.repeat(3000);
    assert.deepEqual(textStats(han), reference(han));
  });

  test('property: never throws; counts are non-negative integers and consistent', () => {
    const anyText = fc.oneof(fc.string({ unit: 'binary', maxLength: 300 }), fc.string({ unit: 'grapheme', maxLength: 100 }), mixedText);
    fc.assert(
      fc.property(anyText, (text) => {
        const s = textStats(text);
        const counts = [
          s.word_count,
          s.character_count,
          s.character_count_no_spaces,
          s.line_count,
          s.sentence_count,
          s.paragraph_count,
          s.unique_word_count,
          s.reading_time_seconds,
        ];
        for (const n of counts) assert.ok(Number.isInteger(n) && n >= 0, `${n} in ${JSON.stringify(s)}`);
        assert.ok(s.character_count_no_spaces <= s.character_count);
        assert.ok(s.unique_word_count <= s.word_count);
        assert.ok(s.average_word_length >= 0 && Number.isFinite(s.average_word_length));
        assert.ok(s.top_words.length <= Math.min(10, s.unique_word_count));
      }),
      { numRuns: 500 },
    );
  });

  test('property: agrees with the direct use of Intl.Segmenter on mixed-script text', () => {
    fc.assert(
      fc.property(mixedText, (text) => {
        assert.deepEqual(textStats(text, { topWords: 50 }), reference(text, 50));
      }),
      { numRuns: 1000 },
    );
  });

  test('agrees with the direct use of Intl.Segmenter on every pair of pieces, and with a third appended', () => {
    const pieces = [
      'a',
      'é',
      '1',
      '_',
      '.',
      ',',
      ':',
      "'",
      '’',
      ' ',
      '\n',
      '\r',
      '\u0301',
      '😀',
      '\u200D',
      '🇫',
      '가',
      '\u1100',
      '्',
      'क',
      '\u0600',
      '今',
      '。',
      'ب',
      '،',
      'ـ',
      '\t',
    ];
    for (const a of pieces) {
      for (const b of pieces) {
        for (const c of ['', 'a', '.', ' ', '\u0301', '\u200D', '😀', '今', 'क']) {
          const text = a + b + c;
          assert.deepEqual(textStats(text), reference(text), JSON.stringify(text));
        }
      }
    }
  });
});

/** ASCII pieces for each class the word and sentence rules tell apart, and sequences of them that real text has. */
const ASCII_PIECES = [
  'a',
  'Z',
  'x',
  'I',
  '1',
  '_',
  '__',
  '.',
  '!',
  '?',
  ',',
  ';',
  ':',
  '-',
  "'",
  '"',
  '(',
  ')',
  ']',
  '{',
  ' ',
  '  ',
  '\t',
  '\v',
  '\f',
  '\n',
  '\r',
  '\r\n',
  '\n\n',
  '@',
  '#',
  '/',
  '\\',
  '~',
  '\x00',
  '\x1c',
  '\x7f',
  'Hello',
  'world',
  'U.S.A',
  'e.g',
  '3.14',
  '1,000',
  "don't",
  'Mr',
  '. ',
  '! ',
  '? ',
  '."',
  '.) ',
  '... ',
  'etc. and',
  'A. B',
  'x.y',
  'a_b',
];
const asciiText = fc.oneof(
  fc.array(fc.constantFrom(...ASCII_PIECES), { maxLength: 60 }).map((parts) => parts.join('')),
  fc.string({ unit: 'binary-ascii', maxLength: 200 }),
);

describe('textStats on pure ASCII: the fast path', () => {
  test('is on for this host: its self-check against Intl.Segmenter passed, and it declines other text', () => {
    assert.notEqual(asciiTally('Hello world. Yes!', 10), undefined, 'asciiTally turned itself off: the tables disagree with this ICU');
    for (const text of ['Café', 'naïve', '😀', 'a\u00A0b', '\uD800']) assert.equal(asciiTally(text, 10), undefined, JSON.stringify(text));
  });

  test('property: counts exactly what the segmenter path counts, on random ASCII text', () => {
    fc.assert(
      fc.property(asciiText, (text) => {
        assert.deepEqual(asciiTally(text, 50), segmenterTally(text, 50));
      }),
      { numRuns: 3000 },
    );
  });

  test('agrees with the segmenter path on every sequence of three ASCII classes, and a fourth appended', () => {
    const pieces = ['a', 'Z', '1', '_', '.', '!', ',', ';', ':', '-', "'", '"', ')', ' ', '\t', '\n', '\r', '@', '\x00'];
    for (const a of pieces) {
      for (const b of pieces) {
        for (const c of pieces) {
          for (const d of ['', 'a', 'B', '2', '.', ' ', '\n']) {
            const text = a + b + c + d;
            assert.deepEqual(asciiTally(text, 10), segmenterTally(text, 10), JSON.stringify(text));
          }
        }
      }
    }
  });

  test('agrees with the segmenter path on every text of up to five characters around sentence ends', () => {
    // Terminators with what may follow them: "a.'.a" is one sentence (SB8a after a close), "a.' A" two.
    const chars = ['a', 'A', '1', '.', '!', ',', "'", ' ', '\n'];
    let texts = [''];
    for (let length = 1; length <= 5; length++) {
      texts = texts.flatMap((text) => chars.map((c) => text + c));
      for (const text of texts) assert.deepEqual(asciiTally(text, 10), segmenterTally(text, 10), JSON.stringify(text));
    }
  });

  test('1 MiB of ASCII prose: the same tally as the segmenter path', () => {
    const words = ['the', 'Market', 'opens', 'at', 'dusk', 'U.S.A', '3.14', "isn't", 'e.g', 'a_b', 'Mr', 'etc'];
    const ends = ['. ', '? ', '! ', ', ', '.\n\n', '." ', ' (a) ', ' ', ' ', ' '];
    let seed = 7;
    const next = (n: number) => {
      seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648;
      return seed % n;
    };
    const parts: string[] = [];
    for (let size = 0; size < 1024 * 1024; ) {
      const part = words[next(words.length)]! + ends[next(ends.length)]!;
      parts.push(part);
      size += part.length;
    }
    const text = parts.join('');
    assert.deepEqual(asciiTally(text, 20), segmenterTally(text, 20));
  });
});
