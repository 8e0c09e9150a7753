// Rendering pages in a headless browser, as the interface its users receive (renderer.ts implements it).
import type { FetchedPage } from '../../egress/page-fetcher.js';

export interface RenderOptions {
  timeoutMs: number;
  /** CSS selector to wait for before reading the page; otherwise waits for network idle. */
  waitFor?: string;
  trusted?: boolean;
  /** Stops the render: its page and context close at once, and render() rejects with the signal's reason. */
  signal?: AbortSignal;
}

/** Renders pages in a headless browser. Throws ServiceUnavailable when no browser can be started. */
export interface PageRenderer {
  render(url: string, options: RenderOptions): Promise<FetchedPage>;
  /** Browser name/version and whether it is running, for /health. */
  status(): Promise<{ available: boolean; detail: string }>;
  close(): Promise<void>;
}
