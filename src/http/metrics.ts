// Prometheus metrics: one registry per app (so an app can be built twice), exposed at GET /metrics.
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { App } from './base-app.js';

export interface Metrics {
  registry: Registry;
  requests: Counter<'method' | 'route' | 'status'>;
  requestDuration: Histogram<'method' | 'route' | 'status'>;
  /** Scrape runs by mode and outcome, with their duration and products stored. */
  scrapeRuns: Counter<'mode' | 'outcome'>;
  scrapeDuration: Histogram<'mode' | 'outcome'>;
  scrapeProducts: Counter<'mode'>;
  /** Answers of 502/504 by route: scrape targets, the posts API or the main service failing. */
  upstreamErrors: Counter<'upstream' | 'status'>;
  /** Adds a gauge whose value is read when /metrics is scraped (pool sizes and the like). */
  gauge(name: string, help: string, read: () => Record<string, number>): void;
}

export function createMetrics(service: string): Metrics {
  const registry = new Registry();
  registry.setDefaultLabels({ service });
  collectDefaultMetrics({ register: registry });
  const registers = [registry];
  const labels = ['method', 'route', 'status'] as const;
  return {
    registry,
    requests: new Counter({ name: 'http_requests_total', help: 'HTTP requests answered', labelNames: labels, registers }),
    requestDuration: new Histogram({
      name: 'http_request_duration_seconds',
      help: 'Time to answer an HTTP request',
      labelNames: labels,
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
      registers,
    }),
    scrapeRuns: new Counter({ name: 'scrape_runs_total', help: 'Scrape runs', labelNames: ['mode', 'outcome'], registers }),
    scrapeDuration: new Histogram({
      name: 'scrape_duration_seconds',
      help: 'Duration of scrape runs',
      labelNames: ['mode', 'outcome'],
      buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120],
      registers,
    }),
    scrapeProducts: new Counter({ name: 'scrape_products_total', help: 'Products stored by scrapes', labelNames: ['mode'], registers }),
    upstreamErrors: new Counter({ name: 'upstream_errors_total', help: 'Failed upstream calls', labelNames: ['upstream', 'status'], registers }),
    gauge(name, help, read) {
      new Gauge({
        name,
        help,
        labelNames: ['kind'],
        registers,
        collect() {
          for (const [kind, value] of Object.entries(read())) this.set({ kind }, value);
        },
      });
    },
  };
}

/** Counts and times every request by route pattern (not raw URL, which would explode the label set). */
export function installMetrics(app: App, metrics: Metrics): void {
  // prom-client hashes a label object on every call; the children per label set are cached instead.
  const children = new Map<string, { count: { inc(): void }; time: { observe(v: number): void } }>();
  app.addHook('onResponse', (request, reply, done) => {
    const route = request.routeOptions.url ?? 'unmatched';
    const key = `${request.method} ${route} ${reply.statusCode}`;
    let child = children.get(key);
    if (child === undefined) {
      const labels = { method: request.method, route, status: String(reply.statusCode) };
      child = { count: metrics.requests.labels(labels), time: metrics.requestDuration.labels(labels) };
      children.set(key, child);
    }
    child.count.inc();
    child.time.observe(reply.elapsedTime / 1000);
    // 502/504 are, by contract, what an upstream failing or timing out turns into.
    if (reply.statusCode === 502 || reply.statusCode === 504) {
      metrics.upstreamErrors.inc({ upstream: route, status: String(reply.statusCode) });
    }
    done();
  });
  app.get('/metrics', { schema: { hide: true } }, async (_request, reply) => {
    reply.type(metrics.registry.contentType);
    return metrics.registry.metrics();
  });
}
