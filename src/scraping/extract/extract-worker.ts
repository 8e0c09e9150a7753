// Runs in a worker thread of the extraction pool: parse and extract one page off the main event loop.
import { extract, type ExtractOptions } from './index.js';
import type { ExtractionResult } from './types.js';

export interface ExtractTask {
  html: string;
  pageUrl: string;
  options: ExtractOptions;
}

export default function extractTask({ html, pageUrl, options }: ExtractTask): ExtractionResult {
  return extract(html, pageUrl, options);
}
