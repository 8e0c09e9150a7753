// Extraction off the event loop: big pages are parsed and extracted in worker threads (piscina), so a
// 5 MiB page never stalls the requests the service is answering meanwhile.
import { fileURLToPath } from 'node:url';
import { Piscina } from 'piscina';
import { extract, type ExtractOptions } from './index.js';
import type { ExtractTask } from './extract-worker.js';
import type { ExtractionResult } from './types.js';

/**
 * Extracts a page; the same contract as `extract`, asynchronous. When `signal` aborts (a run's
 * deadline, a cancel) a page in a thread is stopped there and then (the thread is ended and a new
 * one takes its place), rejecting with the signal's reason.
 */
export type PageExtractor = (html: string, pageUrl: string, options?: ExtractOptions, signal?: AbortSignal) => Promise<ExtractionResult>;

export interface ExtractionPool {
  extract: PageExtractor;
  /** Threads in use (0: every page is extracted inline). */
  readonly threads: number;
  /** Pages extracted in a thread so far. */
  readonly threaded: number;
  close(): Promise<void>;
}

/**
 * Below this many characters a page is extracted inline: it takes well under a millisecond or two,
 * less than handing it to a thread and back.
 */
export const INLINE_BELOW_CHARS = 64 * 1024;

/** The worker module next to this one: TypeScript under tsx (tests, development), JavaScript from dist/. */
const WORKER = fileURLToPath(new URL(import.meta.url.endsWith('.ts') ? './extract-worker.ts' : './extract-worker.js', import.meta.url));

/** Inline extraction, as a PageExtractor (tests, and EXTRACT_THREADS=0). */
export const extractInline: PageExtractor = async (html, pageUrl, options = {}, signal) => {
  signal?.throwIfAborted();
  return extract(html, pageUrl, options);
};

export function createExtractionPool(options: { threads: number }): ExtractionPool {
  if (options.threads <= 0) return { extract: extractInline, threads: 0, threaded: 0, close: async () => undefined };
  const pool = new Piscina<ExtractTask, ExtractionResult>({
    filename: WORKER,
    minThreads: 0,
    maxThreads: options.threads,
    // Threads that sat idle for a minute go away; the next big page starts one again (~50 ms).
    idleTimeout: 60_000,
  });
  return {
    threads: options.threads,
    get threaded() {
      return pool.completed;
    },
    extract: async (html, pageUrl, extractOptions = {}, signal) => {
      if (html.length < INLINE_BELOW_CHARS) return extractInline(html, pageUrl, extractOptions, signal);
      if (signal === undefined) return pool.run({ html, pageUrl, options: extractOptions });
      signal.throwIfAborted();
      // Piscina ends the thread of an aborted task; its own AbortError says less than the reason.
      return pool.run({ html, pageUrl, options: extractOptions }, { signal }).catch((error: unknown) => {
        throw signal.aborted ? signal.reason : error;
      });
    },
    close: () => pool.destroy(),
  };
}
