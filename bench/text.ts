// Text statistics in this process: MB/s of textStats() on 1 MB of prose, pure ASCII and accented.
import { segmenterTally } from '../src/text/segmenter-tally.js';
import { textStats } from '../src/text/text-stats.js';
import { median } from './client.js';
import { sampleText } from './seed.js';

export interface TextThroughput {
  label: string;
  /** UTF-8 bytes of the text. */
  bytes: number;
  runs: number;
  medianMs: number;
  mbPerSecond: number;
}

export interface TextFigures {
  /** textStats() on ASCII prose: the fast path. */
  ascii: TextThroughput;
  /** The general path (Intl.Segmenter) on the same text: what every text took before the fast path. */
  asciiBySegmenter: TextThroughput;
  /** textStats() on the same prose with accents, which the general path reads. */
  accented: TextThroughput;
}

function throughput(label: string, text: string, runs: number, fn: (text: string) => unknown): TextThroughput {
  for (let i = 0; i < 3; i++) fn(text); // JIT warm-up
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    const started = performance.now();
    fn(text);
    times.push(performance.now() - started);
  }
  const bytes = Buffer.byteLength(text);
  const medianMs = median(times);
  return { label, bytes, runs, medianMs, mbPerSecond: bytes / 1e6 / (medianMs / 1000) };
}

/** Median throughput over `runs` (a third as many for the general path, which is several times slower). */
export function measureTextThroughput(bytes: number, runs: number): TextFigures {
  // A JSON round trip gives a flat string, as a parsed request body is.
  const ascii = JSON.parse(JSON.stringify(sampleText(bytes))) as string;
  const accented = ascii.replace(/e\b/g, 'é');
  const fast = textStats(ascii);
  const general = segmenterTally(ascii, 10);
  if (fast.word_count !== general.words || fast.sentence_count !== general.sentences) {
    throw new Error(`the ASCII fast path counted ${fast.word_count} words and ${fast.sentence_count} sentences, the segmenter ${general.words} and ${general.sentences}`);
  }
  const fewer = Math.max(3, Math.round(runs / 3));
  return {
    ascii: throughput('ASCII prose, textStats() (the fast path)', ascii, runs, (t) => textStats(t)),
    asciiBySegmenter: throughput('the same text through the general path (Intl.Segmenter)', ascii, fewer, (t) => segmenterTally(t, 10)),
    accented: throughput('the same prose with accents (é), textStats() (general path)', accented, fewer, (t) => textStats(t)),
  };
}
