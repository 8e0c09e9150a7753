// Runs in a worker thread of the extraction pool: parse and extract one page off the main event loop.
import { extract, type ExtractOptions } from './index.js';
import type { MessagePort } from 'node:worker_threads';
import type { ExtractionResult } from './types.js';

export interface ExtractTask {
  html: string;
  pageUrl: string;
  options: ExtractOptions;
  /** Told when this thread takes the page up (the page's timeout starts then). */
  started?: MessagePort;
}

export default function extractTask({ html, pageUrl, options, started }: ExtractTask): ExtractionResult {
  started?.postMessage(null);
  started?.close();
  return extract(html, pageUrl, options);
}
