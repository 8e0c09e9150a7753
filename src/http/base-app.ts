// The Fastify setup both services share: logging, limits, validation, problem errors and API docs.
import { randomUUID } from 'node:crypto';
import { isIP } from 'node:net';
import Fastify, { LogController, type FastifyReply, type FastifyRequest } from 'fastify';
import cors from '@fastify/cors';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { SerializerSelector } from '@fastify/fast-json-stringify-compiler';
import { Ajv, type Options as AjvOptions, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import type { Config } from '../config/config.js';
import { frameworkErrorHandler, installProblemHandling } from '../problems.js';
import { clientErrorHandler } from './client-errors.js';
import { redactRequestUrl } from '../redact.js';
import { serializeError, stdoutLogDestination } from './logging.js';
import { installMetrics, type Metrics } from './metrics.js';
import { hostName, installOriginGuard } from './origin-guard.js';
import { impliedProblems, problemResponses } from './schemas.js';

// ajv-formats ships CommonJS with a default export that TypeScript sees one level down.
const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;

export type { App } from './app-type.js';
import type { App } from './app-type.js';

/** How one service's HTTP server behaves (from the configuration's http, auth and logging groups). */
export interface ServerSettings {
  logLevel: string;
  bodyLimitBytes: number;
  requestTimeoutMs: number;
  /** Origins allowed by CORS ('*' for any); empty: no CORS headers at all. They may also send writes. */
  corsOrigins: string[];
  trustProxy?: boolean | number | string[];
  /** Host names the service answers to besides IP addresses and localhost (origin-guard.ts). */
  allowedHosts: string[];
}

/** A service's server settings from the configuration. */
export function serverSettings(config: Pick<Config, 'http' | 'auth' | 'logLevel' | 'auxiliary'>): ServerSettings {
  const { bodyLimitBytes, requestTimeoutMs, trustProxy, host } = config.http;
  // The names the operator gave the services are theirs: the listen address, where the auxiliary service finds the main one.
  const ownNames = [host, new URL(config.auxiliary.mainServiceUrl).hostname].map((name) => hostName(name)).filter((name) => isIP(name) === 0);
  return {
    logLevel: config.logLevel,
    bodyLimitBytes,
    requestTimeoutMs,
    trustProxy,
    corsOrigins: config.auth.corsOrigins,
    allowedHosts: [...new Set([...config.http.allowedHosts, ...ownNames])],
  };
}

export interface BaseAppOptions {
  title: string;
  description: string;
  version: string;
  config: ServerSettings;
  tags?: Array<{ name: string; description: string }>;
  metrics: Metrics;
  /** Documents the API-key schemes in OpenAPI, so /docs offers "Authorize". */
  apiKeyRequired?: boolean;
}

// Security headers, computed once (a per-request middleware rebuild cost a third of throughput).
// JSON answers may not be framed or run anything; Swagger UI under /docs loads only its own files,
// with its inline styles and data: images as the exceptions.
const COMMON_HEADERS = {
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'SAMEORIGIN',
  'referrer-policy': 'no-referrer',
  'cross-origin-opener-policy': 'same-origin',
  'cross-origin-resource-policy': 'same-origin',
};
const API_HEADERS = { ...COMMON_HEADERS, 'content-security-policy': "default-src 'none'; frame-ancestors 'none'" };
const DOCS_HEADERS = {
  ...COMMON_HEADERS,
  'content-security-policy': [
    "default-src 'self'",
    "script-src 'self'",
    "style-src 'self' 'unsafe-inline'",
    "img-src 'self' data:",
    "font-src 'self' data:",
    "connect-src 'self'",
    "object-src 'none'",
    "frame-ancestors 'none'",
    "base-uri 'self'",
    "form-action 'self'",
  ].join('; '),
};

const REQUEST_ID = /^[\w.:-]{1,128}$/;

/** One log line per request, written when the response is done. */
class OneLinePerRequest extends LogController {
  constructor() {
    super({ requestIdLogLabel: 'request_id' });
  }

  override incomingRequest(): void {}

  override requestCompleted(error: Error | null, request: FastifyRequest, reply: FastifyReply): void {
    // Building the line costs more than the disabled call itself; skip it when info is off.
    const infoOn = (reply.log as { isLevelEnabled?(level: string): boolean }).isLevelEnabled?.('info') ?? true;
    if (!error && !infoOn) return;
    const line = {
      method: request.method,
      url: redactRequestUrl(request.url),
      route: request.routeOptions.url,
      status: reply.statusCode,
      ms: Math.round(reply.elapsedTime * 10) / 10,
    };
    if (error) reply.log.error({ ...line, err: error }, 'request failed');
    else reply.log.info(line, 'request');
  }
}

function validatorFor(options: AjvOptions): Ajv {
  const ajv = new Ajv({ strict: false, allErrors: true, ...options });
  addFormats(ajv);
  return ajv;
}

/**
 * A route's validator, compiled on the route's first request instead of at start: compiling every
 * route's schemas took about 0.45 s of a 3 s start (see docs/performance.md, start-up). Fastify reads
 * `errors` after a `false`, so they are copied from the compiled function.
 */
function compiledOnFirstUse(compile: () => ValidateFunction): ValidateFunction {
  let compiled: ValidateFunction | undefined;
  const validate = ((data: unknown) => {
    compiled ??= compile();
    const valid = compiled(data);
    validate.errors = compiled.errors;
    return valid;
  }) as ValidateFunction;
  return validate;
}

/** Fastify's own response serializers (fast-json-stringify), each compiled on its first response: about 0.5 s at start otherwise. */
function serializersOnFirstUse(...args: Parameters<ReturnType<typeof SerializerSelector>>): ReturnType<ReturnType<typeof SerializerSelector>> {
  const build = SerializerSelector()(...args);
  return (route) => {
    let serialize: ((doc: unknown) => string) | undefined;
    return (doc) => {
      serialize ??= build(route);
      return serialize(doc);
    };
  };
}

export async function createBaseApp(options: BaseAppOptions): Promise<App> {
  const { config } = options;
  const app = Fastify({
    logger: {
      level: config.logLevel,
      // Requests are logged once, on response (below); keep the default serializers small.
      serializers: {
        req: (req) => ({ method: req.method, url: redactRequestUrl(req.url) }),
        // An error's message and stack may quote a target URL: never with its password.
        err: serializeError,
      },
      // Lines leave in batches of up to 4 KiB within 10 ms (see logging.ts): a write(2) per request
      // line cost ~17 % of GET /products/{id}'s CPU. Flushed at exit and on a crash.
      stream: stdoutLogDestination(),
    },
    logController: new OneLinePerRequest(),
    // Honour a caller's X-Request-Id when it looks sane, else make one.
    requestIdHeader: false,
    genReqId: (req) => {
      const incoming = req.headers['x-request-id'];
      return typeof incoming === 'string' && REQUEST_ID.test(incoming) ? incoming : randomUUID();
    },
    bodyLimit: config.bodyLimitBytes,
    // Fastify's defaults are "no timeout": a slow client could hold a socket forever.
    requestTimeout: config.requestTimeoutMs,
    connectionTimeout: config.requestTimeoutMs,
    keepAliveTimeout: 72_000,
    return503OnClosing: true,
    // Which proxies' X-Forwarded-For names the client (its address feeds rate limits and logs).
    // (A hop count is valid at run time, as Fastify documents; its types list only the other forms.)
    trustProxy: (config.trustProxy ?? false) as boolean | string | string[],
    // Fastify's default (100) answers a longer {id} with 414; the contract wants the schema's 422.
    routerOptions: { maxParamLength: 2048 },
    // Errors found before routing (a malformed percent-encoding) skip the hooks: they get the headers here.
    // Requests Node's parser refuses (a URL past its 16 KiB) get a problem too, not Fastify's own JSON.
    clientErrorHandler,
    frameworkErrors: (error, request, reply) => {
      reply.headers(API_HEADERS);
      reply.header('x-request-id', request.id);
      frameworkErrorHandler(error, request, reply);
    },
    ajv: { customOptions: { strict: false } },
    schemaController: { compilersFactory: { buildSerializer: serializersOnFirstUse } },
  }).withTypeProvider<TypeBoxTypeProvider>() as unknown as App;

  // Bodies are validated as sent (a string is not a number); query strings and paths arrive as text
  // and are coerced. Unknown body fields are errors, not silently dropped.
  const bodyAjv = validatorFor({ coerceTypes: false, removeAdditional: false, useDefaults: true });
  const textAjv = validatorFor({ coerceTypes: 'array', removeAdditional: false, useDefaults: true });
  app.setValidatorCompiler(({ schema, httpPart }) => compiledOnFirstUse(() => (httpPart === 'body' ? bodyAjv : textAjv).compile(schema)));

  // Callback-style hooks: no promise per request on the hot path.
  app.addHook('onRequest', (request, reply, done) => {
    reply.headers(request.url.startsWith('/docs') ? DOCS_HEADERS : API_HEADERS);
    reply.header('x-request-id', request.id);
    done();
  });

  installProblemHandling(app);
  installOriginGuard(app, { allowedHosts: config.allowedHosts, corsOrigins: config.corsOrigins });
  if (config.corsOrigins.length > 0) {
    await app.register(cors, {
      origin: config.corsOrigins.includes('*') ? true : config.corsOrigins,
      exposedHeaders: ['x-total-count', 'link', 'location', 'x-request-id', 'x-cache', 'retry-after'],
    });
  }
  installMetrics(app, options.metrics);
  // JSON only by default; a service that takes other types adds its parser explicitly (415 otherwise).
  app.removeContentTypeParser('text/plain');

  // Every documented route answers the problems its schema implies; a route lists only its others.
  app.addHook('onRoute', (route) => {
    const schema = route.schema as ({ hide?: boolean; response?: Record<string, unknown> } & Parameters<typeof impliedProblems>[0]) | undefined;
    if (schema === undefined || schema.hide === true) return;
    schema.response = { ...problemResponses(...impliedProblems(schema)), ...schema.response };
  });
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: { title: options.title, description: options.description, version: options.version },
      tags: options.tags,
      ...(options.apiKeyRequired
        ? {
            components: {
              securitySchemes: {
                bearer: { type: 'http', scheme: 'bearer', description: 'API_KEY as a Bearer token' },
                apiKey: { type: 'apiKey', in: 'header', name: 'X-API-Key' },
              },
            },
          }
        : {}),
    },
  });
  await app.register(swaggerUi, {
    routePrefix: '/docs',
    uiConfig: { docExpansion: 'list', deepLinking: true, tryItOutEnabled: true },
    staticCSP: false,
  });
  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger());
  return app;
}
