// Routes over articles: the list (JSON, CSV, NDJSON), one article, delete, and the feeds.
import { Readable } from 'node:stream';
import { Type } from 'typebox';
import type { FastifyRequest } from 'fastify';
import type { App } from '../http/base-app.js';
import { exportFormat, sendExport } from '../http/formats.js';
import { pageLinks } from '../http/paging.js';
import { NotFound } from '../problems.js';
import { buildFeed, FEED_MEDIA, type FeedFormat } from './article-feeds.js';
import { Article, ArticleDeleted, ArticleDetail, ArticleFeedQuery, ArticleId, ArticleListQuery } from './article-schema.js';
import type { ArticleStore } from './article-store.js';

/** Columns of an article export, in the order of the Article schema. */
const EXPORT_COLUMNS = Object.keys(Article.properties) as Array<keyof Article & string>;

/** Rows per database read of an unpaged list; a longer list is streamed batch by batch. */
const LIST_BATCH_ROWS = 500;

const notFound = (id: number) => new NotFound(`Article ${id} does not exist.`);

/** A CSV cell holds one value: lists (authors, tags) are joined, the way a spreadsheet reader expects. */
const forCsv = (article: Article) => ({ ...article, authors: article.authors.join('; '), tags: article.tags.join('; ') });

async function* withFirst<T>(first: T, rest: AsyncIterable<T> | undefined): AsyncGenerator<T> {
  yield first;
  if (rest !== undefined) yield* rest;
}

async function* mapBatches<T, U>(batches: AsyncIterable<T[]>, map: (row: T) => U): AsyncGenerator<U[]> {
  for await (const batch of batches) yield batch.map(map);
}

const FEEDS: ReadonlyArray<{ path: string; format: FeedFormat; name: string }> = [
  { path: '/articles/feed.xml', format: 'atom', name: 'an Atom 1.0 feed' },
  { path: '/articles/feed.rss', format: 'rss', name: 'an RSS 2.0 feed' },
  { path: '/articles/feed.json', format: 'json', name: 'a JSON Feed 1.1 feed' },
];

/** The origin the client reached this service at, for the absolute URLs a feed must carry. */
const originOf = (request: FastifyRequest) => `${request.protocol}://${request.host}`;

/** What a filtered feed holds, in words, for its title. */
function feedTitle(query: ArticleFeedQuery): string {
  const parts = [
    query.q === undefined ? null : `matching “${query.q}”`,
    query.site === undefined ? null : `from ${query.site}`,
    query.author === undefined ? null : `by ${query.author}`,
    query.language === undefined ? null : `in ${query.language}`,
    query.source_url === undefined ? null : `found from ${query.source_url}`,
    query.tag === undefined ? null : `tagged ${query.tag}`,
  ].filter((p) => p !== null);
  return parts.length === 0 ? 'Articles' : `Articles ${parts.join(', ')}`;
}

export interface ArticleRoutesDeps {
  store: ArticleStore;
}

export function articleRoutes(app: App, deps: ArticleRoutesDeps): void {
  const { store } = deps;
  app.get(
    '/articles',
    {
      schema: {
        tags: ['articles'],
        summary: 'List articles',
        description:
          'Newest first unless `sort` says otherwise (best matches first when `q` is given), all articles unless `limit`/`offset` page ' +
          'them. `X-Total-Count` gives the number matching the filters; `Link` (rel next/prev) appears when paged. An unpaged list ' +
          `longer than ${LIST_BATCH_ROWS} articles is streamed. \`Accept: text/csv\` or \`application/x-ndjson\` exports the same list ` +
          'in that format (CSV: authors and tags joined by "; ", cells a spreadsheet would run as formulas prefixed with an apostrophe).',
        querystring: ArticleListQuery,
        produces: ['application/json', 'text/csv', 'application/x-ndjson'],
        response: { 200: Type.Array(Article) },
      },
    },
    async (request, reply) => {
      const query = request.query;
      const format = exportFormat(request);
      if (query.limit !== undefined) {
        const { items, total } = await store.list(query);
        reply.header('x-total-count', total);
        const link = pageLinks('/articles', request.url, query.offset ?? 0, query.limit, total);
        if (link) reply.header('link', link);
        if (format === 'csv') return sendExport(reply, format, EXPORT_COLUMNS, [items.map(forCsv)], 'articles');
        if (format === 'ndjson') return sendExport(reply, format, EXPORT_COLUMNS, [items], 'articles');
        return items;
      }
      const { total, first, rest } = await store.listAll(query, LIST_BATCH_ROWS);
      reply.header('x-total-count', total);
      if (format === 'csv') return sendExport(reply, format, EXPORT_COLUMNS, mapBatches(withFirst(first, rest), forCsv), 'articles');
      if (format === 'ndjson') return sendExport(reply, format, EXPORT_COLUMNS, withFirst(first, rest), 'articles');
      if (rest === undefined) return first;
      // Longer than one batch: streamed (chunked), each article through the same compiled serializer.
      const serialize = reply.compileSerializationSchema(Article as unknown as Record<string, unknown>) as (article: Article) => string;
      async function* json(): AsyncGenerator<string> {
        yield `[${first.map(serialize).join(',')}`;
        for await (const batch of rest!) yield `,${batch.map(serialize).join(',')}`;
        yield ']';
      }
      return reply.type('application/json; charset=utf-8').send(Readable.from(json()) as unknown as Article[]);
    },
  );

  for (const feed of FEEDS) {
    app.get(
      feed.path,
      {
        schema: {
          tags: ['articles'],
          summary: `The articles as ${feed.name}`,
          description:
            'Newest first (by publication date; undated articles last), filterable like `GET /articles` (one site, one search...). ' +
            'Each entry links to the article and carries its summary, authors, dates, section and tags, and its sanitized text ' +
            'where it was read. The same feed is offered at /articles/feed.xml (Atom 1.0), /articles/feed.rss (RSS 2.0) and ' +
            '/articles/feed.json (JSON Feed 1.1).',
          querystring: ArticleFeedQuery,
          produces: [FEED_MEDIA[feed.format].split(';')[0]!],
          response: { 200: { description: `The articles as ${feed.name}`, type: 'string' } },
        },
      },
      async (request, reply) => {
        const { limit, ...filters } = request.query;
        const { items } = await store.list({ ...filters, limit, sort: '-published_at' }, { count: false });
        const origin = originOf(request);
        const queryAt = request.url.indexOf('?');
        const search = queryAt === -1 ? '' : request.url.slice(queryAt);
        const at = (path: string) => `${origin}${path}${search}`;
        // The dashboard's list shows the same filters, paged its own way.
        const filtersOnly = new URLSearchParams(search);
        filtersOnly.delete('limit');
        const body = await buildFeed(feed.format, items, {
          selfUrl: at(feed.path),
          alternates: { atom: at('/articles/feed.xml'), rss: at('/articles/feed.rss'), json: at('/articles/feed.json') },
          homeUrl: `${origin}/ui/articles${filtersOnly.size === 0 ? '' : `?${filtersOnly.toString()}`}`,
          title: feedTitle(request.query),
          description: 'Articles collected by the data aggregator, newest first.',
          now: new Date(),
        });
        return reply.type(FEED_MEDIA[feed.format]).send(body);
      },
    );
  }

  app.get(
    '/articles/:id',
    {
      schema: {
        tags: ['articles'],
        summary: 'Get one article, with the provenance of its values',
        description:
          '`provenance` says for each field which source of evidence it came from (json-ld, microdata, rdfa, opengraph, meta, ' +
          'visible, article-body for the text read from the page, article-list for a listing entry) and where on the page, plus ' +
          'the page URL and what the page was classified as.',
        params: ArticleId,
        response: { 200: ArticleDetail },
      },
    },
    async (request) => {
      const article = await store.get(request.params.id);
      if (!article) throw notFound(request.params.id);
      return article;
    },
  );

  app.delete(
    '/articles/:id',
    {
      schema: {
        tags: ['articles'],
        summary: 'Delete an article (and its revisions)',
        description: 'Its events stay in the feed, no longer pointing at it. A later scrape that finds it again stores it anew.',
        params: ArticleId,
        response: { 200: ArticleDeleted },
      },
    },
    async (request) => {
      const deleted = await store.delete(request.params.id);
      if (!deleted) throw notFound(request.params.id);
      return { id: request.params.id, deleted: true as const };
    },
  );
}
