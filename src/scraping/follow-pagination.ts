// Follows a listing's "next" links over several pages, fetching numbered pages concurrently.
import { setMaxListeners } from 'node:events';
import type { ProcessedPage, ReadPage } from './process-page.js';

export interface PaginationResult {
  pages: ProcessedPage[];
  /** Why it stopped before max_pages when a later page failed (the first page's failure throws). */
  stopped: string | null;
  /** The pagination was read to its end (the last page names no next one): every item the source lists was seen. */
  complete: boolean;
}

export interface PaginationOptions {
  /** Stops following (shutdown, cancel); pages in flight are abandoned. */
  signal?: AbortSignal | undefined;
  /** Told of each page kept, in order (a job's progress). */
  onPage?: (page: ProcessedPage) => void;
}

/**
 * The URL of page `n` when `next` is page 2 of a numbered series (`page-2.html`, `?page=2`,
 * `/page/2/`, `p=2`); null when the pagination is not numbered that way.
 */
export function numberedPageUrl(next: string, n: number): string | null {
  const match = /^(.*?[/?&=_-](?:page|p|pg)?[/=_-]?)2(\D*)$/i.exec(next);
  if (match === null) return null;
  return `${match[1]}${n}${match[2]}`;
}

/**
 * Reads up to `maxPages` pages from `startUrl`. Page 1 tells whether pagination is numbered;
 * if so, pages 2..max are requested at once (the fetcher bounds per-host concurrency) and kept
 * only while each page's own "next" link confirms the chain; otherwise links are followed one
 * by one. A failure of page 1 throws; a later failure ends with what was found.
 */
export async function followPagination(startUrl: string, maxPages: number, readPage: ReadPage, options: PaginationOptions = {}): Promise<PaginationResult> {
  const { signal: outer, onPage } = options;
  const controller = new AbortController();
  // Every page in flight or queued for its host listens on this signal (a few listeners each);
  // Node's warning past 10 would be noise, not a leak, so the bound is what this crawl can need.
  setMaxListeners(4 * maxPages + 10, controller.signal);
  const abort = () => controller.abort(outer?.reason);
  outer?.addEventListener('abort', abort, { once: true });
  try {
    const read = (url: string, signal: AbortSignal = controller.signal): Promise<ProcessedPage> => readPage(url, signal);
    const first = await read(startUrl);
    const pages = [first];
    onPage?.(first);
    if (maxPages === 1 || first.nextUrl === null) return { pages, stopped: null, complete: first.nextUrl === null };

    let next: string | null = first.nextUrl;
    const urls = Array.from({ length: maxPages - 1 }, (_, i) => numberedPageUrl(next!, i + 2));
    if (urls.every((url) => url !== null)) {
      // Numbered pages are requested together; settle them in order, keeping each while the
      // previous page's "next" link confirms it. The first break ends this phase.
      // Each has its own stop: once the chain breaks, the pages past it are no longer needed.
      const stops = urls.map(() => new AbortController());
      const pending = urls.map((url, i) =>
        read(url!, AbortSignal.any([controller.signal, stops[i]!.signal])).then(
          (page) => ({ page }),
          (error: unknown) => ({ error }),
        ),
      );
      let i = 0;
      try {
        for (; i < pending.length && next !== null && sameUrl(next, urls[i]!); i++) {
          const result = await pending[i]!;
          if ('error' in result) return { pages, stopped: `page ${i + 2} failed: ${(result.error as Error).message}`, complete: false };
          pages.push(result.page);
          onPage?.(result.page);
          next = result.page.nextUrl;
        }
      } finally {
        for (const stop of stops.slice(i)) stop.abort(new Error('not needed: the pagination ended before this page'));
      }
    }

    // Unnumbered pagination (or a series that changed shape): each page names the next one.
    const seen = new Set(pages.map((p) => p.url));
    while (next !== null && pages.length < maxPages && !seen.has(next)) {
      seen.add(next);
      try {
        const page = await read(next);
        pages.push(page);
        onPage?.(page);
        next = page.nextUrl;
      } catch (error) {
        return { pages, stopped: `page ${pages.length + 1} failed: ${(error as Error).message}`, complete: false };
      }
    }
    return { pages, stopped: null, complete: next === null || seen.has(next) };
  } finally {
    outer?.removeEventListener('abort', abort);
    controller.abort(); // speculative requests past the last page are not needed
  }
}

function sameUrl(a: string, b: string): boolean {
  try {
    return new URL(a).href === new URL(b).href;
  } catch {
    return false;
  }
}
