// The main service: products, scraping, scrape logs, external posts, docs. Built from its dependencies.
import { Type } from 'typebox';
import { alertRoutes } from '../alerts/rules/alert-routes.js';
import { channelRoutes } from '../alerts/channels/channel-routes.js';
import { articleRoutes } from '../articles/article-routes.js';
import type { Context } from '../context.js';
import { postsRoutes } from '../external-posts/posts-routes.js';
import { guardAccess } from '../http/access-guard.js';
import { createBaseApp, serverSettings, type App } from '../http/base-app.js';
import { Check, type CheckResult, collectEndpoints, healthSchema, packageVersion, timedCheck, welcomeRoute } from '../http/meta-routes.js';
import { createMetrics } from '../http/metrics.js';
import { createStreamLimiter } from '../http/sse.js';
import { jobRoutes } from '../jobs/job-routes.js';
import { watchListRoutes } from '../jobs/watch-list-routes.js';
import { ServiceUnavailable } from '../problems.js';
import { productRoutes } from '../products/product-routes.js';
import { logRoutes } from '../scrape-logs/log-routes.js';
import { siteRuleRoutes } from '../site-rules/site-rule-routes.js';
import { tagRoutes } from '../tags/tag-routes.js';
import type { PageRenderer } from '../scraping/browser/page-renderer.js';
import { scrapeRoutes } from '../scraping/scrape-routes.js';
import { revisionRoutes } from '../tracking/revision-routes.js';
import { trackingRoutes } from '../tracking/tracking-routes.js';
import { webhookRoutes } from '../tracking/webhook-routes.js';
import { uiRoutes } from '../ui/ui-routes.js';
import type { Readiness } from '../http/readiness.js';

/** What the main service's routes need: the process's context (context.ts), and how far its start-up is. */
export type MainDeps = Pick<Context, 'config' | 'db' | 'logs' | 'products' | 'articles' | 'tags' | 'siteRules' | 'alerts' | 'recorder' | 'tracking' | 'jobs' | 'posts'> & {
  scraping: Pick<Context['scraping'], 'scraper'> & { renderer: Pick<PageRenderer, 'status'> };
  /** Start-up still waiting for the database or the queue: routes that need them answer 503 meanwhile. */
  readiness?: Readiness;
};

/** Routes that work before the database does: they say what is happening. */
const ALWAYS_OPEN = /^\/(?:$|health$|docs|openapi\.json$|metrics$|ui(?:$|\/))/;

const NAME = 'data-aggregator';
const DESCRIPTION =
  'Scrapes product and article data from web pages, keeps products and articles in PostgreSQL and scrape logs in a document store, ' +
  'offers CRUD over products, search and feeds over articles, and relays a placeholder posts API.';

const MainHealth = healthSchema(Type.Object({ relational: Check, document: Check, browser: Check, jobs: Check }));

export async function buildMainApp(deps: MainDeps): Promise<App> {
  const version = packageVersion();
  const metrics = createMetrics('main');
  const app = await createBaseApp({
    metrics,
    config: serverSettings(deps.config),
    apiKeyRequired: deps.config.auth.apiKey !== undefined,
    title: 'Data aggregator: main service',
    description: DESCRIPTION,
    version,
    tags: [
      { name: 'meta', description: 'Welcome and health' },
      { name: 'products', description: 'Products in the relational store' },
      { name: 'articles', description: 'Articles: stored, searched in their own language, revised, and served as Atom, RSS and JSON feeds' },
      { name: 'scraping', description: 'Scrape runs and their log documents' },
      { name: 'jobs', description: 'Asynchronous scrapes and whole-site crawls, run by any number of workers' },
      { name: 'schedules', description: 'Recurring jobs (cron or every N minutes)' },
      { name: 'tracking', description: 'Price history and change events: paged, exported, or live' },
      { name: 'webhooks', description: 'Change events delivered to your URL, signed (Standard Webhooks)' },
      { name: 'tags', description: 'Tags (watch lists) on products and sources, and the import of a list of URLs to watch' },
      { name: 'alerts', description: 'Alert rules, notification channels (e-mail, ntfy, Slack, Discord, Telegram, Teams, Gotify, webhooks) and the alert history' },
      { name: 'site-rules', description: 'Rules a user pins for a site: per-field CSS selectors or JSON paths and a page type, used by every scrape, crawl and explain of it' },
      { name: 'external', description: 'The placeholder posts API, cached' },
    ],
  });
  const endpoints = collectEndpoints(app);
  const { auth } = deps.config;
  await guardAccess(app, {
    apiKey: auth.apiKey,
    keyForAllReads: auth.apiKeyReads,
    writesPerMinute: auth.rateLimitWritesPerMinute,
    routeLimits: { '/scrape': auth.rateLimitScrapePerMinute, '/scrape/explain': auth.rateLimitScrapePerMinute },
  });
  if ('poolStats' in deps.db) {
    const db = deps.db as MainDeps['db'] & { poolStats(): Record<string, number> };
    metrics.gauge('db_pool_connections', 'PostgreSQL pool connections by state', () => ({ ...db.poolStats() }));
  }

  const readiness = deps.readiness;
  if (readiness !== undefined) {
    app.addHook('onRequest', async (request) => {
      if (readiness.ready() || ALWAYS_OPEN.test(request.url.split('?')[0] ?? '')) return;
      throw new ServiceUnavailable(`The service is starting: ${readiness.detail()}. See /health.`, { retryAfterSeconds: 2 });
    });
  }

  welcomeRoute(app, { name: NAME, version, description: DESCRIPTION, dashboard: '/ui' }, endpoints);

  app.get(
    '/health',
    {
      schema: {
        tags: ['meta'],
        summary: 'Health of the service and its stores (503 when a store is down)',
        response: { 200: MainHealth, 503: MainHealth },
      },
    },
    async (_request, reply) => {
      const [relational, document, browser] = await Promise.all([
        timedCheck(deps.db.backend, () => deps.db.query('SELECT 1')),
        timedCheck(deps.logs.backend, () => deps.logs.ping()),
        browserCheck(deps.scraping.renderer),
      ]);
      const jobs: CheckResult = {
        status: readiness === undefined || readiness.ready() ? 'up' : 'unavailable',
        backend: 'pg-boss',
        latency_ms: 0,
        detail: readiness === undefined || readiness.ready() ? 'schema migrated, queue started' : readiness.detail(),
      };
      // The browser is optional (only dynamic mode needs it), so its absence does not degrade health.
      const ok = relational.status === 'up' && document.status === 'up' && jobs.status === 'up';
      return reply.code(ok ? 200 : 503).send({ status: ok ? 'ok' : 'degraded', checks: { relational, document, browser, jobs } });
    },
  );

  productRoutes(app, { store: deps.products, writes: deps.recorder });
  articleRoutes(app, { store: deps.articles });
  revisionRoutes(app, { revisions: deps.tracking.revisions });
  siteRuleRoutes(app, { rules: deps.siteRules });
  tagRoutes(app, {
    tags: deps.tags,
    exists: async (kind, id) => (kind === 'product' ? await deps.products.get(id) : await deps.articles.get(id)) !== undefined,
  });
  alertRoutes(app, { rules: deps.alerts.rules, service: deps.alerts.ruleService, digests: deps.alerts.digests });
  channelRoutes(app, { service: deps.alerts.channelService });
  const streams = createStreamLimiter(deps.config.http.streams);
  trackingRoutes(app, { tracker: deps.tracking.tracker, feed: deps.tracking.feed, streams });
  webhookRoutes(app, { webhooks: deps.tracking.webhooks, deliveries: deps.tracking.deliveries, allowPrivateNetworks: deps.config.scrape.allowPrivateNetworks });
  scrapeRoutes(app, { scraper: deps.scraping.scraper, metrics, asyncScrapes: deps.jobs.service });
  jobRoutes(app, { ...deps.jobs, streams });
  watchListRoutes(app, {
    db: deps.db,
    service: deps.jobs.service,
    schedules: deps.jobs.schedules,
    allowPrivateNetworks: deps.config.scrape.allowPrivateNetworks,
    schedulesMax: deps.config.jobs.schedulesMax,
  });
  logRoutes(app, { logs: deps.logs });
  postsRoutes(app, { posts: deps.posts });
  await uiRoutes(app, {});
  return app;
}

async function browserCheck(renderer: Pick<PageRenderer, 'status'>): Promise<CheckResult> {
  const started = performance.now();
  const { available, detail } = await renderer.status();
  return {
    status: available ? 'up' : 'unavailable',
    backend: 'chromium',
    latency_ms: Math.round((performance.now() - started) * 100) / 100,
    detail,
  };
}
