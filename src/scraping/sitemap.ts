// A site's sitemaps: the ones robots.txt lists and /sitemap.xml, sitemap indexes followed, gzip read, page URLs collected.
import { gunzipSync } from 'node:zlib';
import { XMLParser } from 'fast-xml-parser';
import { UpstreamFailed } from '../problems.js';
import type { PageFetcher } from '../egress/page-fetcher.js';

const SITEMAP_TYPES = ['application/xml', 'text/xml', 'application/gzip', 'application/x-gzip', 'application/octet-stream', 'text/plain'];
/** Sitemaps read per crawl at most (an index may name thousands). */
const MAX_SITEMAPS = 50;
/** How deep indexes may nest (the protocol allows one level; sites nest a little more). */
const MAX_NESTING = 3;
/** The protocol's own limit of a decompressed sitemap. */
const MAX_SITEMAP_BYTES = 50 * 1024 * 1024;

export interface SitemapResult {
  urls: string[];
  /** Each sitemap read (or tried), with how many entries it gave or why it failed. */
  sitemaps: Array<{ url: string; urls: number; error?: string }>;
}

export interface SitemapOptions {
  trusted: boolean;
  timeoutMs: number;
  signal?: AbortSignal;
  /** Stop once this many page URLs are known. */
  limit: number;
}

/**
 * Page URLs from the sitemaps of `startUrl`'s origin. Never throws for a missing or broken
 * sitemap: a crawl simply starts from its URL alone; each failure is reported in `sitemaps`.
 */
export async function readSitemaps(startUrl: string, fetcher: Pick<PageFetcher, 'robots' | 'fetchResource'>, options: SitemapOptions): Promise<SitemapResult> {
  const origin = new URL(startUrl).origin;
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
  const parser = new XMLParser({ ignoreAttributes: true, removeNSPrefix: true, isArray: (name) => name === 'url' || name === 'sitemap' });
  while (queue.length > 0 && seen.size < MAX_SITEMAPS && urls.size < options.limit) {
    const { url, level } = queue.shift()!;
    if (seen.has(url)) continue;
    seen.add(url);
    try {
      const resource = await fetcher.fetchResource(url, {
        types: SITEMAP_TYPES,
        trusted: options.trusted,
        timeoutMs: options.timeoutMs,
        ...(options.signal ? { signal: options.signal } : {}),
      });
      const xml = decode(resource.body, url);
      const doc = parser.parse(xml) as { urlset?: { url?: Array<{ loc?: unknown }> }; sitemapindex?: { sitemap?: Array<{ loc?: unknown }> } };
      const pages = (doc.urlset?.url ?? []).map((entry) => absolute(entry.loc, url)).filter((u): u is string => u !== null);
      const nested = (doc.sitemapindex?.sitemap ?? []).map((entry) => absolute(entry.loc, url)).filter((u): u is string => u !== null);
      for (const page of pages) if (urls.size < options.limit) urls.add(page);
      if (level < MAX_NESTING) for (const child of nested) queue.push({ url: child, level: level + 1 });
      result.sitemaps.push({ url, urls: pages.length + nested.length });
    } catch (error) {
      if (options.signal?.aborted) throw error;
      result.sitemaps.push({ url, urls: 0, error: error instanceof Error ? error.message : String(error) });
    }
  }
  result.urls = [...urls];
  return result;
}

/** gzip is recognised by its magic bytes, whatever the file is called or served as. */
function decode(body: Buffer, url: string): string {
  if (body[0] === 0x1f && body[1] === 0x8b) {
    try {
      return gunzipSync(body, { maxOutputLength: MAX_SITEMAP_BYTES }).toString('utf8');
    } catch (error) {
      throw new UpstreamFailed(`${url} is not a readable gzip sitemap: ${(error as Error).message}`);
    }
  }
  return body.toString('utf8');
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
