// Which URLs a whole-site crawl may visit: its strategy, include/exclude globs, depth and page budget. Pure.
import { getDomain } from 'tldts';
import { compileGlobs } from './crawl-glob.js';
import type { CrawlOptions } from './job-schema.js';

/** The longest path and query a crawl follows. */
export const MAX_MATCHED_LENGTH = 2048;

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
  const include = compileGlobs(options.include);
  const exclude = compileGlobs(options.exclude);
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
      // A crawl has no use for a path longer than this, and every glob check costs its length.
      if (parsed.pathname.length + parsed.search.length > MAX_MATCHED_LENGTH) return false;
      const host = parsed.hostname.toLowerCase();
      // same-host is the start's origin: scheme, host and port (another port is another server, with
      // its own robots.txt). same-domain takes any subdomain and either scheme, on the same port
      // (URL.port is empty for a scheme's default port, so http and https sites compare equal).
      const sameSite = strategy === 'same-domain' ? (host === startDomain || host.endsWith(`.${startDomain}`)) && parsed.port === start.port : parsed.origin === start.origin;
      if (!sameSite) return false;
      // Globs see the path with its query, so "/search?q=*" can be excluded, and the path alone.
      const path = decodeSafely(parsed.pathname);
      const target = path + parsed.search;
      const matches = (glob: (text: string) => boolean) => glob(target) || (parsed.search !== '' && glob(path));
      if (include !== null && !matches(include)) return false;
      if (exclude !== null && matches(exclude)) return false;
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
