// The auxiliary service: text statistics and a proxy to the main service. Built from its dependencies.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import type { AuxiliarySettings } from '../config/config.js';
import { PostList } from '../external-posts/posts-routes.js';
import { createBaseApp, type App, type ServerSettings } from '../http/base-app.js';
import { createMetrics } from '../http/metrics.js';
import { collectEndpoints, packageVersion, timedCheck, welcomeRoute } from '../http/meta-routes.js';
import { problemResponses } from '../http/schemas.js';
import { ValidationFailed } from '../problems.js';
import { Product } from '../products/product-schema.js';
import { textStats } from '../text/text-stats.js';
import type { MainClient } from './main-client.js';

export interface AuxDeps {
  config: ServerSettings & Pick<AuxiliarySettings, 'mainServiceUrl' | 'proxyTimeoutMs'>;
  main: MainClient;
}

const NAME = 'data-aggregator-auxiliary';
const DESCRIPTION = "Companion of the data-aggregator main service: text statistics, and a proxy to the main service's products " + 'and external posts.';

/** The text endpoint's own limit, whatever the service-wide body limit is. */
const TEXT_LIMIT_BYTES = 1024 * 1024;
// /health must answer quickly even when the main service hangs.
const HEALTH_PROBE_MS = 2_000;

const TextRequest = Type.Object(
  { text: Type.String({ description: 'The text to analyse (any script).', examples: ['Hello world. Hello again!'] }) },
  { additionalProperties: false },
);

const TextStatsResponse = Type.Object(
  {
    word_count: Type.Integer({ examples: [4] }),
    character_count: Type.Integer({ description: 'Grapheme clusters: "é" and "😀" count 1.', examples: [25] }),
    character_count_no_spaces: Type.Integer({ examples: [22] }),
    line_count: Type.Integer({ examples: [1] }),
    sentence_count: Type.Integer({ examples: [2] }),
    paragraph_count: Type.Integer({ examples: [1] }),
    unique_word_count: Type.Integer({ examples: [3] }),
    average_word_length: Type.Number({ examples: [5] }),
    top_words: Type.Array(Type.Object({ word: Type.String(), count: Type.Integer() }), {
      examples: [
        [
          { word: 'hello', count: 2 },
          { word: 'world', count: 1 },
          { word: 'again', count: 1 },
        ],
      ],
    }),
    reading_time_seconds: Type.Number({ examples: [1.2] }),
  },
  { description: 'Words and sentences as Intl.Segmenter finds them; emoji and punctuation are not words.' },
);

const AuxHealth = Type.Object({
  status: Type.Union([Type.Literal('ok'), Type.Literal('degraded')], {
    description: '"degraded" when the main service is down; this service itself still answers.',
  }),
  main_service: Type.Object({
    url: Type.String({ examples: ['http://127.0.0.1:8000'] }),
    status: Type.Union([Type.Literal('up'), Type.Literal('down')]),
    latency_ms: Type.Number({ examples: [1.7] }),
    detail: Type.Optional(Type.String()),
  }),
});

const ProductIdParam = Type.Object({
  id: Type.String({ description: 'Passed to the main service as is; it answers 422 for anything but a positive integer.', examples: ['1'] }),
});

// Headers of the main service's answer that mean something to the caller; hop-by-hop ones never pass.
const PRODUCT_HEADERS = ['content-type', 'x-total-count', 'link', 'retry-after'];
const POST_HEADERS = ['content-type', 'x-total-count', 'link', 'x-cache', 'age', 'warning', 'retry-after'];

export async function buildAuxApp(deps: AuxDeps): Promise<App> {
  const version = packageVersion();
  const app = await createBaseApp({
    metrics: createMetrics('auxiliary'),
    config: deps.config,
    title: 'Data aggregator: auxiliary service',
    description: DESCRIPTION,
    version,
    tags: [
      { name: 'meta', description: 'Welcome and health' },
      { name: 'text', description: 'Text statistics' },
      { name: 'proxy', description: "The main service's data, relayed" },
    ],
  });
  // Only this service takes plain text (POST /process/text); the base app accepts JSON alone.
  app.addContentTypeParser('text/plain', { parseAs: 'string' }, (_request, body, done) => done(null, body));

  const endpoints = collectEndpoints(app);
  welcomeRoute(app, { name: NAME, version, description: DESCRIPTION }, endpoints);

  app.get(
    '/health',
    {
      schema: {
        tags: ['meta'],
        summary: 'Health of this service and whether the main service answers',
        description: 'Always 200 while this service runs; `status` is "degraded" when the main service is down.',
        response: { 200: AuxHealth },
      },
    },
    async () => {
      const probeMs = Math.min(HEALTH_PROBE_MS, deps.config.proxyTimeoutMs);
      const check = await timedCheck('main', () => deps.main.ping(probeMs), probeMs + 100);
      const up = check.status === 'up';
      return {
        status: up ? ('ok' as const) : ('degraded' as const),
        main_service: {
          url: deps.config.mainServiceUrl,
          status: up ? ('up' as const) : ('down' as const),
          latency_ms: check.latency_ms,
          ...(check.detail === undefined ? {} : { detail: check.detail }),
        },
      };
    },
  );

  app.post(
    '/process/text',
    {
      bodyLimit: TEXT_LIMIT_BYTES,
      schema: {
        tags: ['text'],
        summary: 'Statistics of a text: words, characters, lines, sentences, paragraphs, top words',
        description:
          'Send `{"text": "..."}` as JSON or the text itself as `text/plain`, up to 1 MiB (413 beyond). ' +
          'Characters are grapheme clusters; words and sentences follow Intl.Segmenter, so Japanese works too.',
        body: {
          content: {
            'application/json': { schema: TextRequest },
            'text/plain': { schema: Type.String({ examples: ['Hello world. Hello again!'] }) },
          },
        },
        response: { 200: TextStatsResponse, ...problemResponses(400, 413, 415, 422) },
      },
    },
    // The body is validated per content type above: a string for text/plain, `{text}` for JSON. A
    // request with no body (and so no content type) is validated by neither.
    async (request) => {
      const body = request.body as string | { text: string } | undefined;
      if (body === undefined) throw new ValidationFailed([{ path: '/body/text', message: 'is required: send {"text": "..."} as JSON, or the text as text/plain' }]);
      return textStats(typeof body === 'string' ? body : body.text);
    },
  );

  const proxyNote =
    ' The query string goes to the main service unchanged and its answer comes back as is: status, body ' +
    '(problem+json included) and paging headers. 502 when the main service is unreachable, 504 when it is slow.';

  app.get(
    '/proxy/products',
    {
      schema: {
        tags: ['proxy'],
        summary: "The main service's GET /products, relayed",
        description:
          "Takes the query parameters of the main service's `GET /products` (`limit`, `offset`, `q`, `min_price`, " +
          '`max_price`, `source_url`, `sort`); the main service validates them. `Link` targets are rewritten to ' +
          'this endpoint so next/prev work here.' +
          proxyNote,
        response: { 200: Type.Array(Product), ...problemResponses(422, 502, 504) },
      },
    },
    (request, reply) => relay(request, reply, '/products', PRODUCT_HEADERS, '/proxy/products'),
  );

  app.get(
    '/proxy/products/:id',
    {
      schema: {
        tags: ['proxy'],
        summary: "The main service's GET /products/{id}, relayed",
        description: `One product, or the main service's 404/422 problem.${proxyNote}`,
        params: ProductIdParam,
        response: { 200: Product, ...problemResponses(502, 504) },
      },
    },
    (request, reply) => relay(request, reply, `/products/${encodeURIComponent(request.params.id)}`, PRODUCT_HEADERS),
  );

  app.get(
    '/proxy/external-posts',
    {
      schema: {
        tags: ['proxy'],
        summary: "The main service's GET /external/posts, relayed",
        description:
          "Takes the query parameters of the main service's `GET /external/posts` (`limit`, `userId`, `_page`...). " +
          '`X-Cache`, `Age` and `Warning` (stale copy) pass through too.' +
          proxyNote,
        response: { 200: PostList, ...problemResponses(422, 502, 504) },
      },
    },
    (request, reply) => relay(request, reply, '/external/posts', POST_HEADERS),
  );

  /**
   * Forwards the request to `path` on the main service and sends its answer back byte for byte.
   * With `linkBase`, relative Link targets on `path` are rewritten to it, so a caller can follow them here.
   */
  async function relay(request: FastifyRequest, reply: FastifyReply, path: string, headers: string[], linkBase?: string) {
    const answer = await deps.main.get(path, rawQuery(request.url), { requestId: request.id });
    reply.code(answer.status);
    for (const name of headers) {
      const value = answer.headers[name];
      if (value === undefined) continue;
      reply.header(name, name === 'link' && linkBase ? rewriteLinks(value, path, linkBase) : value);
    }
    // A Buffer skips the response serializer: the main service's JSON is sent exactly as it made it.
    return reply.send(answer.body);
  }

  return app;
}

/** The query string exactly as the client sent it, without the `?`. */
function rawQuery(url: string): string {
  const at = url.indexOf('?');
  return at === -1 ? '' : url.slice(at + 1);
}

function rewriteLinks(value: string | string[], from: string, to: string): string | string[] {
  const rewrite = (link: string) => link.replaceAll(`<${from}?`, `<${to}?`).replaceAll(`<${from}>`, `<${to}>`);
  return Array.isArray(value) ? value.map(rewrite) : rewrite(value);
}
