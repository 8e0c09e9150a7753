// Which URLs a whole-site crawl may visit: its strategy, include/exclude globs, depth and page budget. Pure.
import picomatch from 'picomatch';
import { getDomain } from 'tldts';
import type { CrawlOptions } from './job-schema.js';

export interface CrawlPolicy {
  maxPages: number;
  maxDepth: number;
  /** False for the `listed` strategy: only the start URL and the sitemap's pages. */
  followLinks: boolean;
  useSitemap: boolean;
  /** Whether a URL belongs to this crawl (host/domain, globs); depth is checked by the caller. */
  accepts(url: string): boolean;
}

export const CRAWL_DEFAULTS = { strategy: 'same-host', max_pages: 100, max_depth: 5, sitemap: false } as const;

export function crawlPolicy(startUrl: string, options: CrawlOptions): CrawlPolicy {
  const start = new URL(startUrl);
  const strategy = options.strategy ?? CRAWL_DEFAULTS.strategy;
  const startHost = start.hostname.toLowerCase();
  // The registrable domain ("example.co.uk" for "shop.example.co.uk"), from the public suffix list.
  const startDomain = getDomain(startHost) ?? startHost;
  const glob = (patterns: readonly string[] | undefined) => (patterns === undefined || patterns.length === 0 ? null : picomatch(patterns as string[], { dot: true }));
  const include = glob(options.include);
  const exclude = glob(options.exclude);
  return {
    maxPages: options.max_pages ?? CRAWL_DEFAULTS.max_pages,
    maxDepth: options.max_depth ?? CRAWL_DEFAULTS.max_depth,
    followLinks: strategy !== 'listed',
    useSitemap: options.sitemap ?? (strategy === 'listed' ? true : CRAWL_DEFAULTS.sitemap),
    accepts(url) {
      let parsed: URL;
      try {
        parsed = new URL(url);
      } catch {
        return false;
      }
      if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') return false;
      const host = parsed.hostname.toLowerCase();
      const sameSite = strategy === 'same-domain' ? host === startDomain || host.endsWith(`.${startDomain}`) : host === startHost;
      if (!sameSite) return false;
      // Globs see the path with its query, so "/search?q=*" can be excluded.
      const target = decodeSafely(parsed.pathname) + parsed.search;
      if (include !== null && !include(target) && !include(decodeSafely(parsed.pathname))) return false;
      if (exclude !== null && (exclude(target) || exclude(decodeSafely(parsed.pathname)))) return false;
      return true;
    },
  };
}

function decodeSafely(path: string): string {
  try {
    return decodeURI(path);
  } catch {
    return path;
  }
}
