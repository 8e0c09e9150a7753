// Extraction off the event loop: every page is parsed and extracted in a worker thread (piscina), where a
// deadline can stop it, so no page, however hostile, stalls the requests the service is answering meanwhile.
import { fileURLToPath } from 'node:url';
import { MessageChannel } from 'node:worker_threads';
import { Piscina } from 'piscina';
import type { ExtractOptions } from './index.js';
import type { ExtractTask } from './extract-worker.js';
import type { ExtractionResult } from './types.js';

/**
 * Extracts a page; the same contract as `extract`, asynchronous. When `signal` aborts (a run's
 * deadline, a cancel) a page in a thread is stopped there and then (the thread is ended and a new
 * one takes its place), rejecting with the signal's reason. `started` is called when the page's
 * extraction begins: after the wait for a thread and that thread's start, which a page's own
 * timeout does not count (a cold thread loads the extraction code first, seconds on a busy machine).
 */
export type PageExtractor = (html: string, pageUrl: string, options?: ExtractOptions, signal?: AbortSignal, started?: () => void) => Promise<ExtractionResult>;

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
export const extractInline: PageExtractor = async (html, pageUrl, options = {}, signal, started) => {
  signal?.throwIfAborted();
  // Imported here, not above: with threads, the service's own thread never loads the extraction code
  // and its parsers (about 0.3 s and 45 MB at start).
  const { extract } = await import('./index.js');
  started?.();
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
    extract: async (html, pageUrl, extractOptions = {}, signal, started) => {
      signal?.throwIfAborted();
      // The thread says when it takes the page up, over a channel of the page's own.
      const channel = started === undefined ? undefined : new MessageChannel();
      channel?.port1.once('message', () => started?.());
      const task: ExtractTask = { html, pageUrl, options: extractOptions, ...(channel === undefined ? {} : { started: channel.port2 }) };
      const run = { ...(signal === undefined ? {} : { signal }), ...(channel === undefined ? {} : { transferList: [channel.port2] }) };
      try {
        return await pool.run(task, run);
      } catch (error) {
        // Piscina ends the thread of an aborted task; its own AbortError says less than the reason.
        throw signal?.aborted ? signal.reason : error;
      } finally {
        channel?.port1.close();
      }
    },
    close: () => pool.destroy(),
  };
}
