// Builds the scraping side and the external posts client of the main service from the configuration (the composition root).
import type { Config } from '../config.js';
import { createPostsClient, type PostsClient } from '../external-posts/posts-client.js';
import type { ProductStore } from '../products/product-store.js';
import type { LogStore } from '../scrape-logs/log-store.js';
import { assertPublicUrl, createGuardedLookup } from '../scraping/egress/address-guard.js';
import { createBrowserRenderer, findChromium, type BrowserRenderer } from '../scraping/browser/index.js';
import { createSafeFetcher } from '../scraping/egress/safe-fetch.js';
import { createExtractionPool, type PageExtractor } from '../scraping/extract/pool.js';
import { createScraper, type Scraper } from '../scraping/scrape-pipeline.js';
import type { PageFetcher } from '../scraping/types.js';

export interface Logger {
  warn(details: object, message?: string): void;
}

export interface Scraping {
  fetcher: PageFetcher;
  renderer: BrowserRenderer;
  scraper: Scraper;
  /** Page extraction for the job runner's crawl pages (the same thread pool). */
  extract: PageExtractor;
  close(): Promise<void>;
}

export function createScraping(
  config: Pick<Config, 'scrape' | 'scrapeAllowPrivateNetworks' | 'chromiumPath' | 'executableSearchPath' | 'demoSiteUrl'>,
  stores: { products: ProductStore; logs: LogStore },
  logger?: Logger,
): Scraping {
  const allowPrivate = config.scrapeAllowPrivateNetworks;
  const fetcher = createSafeFetcher(
    { ...config.scrape, allowPrivateNetworks: allowPrivate },
    logger ? { logger: { warn: (details, message) => logger.warn(details, message) } } : {},
  );
  const renderer = createBrowserRenderer({
    executablePath: findChromium(config.chromiumPath, config.executableSearchPath),
    // Every request the page makes passes the same address policy as static fetches.
    guardRequest: (url) => assertPublicUrl(url, allowPrivate).then(
      () => true,
      () => false,
    ),
    // ...and the proxy dials the very addresses it checked, so DNS cannot answer differently at connect time.
    connectLookup: createGuardedLookup({ allowPrivate }),
    // robots.txt and the size cap as static mode applies them, through the same fetcher's cache.
    assertRobotsAllow: (url, options) => fetcher.assertRobotsAllow(url, options),
    maxDocumentBytes: config.scrape.maxBodyBytes,
    userAgent: config.scrape.userAgent,
    maxConcurrentPages: config.scrape.globalConcurrency,
    ...(logger ? { logger } : {}),
  });
  const extraction = createExtractionPool({ threads: config.scrape.extractThreads });
  const scraper = createScraper({
    fetcher,
    renderer,
    extract: extraction.extract,
    products: stores.products,
    logs: stores.logs,
    demoSiteUrl: config.demoSiteUrl,
    allowPrivateNetworks: allowPrivate,
    defaultTimeoutMs: config.scrape.timeoutMs,
    maxConcurrent: config.scrape.globalConcurrency,
    maxQueued: config.scrape.globalConcurrency * 4,
    runDeadlineMs: config.scrape.runDeadlineMs,
  });
  return {
    fetcher,
    renderer,
    scraper,
    extract: extraction.extract,
    async close() {
      await Promise.allSettled([fetcher.close(), renderer.close(), extraction.close()]);
    },
  };
}

/** The cached client for the external posts API the configuration names. */
export function createExternalPosts(
  config: Pick<Config, 'externalPostsUrl' | 'externalPostsTimeoutMs' | 'externalPostsCacheTtlMs'>,
): PostsClient {
  return createPostsClient({
    url: config.externalPostsUrl,
    timeoutMs: config.externalPostsTimeoutMs,
    cacheTtlMs: config.externalPostsCacheTtlMs,
  });
}
