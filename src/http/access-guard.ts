// Who may do what: an optional API key (constant-time compare) for writes and for reads that expose operations, and rate limits.
import { createHash, timingSafeEqual } from 'node:crypto';
import rateLimit from '@fastify/rate-limit';
import type { FastifyRequest } from 'fastify';
import { HttpProblem, TooManyRequests } from '../problems.js';
import type { App } from './base-app.js';

export interface AccessGuardOptions {
  /** When set, writes and operational reads need `Authorization: Bearer <key>` or `X-API-Key: <key>`. */
  apiKey: string | undefined;
  /** With a key: every read needs it too, except the always-open routes (API_KEY_READS). */
  keyForAllReads: boolean;
  /** Requests per minute per client for each mutating route; 0 turns the limit off. */
  writesPerMinute: number;
  /** Routes with their own stricter limit (e.g. POST /scrape), requests per minute per client. */
  routeLimits?: Record<string, number>;
}

declare module 'fastify' {
  interface FastifyRequest {
    /**
     * Whether the request may see how the service is operated (no API_KEY is set, or it carries the
     * key): an open read leaves out what the operational reads guard (a tag's sources, say).
     */
    operator: boolean;
  }
}

const WRITE_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/**
 * Reads that show how the service is operated rather than what it collected: scrape logs (request
 * bodies, URLs), metrics, jobs and schedules (their requests), webhooks (target URLs, filters), alert
 * channels, rules and history (where messages go, what is watched), source tags; and
 * the live event stream, a connection held open (GET /events, the same events paged, stays open).
 */
const OPERATIONAL_READS = /^\/(?:scrape-logs|metrics|jobs|schedules|webhooks|events\/stream|channels|alert-rules|alerts|source-tags)(?:\/|$)/;

/** Open whatever the configuration: health checks, the API's description, the dashboard's own files. */
const ALWAYS_OPEN = /^\/(?:$|health$|docs(?:\/|$)|openapi\.json$|ui(?:\/|$))/;

/** Whether a request to `route` (the route's pattern, e.g. /jobs/:id) with `method` needs the key. */
export function needsKey(method: string, route: string, keyForAllReads: boolean): boolean {
  if (method === 'OPTIONS') return false; // CORS preflights carry no credentials
  if (WRITE_METHODS.has(method)) return true;
  if (OPERATIONAL_READS.test(route)) return true;
  return keyForAllReads && !ALWAYS_OPEN.test(route);
}

export class Unauthorized extends HttpProblem {
  constructor(detail: string) {
    super(401, 'unauthorized', 'Unauthorized', detail, { headers: { 'www-authenticate': 'Bearer' } });
  }
}

/** Hashing first makes both sides the same length, so the comparison time says nothing about the key. */
function sameKey(given: string, expected: Buffer): boolean {
  return timingSafeEqual(createHash('sha256').update(given).digest(), expected);
}

function presentedKey(request: FastifyRequest): string | undefined {
  const header = request.headers['x-api-key'];
  if (typeof header === 'string') return header;
  const auth = request.headers.authorization;
  if (typeof auth === 'string' && /^Bearer\s+/i.test(auth)) return auth.replace(/^Bearer\s+/i, '');
  return undefined;
}

/**
 * Call before adding routes. With a key, one check runs before every request that needs it (routes
 * added before this call too, such as /metrics); without one, requests pay nothing. Every mutating
 * route added afterwards gets its rate limit, and documented routes that need the key say so in OpenAPI.
 */
export async function guardAccess(app: App, options: AccessGuardOptions): Promise<void> {
  const expected = options.apiKey === undefined ? undefined : createHash('sha256').update(options.apiKey).digest();
  // Without a key everyone is the operator; with one, whoever presents it.
  app.decorateRequest('operator', expected === undefined);
  if (expected !== undefined) {
    app.addHook('onRequest', (request, _reply, done) => {
      const key = presentedKey(request);
      request.operator = key !== undefined && sameKey(key, expected);
      // The matched route's pattern; an unknown path falls back to the URL (and then 404s if allowed through).
      const route = request.routeOptions.url ?? request.url.split('?')[0] ?? '';
      if (!needsKey(request.method, route, options.keyForAllReads)) return done();
      if (key === undefined) return done(new Unauthorized('This endpoint needs the API key: send Authorization: Bearer <key> or X-API-Key.'));
      if (!request.operator) return done(new Unauthorized('The API key is not valid.'));
      done();
    });
  }

  app.addHook('onRoute', (route) => {
    const methods = [route.method].flat();
    if (methods.some((m) => WRITE_METHODS.has(m))) {
      const perMinute = options.routeLimits?.[route.url] ?? options.writesPerMinute;
      if (perMinute > 0) {
        route.config = { ...(route.config as object), rateLimit: { max: perMinute, timeWindow: 60_000 } } as typeof route.config;
      }
    }
    const documented = route.schema && !(route.schema as { hide?: boolean }).hide;
    if (expected !== undefined && documented && methods.some((m) => needsKey(m, route.url, options.keyForAllReads))) {
      (route.schema as Record<string, unknown>).security = [{ bearer: [] }, { apiKey: [] }];
    }
  });
  // After the hook above: the plugin's own onRoute hook must see the rateLimit config it sets.
  const limited = options.writesPerMinute > 0 || Object.keys(options.routeLimits ?? {}).length > 0;
  if (limited) {
    await app.register(rateLimit, {
      global: false,
      errorResponseBuilder: (_request, context) =>
        new TooManyRequests(`Rate limit of ${context.max} requests per minute exceeded; retry in ${context.after}.`, Math.max(1, Math.ceil(context.ttl / 1000))),
    });
  }
}
