// Fetching pages and documents safely, as the interface its users receive: PageFetcher (safe-fetch.ts implements it).

export interface FetchedPage {
  /** Final URL after redirects. */
  url: string;
  status: number;
  contentType: string;
  html: string;
}

/** What a fetch did, step by step, for explain: filled by the fetcher when given. */
export interface FetchTrace {
  /** Each request made for the page: the first and every redirect hop. */
  hops: Array<{
    url: string;
    /** The address guard's verdict on the URL (its addresses are checked again at connect time). */
    guard: 'allowed' | 'trusted';
    robots: 'allowed' | 'disallowed' | 'not-checked';
    status?: number;
    location?: string;
    ms?: number;
  }>;
  /** robots.txt files consulted (cached ones included), with what they said. */
  robots: Array<{ url: string; outcome: 'rules' | 'none (4xx)' | 'unavailable'; status: number | null; cached: boolean }>;
  content_type?: string;
  /** Bytes of the body after decompression. */
  bytes?: number;
  /** The character encoding the page was decoded with, and where that came from. */
  charset?: string;
}

export interface FetchOptions {
  /** Per-page timeout; defaults to the fetcher's policy. */
  timeoutMs?: number;
  /** Filled with each step of the fetch, for explain. */
  trace?: FetchTrace;
  /**
   * Operator-configured URLs (DEMO_SITE_URL) are trusted: they skip the private-address guard.
   * User-supplied URLs never are.
   */
  trusted?: boolean;
  signal?: AbortSignal;
}

/** A fetched document that is not a page (a sitemap): its bytes as received, decompressed. */
export interface FetchedResource {
  url: string;
  status: number;
  contentType: string;
  body: Buffer;
}

export interface RobotsInfo {
  /** robots.txt's Crawl-delay for our user agent, seconds; null when it names none. */
  crawlDelaySeconds: number | null;
  /** The sitemaps robots.txt lists. */
  sitemaps: string[];
}

/** Fetches HTML pages safely. Throws BlockedTarget, UpstreamFailed or UpstreamTimeout (src/problems.ts). */
export interface PageFetcher {
  fetchPage(url: string, options?: FetchOptions): Promise<FetchedPage>;
  /**
   * Fetches another kind of document through the same guard, robots.txt, limits and timeout:
   * `types` are the media types accepted (e.g. XML and gzip for sitemaps).
   */
  fetchResource(url: string, options: FetchOptions & { types: readonly string[] }): Promise<FetchedResource>;
  /** What robots.txt of the URL's origin says beyond allow/disallow (fetched once, cached). */
  robots(url: string, options?: { trusted?: boolean }): Promise<RobotsInfo>;
  /**
   * Throws BlockedTarget when robots.txt disallows `url` for our user agent (and robots.txt is obeyed):
   * the check fetchPage makes for each hop, for pages loaded another way (the browser).
   */
  assertRobotsAllow(url: string, options?: { trusted?: boolean; signal?: AbortSignal }): Promise<void>;
  close(): Promise<void>;
}
