// Builds the scraping side and the external posts client of the main service from the configuration (the composition root).
import type { Config } from '../config.js';
import { createPostsClient, type PostsClient } from '../external-posts/posts-client.js';
import type { ProductStore } from '../products/product-store.js';
import type { LogStore } from '../scrape-logs/log-store.js';
import { assertPublicUrl, createGuardedLookup } from '../scraping/address-guard.js';
import { createBrowserRenderer, findChromium, type BrowserRenderer } from '../scraping/browser.js';
import { createSafeFetcher } from '../scraping/safe-fetch.js';
import { createScraper, type Scraper } from '../scraping/scrape-pipeline.js';
import type { PageFetcher } from '../scraping/types.js';

export interface Logger {
  warn(details: object, message?: string): void;
}

export interface Scraping {
  fetcher: PageFetcher;
  renderer: BrowserRenderer;
  scraper: Scraper;
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
    userAgent: config.scrape.userAgent,
    maxConcurrentPages: config.scrape.globalConcurrency,
    ...(logger ? { logger } : {}),
  });
  const scraper = createScraper({
    fetcher,
    renderer,
    products: stores.products,
    logs: stores.logs,
    demoSiteUrl: config.demoSiteUrl,
    allowPrivateNetworks: allowPrivate,
    defaultTimeoutMs: config.scrape.timeoutMs,
    maxConcurrent: config.scrape.globalConcurrency,
    maxQueued: config.scrape.globalConcurrency * 4,
  });
  return {
    fetcher,
    renderer,
    scraper,
    async close() {
      await Promise.allSettled([fetcher.close(), renderer.close()]);
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
