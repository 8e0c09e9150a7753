// Extraction off the event loop: every page is parsed and extracted in a worker thread (piscina), where a
// deadline can stop it, so no page, however hostile, stalls the requests the service is answering meanwhile.
import { fileURLToPath } from 'node:url';
import { Piscina } from 'piscina';
import type { ExtractOptions } from './index.js';
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
  /** Threads in use (0: every page is extracted inline, EXTRACT_THREADS=0). */
  readonly threads: number;
  /** Pages extracted in a thread so far. */
  readonly threaded: number;
  close(): Promise<void>;
}

/**
 * Threads that sat idle this long go away; the next page starts one again (about half a second to load
 * the extraction code, so not after every quiet minute).
 */
const IDLE_MS = 10 * 60_000;

/** The worker module next to this one: TypeScript under tsx (tests, development), JavaScript from dist/. */
const WORKER = fileURLToPath(new URL(import.meta.url.endsWith('.ts') ? './extract-worker.ts' : './extract-worker.js', import.meta.url));

/** Inline extraction, as a PageExtractor (tests, and EXTRACT_THREADS=0). */
export const extractInline: PageExtractor = async (html, pageUrl, options = {}, signal) => {
  signal?.throwIfAborted();
  // Imported here, not above: with threads, the service's own thread never loads the extraction code
  // and its parsers (about 0.3 s and 45 MB at start).
  const { extract } = await import('./index.js');
  return extract(html, pageUrl, options);
};

export function createExtractionPool(options: { threads: number }): ExtractionPool {
  if (options.threads <= 0) return { extract: extractInline, threads: 0, threaded: 0, close: async () => undefined };
  const pool = new Piscina<ExtractTask, ExtractionResult>({
    filename: WORKER,
    minThreads: 0,
    maxThreads: options.threads,
    idleTimeout: IDLE_MS,
  });
  return {
    threads: options.threads,
    get threaded() {
      return pool.completed;
    },
    // Small pages too: a 5 KB page of nested price blocks takes over 100 ms, and a site rule's selector
    // (`h1 ~ div ~ .price`) can backtrack for seconds; only a thread can be stopped at the deadline.
    extract: async (html, pageUrl, extractOptions = {}, signal) => {
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
