// Loading a page the way a request asks: an HTTP fetch, or a render in headless Chromium; chosen once per request.
import type { FetchedPage, FetchTrace, PageFetcher } from '../egress/page-fetcher.js';
import type { PageRenderer } from './browser/page-renderer.js';
import { isTrusted } from './scrape-request.js';
import type { ScrapeRequest } from './scrape-schema.js';

export interface LoadOptions {
  signal: AbortSignal;
  /** Filled with each step of a fetch (explain); a render has no steps to tell. */
  trace?: FetchTrace;
}

/** Loads one page of a run. */
export type LoadPage = (url: string, options: LoadOptions) => Promise<FetchedPage>;

export interface PageLoader {
  /** How the pages of `request` are loaded: its mode, timeout, trust and `wait_for`. */
  forRequest(request: Pick<ScrapeRequest, 'url' | 'use_selenium' | 'timeout_ms' | 'wait_for'>): LoadPage;
}

export function createPageLoader(deps: { fetcher: Pick<PageFetcher, 'fetchPage'>; renderer: Pick<PageRenderer, 'render'>; defaultTimeoutMs: number }): PageLoader {
  return {
    forRequest(request) {
      const timeoutMs = request.timeout_ms ?? deps.defaultTimeoutMs;
      const trusted = isTrusted(request);
      if (request.use_selenium === true) {
        const waitFor = request.wait_for === undefined ? {} : { waitFor: request.wait_for };
        return (url, { signal }) => deps.renderer.render(url, { timeoutMs, trusted, signal, ...waitFor });
      }
      return (url, { signal, trace }) => deps.fetcher.fetchPage(url, { timeoutMs, trusted, signal, ...(trace === undefined ? {} : { trace }) });
    },
  };
}
