// /tags, /products/{id}/tags, /articles/{id}/tags and /source-tags: watch lists on products and articles, and on the sources whose runs give them to what they collect.
import { type Static, Type } from 'typebox';
import type { FastifyRequest } from 'fastify';
import type { App } from '../http/base-app.js';
import { pagedAnswer } from '../http/paging.js';
import { problemResponses } from '../http/schemas.js';
import { NotFound, ValidationFailed } from '../problems.js';
import { canonicalUrl } from '../url-identity/url-key.js';
import { ArticleTags, checkedTags, normalizeTag, ProductTags, SourceQuery, SourceTags, SourceTagsBody, Tag, TagPageQuery, TaggedPath, TagPath, TagsBody } from './tag-schema.js';
import type { Tagged, TagStore } from './tag-store.js';

export interface TagRoutesDeps {
  tags: TagStore;
  /** Whether a product (or an article) exists (404 otherwise). */
  exists(kind: Tagged, id: number): Promise<boolean>;
}

const IdPath = Type.Object({ id: Type.Integer({ minimum: 1, maximum: 2_147_483_647, description: 'Positive integer' }) });
const SourceApplied = Type.Object({
  source: Type.String(),
  tags: Type.Array(Type.String()),
  applied: Type.Integer({ description: 'Products of this source tagged now (what its runs collected before)' }),
  applied_articles: Type.Integer({ description: 'Articles of this source tagged now' }),
});
const Deleted = Type.Object({ name: Type.String(), deleted: Type.Literal(true) });

/** The routes of one kind of tagged thing: /products/{id}/tags or /articles/{id}/tags. */
const KINDS = [
  { kind: 'product', path: '/products', noun: 'product', Noun: 'Product', idField: 'product_id', Answer: ProductTags },
  { kind: 'article', path: '/articles', noun: 'article', Noun: 'Article', idField: 'article_id', Answer: ArticleTags },
] as const;

function taggedRoutes(app: App, deps: TagRoutesDeps, { kind, path, noun, Noun, idField, Answer }: (typeof KINDS)[number]): void {
  const { tags } = deps;
  const answer = async (id: number) => ({ [idField]: id, tags: (await tags.of(kind, [id])).get(id) ?? [] }) as Static<typeof Answer>;
  const mustExist = async (id: number) => {
    if (!(await deps.exists(kind, id))) throw new NotFound(`${Noun} ${id} does not exist.`);
  };

  app.get(`${path}/:id/tags`, { schema: { tags: ['tags'], summary: `A ${noun}'s tags`, params: IdPath, response: { 200: Answer } } }, async (request) => {
    await mustExist(request.params.id);
    return answer(request.params.id);
  });

  app.put(
    `${path}/:id/tags`,
    {
      schema: {
        tags: ['tags'],
        summary: `Replace a ${noun}'s tags`,
        description: `The ${noun} carries exactly these tags afterwards (an empty list removes them all).`,
        params: IdPath,
        body: TagsBody,
        response: { 200: Answer },
      },
    },
    async (request) => {
      const names = checkedTags(request.body.tags);
      await mustExist(request.params.id);
      return { [idField]: request.params.id, tags: await tags.set(kind, request.params.id, names) } as Static<typeof Answer>;
    },
  );

  app.post(
    `${path}/:id/tags`,
    {
      schema: {
        tags: ['tags'],
        summary: `Add tags to a ${noun}`,
        params: IdPath,
        body: TagsBody,
        response: { 200: Answer },
      },
    },
    async (request) => {
      const names = checkedTags(request.body.tags);
      await mustExist(request.params.id);
      await tags.add(kind, [request.params.id], names);
      return answer(request.params.id);
    },
  );

  app.delete(
    `${path}/:id/tags/:tag`,
    {
      schema: {
        tags: ['tags'],
        summary: `Remove one tag from a ${noun}`,
        params: TaggedPath,
        response: { 200: Answer },
      },
    },
    async (request) => {
      const { id, tag } = request.params;
      await mustExist(id);
      if (!(await tags.remove(kind, id, normalizeTag(tag)))) throw new NotFound(`${Noun} ${id} does not carry the tag "${normalizeTag(tag)}".`);
      return answer(id);
    },
  );
}

/** A tag as `request` may see it: its sources (what is watched where) only for the operator, as /source-tags. */
function shownTo(request: FastifyRequest, tag: Tag): Tag {
  if (request.operator) return tag;
  const { sources: _sources, ...open } = tag;
  return open;
}

export function tagRoutes(app: App, deps: TagRoutesDeps): void {
  const { tags } = deps;

  app.get(
    '/tags',
    {
      schema: {
        tags: ['tags'],
        summary: 'List tags (watch lists), by name',
        description: 'Each tag with the number of products carrying it and the sources that give it. `GET /products?tag=` lists its products.',
        querystring: TagPageQuery,
        response: { 200: Type.Array(Tag) },
      },
    },
    async (request, reply) => {
      const page = await tags.list(request.query);
      return pagedAnswer(reply, '/tags', request, { ...page, items: page.items.map((tag) => shownTo(request, tag)) });
    },
  );

  app.get('/tags/:name', { schema: { tags: ['tags'], summary: 'One tag', params: TagPath, response: { 200: Tag } } }, async (request) => {
    const tag = await tags.get(normalizeTag(request.params.name));
    if (tag === undefined) throw new NotFound(`Tag "${normalizeTag(request.params.name)}" does not exist.`);
    return shownTo(request, tag);
  });

  app.delete(
    '/tags/:name',
    {
      schema: {
        tags: ['tags'],
        summary: 'Delete a tag from every product and source',
        description: 'Alert rules scoped to it stay (and match nothing until the tag is used again).',
        params: TagPath,
        response: { 200: Deleted },
      },
    },
    async (request) => {
      const name = normalizeTag(request.params.name);
      if (!(await tags.delete(name))) throw new NotFound(`Tag "${name}" does not exist.`);
      return { name, deleted: true as const };
    },
  );

  for (const kind of KINDS) taggedRoutes(app, deps, kind);

  app.get(
    '/source-tags',
    {
      schema: {
        tags: ['tags'],
        summary: 'Sources with tags: every run starting there tags what it collects',
        querystring: TagPageQuery,
        response: { 200: Type.Array(SourceTags) },
      },
    },
    async (request, reply) => {
      return pagedAnswer(reply, '/source-tags', request, await tags.sources(request.query));
    },
  );

  app.put(
    '/source-tags',
    {
      schema: {
        tags: ['tags'],
        summary: "Set a source URL's tags",
        description:
          'Every scrape, job, crawl or schedule that starts from this URL (in any spelling: compared canonical) gives these tags to ' +
          'each product it collects, and the products its runs collected before get them now (`applied`). An empty list removes the source.',
        body: SourceTagsBody,
        response: { 200: SourceApplied },
      },
    },
    async (request) => {
      const names = checkedTags(request.body.tags);
      const source = canonicalUrl(request.body.source);
      if (source === null) throw new ValidationFailed([{ path: '/body/source', message: 'is not an http(s) URL' }]);
      const set = await tags.setSource(source, names);
      return { source, ...set };
    },
  );

  app.delete(
    '/source-tags',
    {
      schema: {
        tags: ['tags'],
        summary: "Remove a source URL's tags (products keep the ones they got)",
        querystring: SourceQuery,
        response: { 200: SourceApplied, ...problemResponses(404) },
      },
    },
    async (request) => {
      const source = canonicalUrl(request.query.source) ?? request.query.source;
      if ((await tags.source(source)) === undefined) throw new NotFound(`No tags are set on the source ${source}.`);
      await tags.setSource(source, []);
      return { source, tags: [], applied: 0, applied_articles: 0 };
    },
  );
}
