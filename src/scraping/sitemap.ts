// A site's sitemaps: the ones robots.txt lists and /sitemap.xml, sitemap indexes followed, gzip read, page URLs collected.
import { setImmediate as nextTurn } from 'node:timers/promises';
import { StringDecoder } from 'node:string_decoder';
import { Readable } from 'node:stream';
import { createGunzip } from 'node:zlib';
import { SaxesParser } from 'saxes';
import { UpstreamFailed } from '../problems.js';
import type { FetchedResource, PageFetcher } from '../egress/page-fetcher.js';

const SITEMAP_TYPES = ['application/xml', 'text/xml', 'application/gzip', 'application/x-gzip', 'application/octet-stream', 'text/plain'];
/** Sitemaps read per crawl at most (an index may name thousands). */
const MAX_SITEMAPS = 50;
/** Sitemaps fetched ahead of the one being read (the fetcher's per-host limit applies too). */
const SITEMAPS_AHEAD = 3;
/** How deep indexes may nest (the protocol allows one level; sites nest a little more). */
const MAX_NESTING = 3;
/** The protocol's own limit of a decompressed sitemap. */
const MAX_SITEMAP_BYTES = 50 * 1024 * 1024;
/** XML is parsed this much at a time, the event loop free between pieces. */
const PIECE_BYTES = 64 * 1024;

export interface SitemapResult {
  urls: string[];
  /**
   * Each sitemap read (or tried), with how many entries it gave or why it failed; `partial` when reading
   * stopped early because the crawl had every URL it could use.
   */
  sitemaps: Array<{ url: string; urls: number; error?: string; partial?: true }>;
}

export interface SitemapOptions {
  trusted: boolean;
  timeoutMs: number;
  signal?: AbortSignal;
  /** Stop once this many page URLs are known. */
  limit: number;
  /**
   * Given, each sitemap's new page URLs as soon as that sitemap is read, awaited before the next one is;
   * answering false stops the reading. A crawl queues its first sitemap's pages while the rest of a large
   * index is still being fetched. Its failure is the reading's failure, not that sitemap's.
   */
  onUrls?: (urls: string[]) => Promise<boolean>;
}

/**
 * Page URLs from the sitemaps of `startUrl`'s origin. Never throws for a missing or broken
 * sitemap: a crawl simply starts from its URL alone; each failure is reported in `sitemaps`.
 */
export async function readSitemaps(startUrl: string, fetcher: Pick<PageFetcher, 'robots' | 'fetchResource'>, options: SitemapOptions): Promise<SitemapResult> {
  const origin = new URL(startUrl).origin;
  // Sitemaps are read in order, but the next few are already being fetched while one is read: an index of
  // many children is not read one round trip after another. Those fetched ahead and never read (the limit
  // came first) are aborted.
  const ahead = new AbortController();
  const signal = options.signal === undefined ? ahead.signal : AbortSignal.any([options.signal, ahead.signal]);
  const fetches = new Map<string, Promise<FetchedResource>>();
  const fetchOf = (url: string): Promise<FetchedResource> => {
    let fetching = fetches.get(url);
    if (fetching === undefined) {
      fetching = fetcher.fetchResource(url, { types: SITEMAP_TYPES, trusted: options.trusted, timeoutMs: options.timeoutMs, signal });
      fetching.catch(() => undefined); // its failure is reported when its turn comes
      fetches.set(url, fetching);
    }
    return fetching;
  };
  const listed = await fetcher.robots(startUrl, { trusted: options.trusted }).then(
    (robots) => robots.sitemaps,
    () => [],
  );
  // robots.txt may name them relative to the site ("Sitemap: /sitemap.xml").
  const named = listed.map((url) => absolute(url, origin)).filter((url): url is string => url !== null);
  const queue: Array<{ url: string; level: number }> = [...new Set([...named, `${origin}/sitemap.xml`])].map((url) => ({ url, level: 0 }));
  const seen = new Set<string>();
  const urls = new Set<string>();
  const result: SitemapResult = { urls: [], sitemaps: [] };
  /** Pages read since onUrls was last called. */
  let fresh: string[] = [];
  let wanted = true;
  try {
    while (wanted && queue.length > 0 && seen.size < MAX_SITEMAPS && urls.size < options.limit) {
      const { url, level } = queue.shift()!;
      if (seen.has(url)) continue;
      seen.add(url);
      for (const next of queue.slice(0, SITEMAPS_AHEAD)) if (!seen.has(next.url) && seen.size + fetches.size < MAX_SITEMAPS) void fetchOf(next.url);
      let entries = 0;
      try {
        const resource = await fetchOf(url);
        fetches.delete(url);
        const read = await readLocs(resource.body, url, options.signal, (loc, kind) => {
          const found = absolute(loc, url);
          if (found === null) return true;
          entries++;
          if (kind === 'page') {
            if (options.onUrls !== undefined && !urls.has(found)) fresh.push(found);
            urls.add(found);
          } else if (level < MAX_NESTING && queue.length + seen.size < MAX_SITEMAPS) queue.push({ url: found, level: level + 1 });
          return urls.size < options.limit;
        });
        result.sitemaps.push({ url, urls: entries, ...(read.complete ? {} : { partial: true }) });
      } catch (error) {
        fetches.delete(url);
        if (options.signal?.aborted) throw error;
        result.sitemaps.push({ url, urls: entries, error: error instanceof Error ? error.message : String(error) });
      }
      // What a broken sitemap gave before it broke counts as well.
      if (options.onUrls !== undefined && fresh.length > 0) {
        const pages = fresh;
        fresh = [];
        wanted = await options.onUrls(pages);
      }
    }
  } finally {
    ahead.abort();
  }
  result.urls = [...urls];
  return result;
}

/**
 * Streams the `<loc>` of each `<url>` (a page) and `<sitemap>` (a nested sitemap) to `found`, piece by
 * piece, gzip decompressed on the way; stops as soon as `found` answers false. A 50 MB sitemap never
 * sits in memory whole, and the event loop turns between pieces.
 */
async function readLocs(body: Buffer, url: string, signal: AbortSignal | undefined, found: (loc: string, kind: 'page' | 'sitemap') => boolean): Promise<{ complete: boolean }> {
  const parser = new SaxesParser();
  const path: string[] = [];
  let loc: string | null = null;
  let wanted = true;
  parser.on('opentag', (tag) => {
    const name = localName(tag.name);
    if (name === 'loc' && (path.at(-1) === 'url' || path.at(-1) === 'sitemap')) loc = '';
    path.push(name);
  });
  const onText = (text: string) => {
    if (loc !== null) loc += text;
  };
  parser.on('text', onText);
  parser.on('cdata', onText);
  parser.on('closetag', () => {
    const name = path.pop();
    if (name === 'loc' && loc !== null) {
      if (wanted) wanted = found(loc, path.at(-1) === 'url' ? 'page' : 'sitemap');
      loc = null;
    }
  });
  parser.on('error', (error) => {
    throw new UpstreamFailed(`${url} is not a readable sitemap: ${error.message}`);
  });

  const gzipped = body[0] === 0x1f && body[1] === 0x8b;
  const pieces: AsyncIterable<Buffer> | Iterable<Buffer> = gzipped ? Readable.from([body]).pipe(createGunzip({ chunkSize: PIECE_BYTES })) : slices(body);
  const decoder = new StringDecoder('utf8');
  let bytes = 0;
  try {
    for await (const piece of pieces) {
      bytes += piece.length;
      if (bytes > MAX_SITEMAP_BYTES) throw new UpstreamFailed(`${url} is larger than ${MAX_SITEMAP_BYTES} bytes decompressed, the protocol's limit.`);
      parser.write(decoder.write(piece));
      if (!wanted) return { complete: false };
      signal?.throwIfAborted();
      await nextTurn();
    }
  } catch (error) {
    if (error instanceof UpstreamFailed || signal?.aborted) throw error;
    throw new UpstreamFailed(`${url} is not a readable ${gzipped ? 'gzip ' : ''}sitemap: ${(error as Error).message}`);
  } finally {
    if ('destroy' in pieces) (pieces as Readable).destroy();
  }
  parser.write(decoder.end());
  parser.close();
  return { complete: true };
}

function* slices(body: Buffer): Iterable<Buffer> {
  for (let at = 0; at < body.length; at += PIECE_BYTES) yield body.subarray(at, at + PIECE_BYTES);
}

/** `image:loc` and `loc` alike: sitemaps mix namespaces, the element's own name is what counts. */
function localName(name: string): string {
  const colon = name.indexOf(':');
  return colon === -1 ? name : name.slice(colon + 1);
}

function absolute(loc: unknown, base: string): string | null {
  if (typeof loc !== 'string' && typeof loc !== 'number') return null;
  try {
    const url = new URL(String(loc).trim(), base);
    return url.protocol === 'http:' || url.protocol === 'https:' ? url.href : null;
  } catch {
    return null;
  }
}
