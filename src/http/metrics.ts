// Prometheus metrics: one registry per app (so an app can be built twice), exposed at GET /metrics.
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { App } from './app-type.js';

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
  type Child = { count: { inc(): void }; time: { observe(v: number): void } };
  // prom-client hashes a label object on every call, so the children are looked up once per route,
  // method and status and kept; each route's recorder knows its own pattern.
  const recorder = (route: string) => {
    const children = new Map<string, Child>();
    return (method: string, status: number, seconds: number): void => {
      const key = method + status;
      let child = children.get(key);
      if (child === undefined) {
        const labels = { method, route, status: String(status) };
        child = { count: metrics.requests.labels(labels), time: metrics.requestDuration.labels(labels) };
        children.set(key, child);
      }
      child.count.inc();
      child.time.observe(seconds);
      // 502/504 are, by contract, what an upstream failing or timing out turns into.
      if (status === 502 || status === 504) metrics.upstreamErrors.inc({ upstream: route, status: String(status) });
    };
  };
  app.addHook('onRoute', (route) => {
    const record = recorder(route.url);
    const hook = (request: FastifyRequest, reply: FastifyReply, done: () => void): void => {
      record(request.method, reply.statusCode, reply.elapsedTime / 1000);
      done();
    };
    route.onResponse = [...[route.onResponse ?? []].flat(), hook] as typeof route.onResponse;
  });
  // Requests no route matched (the router's 404s) never reach a route's hooks.
  const unmatched = recorder('unmatched');
  app.addHook('onResponse', (request, reply, done) => {
    if (request.is404) unmatched(request.method, reply.statusCode, reply.elapsedTime / 1000);
    done();
  });
  app.get('/metrics', { schema: { hide: true } }, async (_request, reply) => {
    reply.type(metrics.registry.contentType);
    return metrics.registry.metrics();
  });
}
