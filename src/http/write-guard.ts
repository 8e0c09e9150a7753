// Protection for mutating endpoints: an optional API key (constant-time compare) and rate limits.
import { createHash, timingSafeEqual } from 'node:crypto';
import rateLimit from '@fastify/rate-limit';
import type { FastifyRequest } from 'fastify';
import { HttpProblem, TooManyRequests } from '../problems.js';
import type { App } from './base-app.js';

export interface WriteGuardOptions {
  /** When set, writes need `Authorization: Bearer <key>` or `X-API-Key: <key>`. */
  apiKey: string | undefined;
  /** Requests per minute per client for each mutating route; 0 turns the limit off. */
  writesPerMinute: number;
  /** Routes with their own stricter limit (e.g. POST /scrape), requests per minute per client. */
  routeLimits?: Record<string, number>;
}

const WRITE_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

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
 * Call before adding routes: every POST/PUT/PATCH/DELETE route added afterwards gets the key check
 * and its rate limit; reads stay open and pay nothing.
 */
export async function guardWrites(app: App, options: WriteGuardOptions): Promise<void> {
  const expected = options.apiKey === undefined ? undefined : createHash('sha256').update(options.apiKey).digest();

  app.addHook('onRoute', (route) => {
    const methods = [route.method].flat();
    if (!methods.some((m) => WRITE_METHODS.has(m))) return;
    const perMinute = options.routeLimits?.[route.url] ?? options.writesPerMinute;
    if (perMinute > 0) {
      route.config = { ...(route.config as object), rateLimit: { max: perMinute, timeWindow: 60_000 } } as typeof route.config;
    }
    if (expected !== undefined) {
      const check = (request: FastifyRequest, _reply: unknown, done: (error?: Error) => void) => {
        const key = presentedKey(request);
        if (key === undefined) return done(new Unauthorized('This endpoint needs an API key: send Authorization: Bearer <key> or X-API-Key.'));
        if (!sameKey(key, expected)) return done(new Unauthorized('The API key is not valid.'));
        done();
      };
      route.onRequest = [check, ...[route.onRequest ?? []].flat()] as typeof route.onRequest;
      if (route.schema && !(route.schema as { hide?: boolean }).hide) {
        (route.schema as Record<string, unknown>).security = [{ bearer: [] }, { apiKey: [] }];
      }
    }
  });
  // After the hook above: the plugin's own onRoute hook must see the rateLimit config it sets.
  const limited = options.writesPerMinute > 0 || Object.keys(options.routeLimits ?? {}).length > 0;
  if (limited) {
    await app.register(rateLimit, {
      global: false,
      errorResponseBuilder: (_request, context) =>
        new TooManyRequests(
          `Rate limit of ${context.max} requests per minute exceeded; retry in ${context.after}.`,
          Math.max(1, Math.ceil(context.ttl / 1000)),
        ),
    });
  }
}
