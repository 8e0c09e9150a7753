// The composition root: every store, port and use case of one process, built once from the configuration (main service, worker, db:init, tests).
import { fileURLToPath } from 'node:url';
import { createAlertSystem, type AlertSystem } from './alerts/alert-system.js';
import type { Config } from './config/config.js';
import { openDatabase } from './db/database.js';
import { migrate, type MigrationReport } from './db/migrate.js';
import type { Database } from './db/queryable.js';
import { assertPublicUrl, createGuardedLookup } from './egress/address-guard.js';
import type { PageFetcher } from './egress/page-fetcher.js';
import { createSafeFetcher } from './egress/safe-fetch.js';
import { createPostsClient, type PostsClient } from './external-posts/posts-client.js';
import { createJobSystem, type JobSystem } from './jobs/job-system.js';
import { createArticleStore, type ArticleStore } from './articles/article-store.js';
import { createProductStore, type ProductStore } from './products/product-store.js';
import { createPgBossQueue, type QueueTiming } from './queue/pgboss-queue.js';
import type { Queue } from './queue/queue.js';
import { createArticleRecorder } from './recording/article-recorder.js';
import { createTrackingSystem, type TrackingSystem } from './tracking/tracking-system.js';
import { createProductRecorder, type ProductRecorder } from './recording/product-recorder.js';
import { createRunWriter, type RunWriter } from './recording/run-writer.js';
import { createJsonbLogStore } from './scrape-logs/jsonb-log-store.js';
import { createSiteRuleStore, type SiteRuleStore } from './site-rules/site-rule-store.js';
import { createTagStore, type TagStore } from './tags/tag-store.js';
import { interruptDeadRuns, type LogStore } from './scrape-logs/log-store.js';
import { createBrowserRenderer, findChromium, type BrowserRenderer } from './scraping/browser/index.js';
import { createExtractionPool, type PageExtractor } from './scraping/extract/pool.js';
import { withSiteRules } from './scraping/process-page.js';
import { createPageLoader, type PageLoader } from './scraping/page-loader.js';
import { createScraper, type Scraper } from './scraping/scrape-run.js';

/**
 * The script that makes a new embedded database's files (the migrations and the queue's schema) in a
 * child process: TypeScript under tsx (tests, development), JavaScript from dist/.
 */
export const TEMPLATE_MAKER = fileURLToPath(new URL(import.meta.url.endsWith('.ts') ? './tools/make-pglite-template.ts' : './tools/make-pglite-template.js', import.meta.url));

export interface Logger {
  info(details: object, message: string): void;
  warn(details: object, message: string): void;
  error(details: object, message: string): void;
}

export interface ContextOptions {
  logger?: Logger;
  /** An open database to build on (tests), closed by its owner; otherwise the configured one, opened here. */
  db?: Database;
  /** A log store to use instead of the configured one (tests). */
  logs?: LogStore;
  /** Queue timing knobs (tests: a dead worker's messages come back, a schedule fires, a retry waits, faster). */
  queueTiming?: QueueTiming;
}

export interface Context {
  config: Config;
  db: Database;
  logs: LogStore;
  queue: Queue;
  products: ProductStore;
  articles: ArticleStore;
  tags: TagStore;
  /** Rules users pinned per site (site-rules/), read by the page pipeline's extraction. */
  siteRules: SiteRuleStore;
  /** Alert rules, channels, firings and their delivery (alerts/). */
  alerts: AlertSystem;
  tracking: TrackingSystem;
  /** The write path of products (recording/product-recorder.ts). */
  recorder: ProductRecorder;
  /** The one door for a run's writes (recording/run-writer.ts): products and articles in one transaction, published after it. */
  writer: RunWriter;
  scraping: { fetcher: PageFetcher; renderer: BrowserRenderer; loader: PageLoader; extract: PageExtractor; scraper: Scraper };
  jobs: JobSystem;
  posts: PostsClient;
  /** `npm run db:init` and every start: migrates the schema, initialises the log store, ends the runs a dead process left. */
  prepare(): Promise<{ migrations: MigrationReport; logInit: string; interrupted: number }>;
  /** Starts the queue; with `work`, this process also runs jobs, crawl pages, schedules, webhook and alert deliveries and digests. */
  start(work: boolean): Promise<void>;
  /** Shutdown: stops taking work; scrapes and handlers running get `graceMs`, then are stopped (and retried elsewhere). */
  drain(graceMs: number): Promise<void>;
  /** Releases everything this context opened. */
  close(): Promise<void>;
}

/**
 * Builds the context without touching a PostgreSQL server yet (its pool connects on first use), so a
 * service can start and answer /health while the server is still down. PGlite opens its files.
 */
export async function createContext(config: Config, options: ContextOptions = {}): Promise<Context> {
  const { logger } = options;
  const db =
    options.db ??
    (await openDatabase(
      { ...config.database, queueSchema: config.jobs.queueSchema, templateMaker: TEMPLATE_MAKER },
      { onError: (err) => logger?.warn({ err }, 'database connection lost') },
    ));
  const logs = options.logs ?? (await openLogStore(config, db));
  const { scrape } = config;
  const queue = createPgBossQueue({ db, schema: config.jobs.queueSchema, ...(logger ? { logger } : {}), ...options.queueTiming });

  // Tracking: history and events, webhooks and their deliveries, word to live streams.
  const tracking = createTrackingSystem({
    db,
    queue,
    settings: {
      ...config.tracking,
      allowPrivateNetworks: scrape.allowPrivateNetworks,
      userAgent: scrape.userAgent,
      concurrency: Math.max(2, Math.ceil(config.jobs.workerConcurrency / 2)),
    },
    ...(logger ? { logger } : {}),
  });
  const { tracker, webhooks, deliveries, live, revisions, sender } = tracking;
  const products = createProductStore(db);
  const tags = createTagStore(db);
  const alerts = createAlertSystem({
    db,
    queue,
    webhooks: sender,
    webhookExists: async (id) => (await webhooks.get(id)) !== undefined,
    settings: {
      allowPrivateNetworks: scrape.allowPrivateNetworks,
      retryDelaysMs: config.alerts.retryDelaysMs,
      timeoutMs: config.alerts.timeoutMs,
      rulesMax: config.alerts.rulesMax,
      channelsPerTarget: config.alerts.channelsPerTarget,
      userAgent: scrape.userAgent,
      dashboardUrl: config.alerts.publicUrl,
      concurrency: Math.max(2, Math.ceil(config.jobs.workerConcurrency / 2)),
    },
    ...(logger ? { logger } : {}),
  });
  const recorder = createProductRecorder({ db, products, tracker, deliveries, tags, alerts: alerts.evaluator, live });
  const articles = createArticleStore(db);
  const articleRecorder = createArticleRecorder({ articles, revisions, tracker, deliveries, tags });
  const writer = createRunWriter({ db, products: recorder, articles: articleRecorder, live });

  // Scraping: safe fetching, the browser, extraction threads, and the page pipeline over them.
  const fetcher = createSafeFetcher(scrape, logger ? { logger } : {});
  const renderer = createBrowserRenderer({
    executablePath: findChromium(config.browser.chromiumPath, config.browser.executableSearchPath),
    // Every request the page makes passes the same address policy as static fetches...
    guardRequest: (url) =>
      assertPublicUrl(url, scrape.allowPrivateNetworks).then(
        () => true,
        () => false,
      ),
    // ...and the proxy dials the very addresses it checked, so DNS cannot answer differently at connect time.
    connectLookup: createGuardedLookup({ allowPrivate: scrape.allowPrivateNetworks }),
    // robots.txt and the size cap as static mode applies them, through the same fetcher's cache.
    assertRobotsAllow: (url, robotsOptions) => fetcher.assertRobotsAllow(url, robotsOptions),
    maxDocumentBytes: scrape.maxBodyBytes,
    userAgent: scrape.userAgent,
    maxConcurrentPages: scrape.globalConcurrency,
    ...(logger ? { logger } : {}),
  });
  const siteRules = createSiteRuleStore(db);
  const extraction = createExtractionPool({ threads: scrape.extractThreads });
  // The page pipeline's one extraction step: the thread pool, with the rule pinned for each page's host.
  const extract = withSiteRules(extraction.extract, async (host) => {
    const rule = await siteRules.forHost(host);
    return rule === undefined ? undefined : { id: rule.id, host_pattern: rule.host_pattern, fields: rule.fields, page_type: rule.page_type };
  });
  const loader = createPageLoader({ fetcher, renderer, defaultTimeoutMs: scrape.timeoutMs });
  const scraper = createScraper({
    db,
    loader,
    extract,
    writer,
    logs,
    demoSiteUrl: scrape.demoSiteUrl,
    allowPrivateNetworks: scrape.allowPrivateNetworks,
    maxConcurrent: scrape.globalConcurrency,
    maxQueued: scrape.globalConcurrency * 4,
    runDeadlineMs: scrape.runDeadlineMs,
    defaultTimeoutMs: scrape.timeoutMs,
  });
  const jobs = createJobSystem({
    db,
    queue,
    logs,
    scraper,
    loader,
    extract,
    fetcher,
    writer,
    settings: {
      demoSiteUrl: scrape.demoSiteUrl,
      allowPrivateNetworks: scrape.allowPrivateNetworks,
      defaultTimeoutMs: scrape.timeoutMs,
      runDeadlineMs: scrape.runDeadlineMs,
      workerConcurrency: config.jobs.workerConcurrency,
      schedulesMax: config.jobs.schedulesMax,
      autothrottle: config.jobs.autothrottle,
    },
    ...(logger ? { logger } : {}),
  });
  const posts = createPostsClient(config.posts);

  return {
    config,
    db,
    logs,
    queue,
    products,
    articles,
    tags,
    siteRules,
    alerts,
    tracking,
    recorder,
    writer,
    scraping: { fetcher, renderer, loader, extract, scraper },
    jobs,
    posts,
    async prepare() {
      const migrations = await migrate(db);
      const logInit = await logs.init();
      // Runs a dead process left running get their end: failed, interrupted.
      const interrupted = await interruptDeadRuns(logs, { singleProcess: db.backend === 'pglite', runDeadlineMs: scrape.runDeadlineMs });
      return { migrations, logInit, interrupted };
    },
    async start(work) {
      await queue.start();
      if (!work) return;
      await jobs.work();
      await tracking.work();
      await alerts.work();
    },
    async drain(graceMs) {
      jobs.stop();
      await Promise.all([scraper.drain(graceMs), queue.stop(graceMs)]);
    },
    async close() {
      await Promise.allSettled([fetcher.close(), renderer.close(), extraction.close(), posts.close(), tracking.close(), alerts.close()]);
      if (options.logs === undefined) await logs.close();
      if (options.db === undefined) await db.close();
    },
  };
}

async function openLogStore(config: Config, db: Database): Promise<LogStore> {
  if (config.database.mongodbUrl === undefined) return createJsonbLogStore(db);
  const { createMongoLogStore } = await import('./scrape-logs/mongo-log-store.js');
  return createMongoLogStore(config.database.mongodbUrl);
}
