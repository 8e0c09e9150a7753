// /tags, /products/{id}/tags and /source-tags: watch lists on products, and on the sources whose runs give them to what they collect.
import { Type } from 'typebox';
import type { App } from '../http/base-app.js';
import { pageLinks } from '../http/paging.js';
import { problemResponses } from '../http/schemas.js';
import { NotFound, ValidationFailed } from '../problems.js';
import { canonicalUrl } from '../url-identity/url-key.js';
import { checkedTags, normalizeTag, ProductTagPath, ProductTags, SourceQuery, SourceTags, SourceTagsBody, Tag, TagPageQuery, TagPath, TagsBody } from './tag-schema.js';
import type { TagStore } from './tag-store.js';

export interface TagRoutesDeps {
  tags: TagStore;
  /** Whether a product exists (404 otherwise). */
  productExists(id: number): Promise<boolean>;
}

const ProductPath = Type.Object({ id: Type.Integer({ minimum: 1, maximum: 2_147_483_647, description: 'Positive integer' }) });
const SourceApplied = Type.Object({
  source: Type.String(),
  tags: Type.Array(Type.String()),
  applied: Type.Integer({ description: 'Products of this source tagged now (what its runs collected before)' }),
});
const Deleted = Type.Object({ name: Type.String(), deleted: Type.Literal(true) });

export function tagRoutes(app: App, deps: TagRoutesDeps): void {
  const { tags } = deps;
  const productTags = async (id: number) => ({ product_id: id, tags: (await tags.ofProducts([id])).get(id) ?? [] });
  const mustExist = async (id: number) => {
    if (!(await deps.productExists(id))) throw new NotFound(`Product ${id} does not exist.`);
  };

  app.get(
    '/tags',
    {
      schema: {
        tags: ['tags'],
        summary: 'List tags (watch lists), by name',
        description: 'Each tag with the number of products carrying it and the sources that give it. `GET /products?tag=` lists its products.',
        querystring: TagPageQuery,
        response: { 200: Type.Array(Tag), ...problemResponses(422, 503) },
      },
    },
    async (request, reply) => {
      const { items, total } = await tags.list(request.query);
      reply.header('x-total-count', total);
      const link = pageLinks('/tags', request.url, request.query.offset, request.query.limit, total);
      if (link) reply.header('link', link);
      return items;
    },
  );

  app.get('/tags/:name', { schema: { tags: ['tags'], summary: 'One tag', params: TagPath, response: { 200: Tag, ...problemResponses(404, 422, 503) } } }, async (request) => {
    const tag = await tags.get(normalizeTag(request.params.name));
    if (tag === undefined) throw new NotFound(`Tag "${normalizeTag(request.params.name)}" does not exist.`);
    return tag;
  });

  app.delete(
    '/tags/:name',
    {
      schema: {
        tags: ['tags'],
        summary: 'Delete a tag from every product and source',
        description: 'Alert rules scoped to it stay (and match nothing until the tag is used again).',
        params: TagPath,
        response: { 200: Deleted, ...problemResponses(404, 422, 503) },
      },
    },
    async (request) => {
      const name = normalizeTag(request.params.name);
      if (!(await tags.delete(name))) throw new NotFound(`Tag "${name}" does not exist.`);
      return { name, deleted: true as const };
    },
  );

  app.get(
    '/products/:id/tags',
    { schema: { tags: ['tags'], summary: "A product's tags", params: ProductPath, response: { 200: ProductTags, ...problemResponses(404, 422, 503) } } },
    async (request) => {
      await mustExist(request.params.id);
      return productTags(request.params.id);
    },
  );

  app.put(
    '/products/:id/tags',
    {
      schema: {
        tags: ['tags'],
        summary: "Replace a product's tags",
        description: 'The product carries exactly these tags afterwards (an empty list removes them all).',
        params: ProductPath,
        body: TagsBody,
        response: { 200: ProductTags, ...problemResponses(400, 404, 415, 422, 503) },
      },
    },
    async (request) => {
      const names = checkedTags(request.body.tags);
      await mustExist(request.params.id);
      return { product_id: request.params.id, tags: await tags.setProduct(request.params.id, names) };
    },
  );

  app.post(
    '/products/:id/tags',
    {
      schema: {
        tags: ['tags'],
        summary: 'Add tags to a product',
        params: ProductPath,
        body: TagsBody,
        response: { 200: ProductTags, ...problemResponses(400, 404, 415, 422, 503) },
      },
    },
    async (request) => {
      const names = checkedTags(request.body.tags);
      await mustExist(request.params.id);
      await tags.addToProducts([request.params.id], names);
      return productTags(request.params.id);
    },
  );

  app.delete(
    '/products/:id/tags/:tag',
    {
      schema: {
        tags: ['tags'],
        summary: 'Remove one tag from a product',
        params: ProductTagPath,
        response: { 200: ProductTags, ...problemResponses(404, 422, 503) },
      },
    },
    async (request) => {
      const { id, tag } = request.params;
      await mustExist(id);
      if (!(await tags.removeFromProduct(id, normalizeTag(tag)))) throw new NotFound(`Product ${id} does not carry the tag "${normalizeTag(tag)}".`);
      return productTags(id);
    },
  );

  app.get(
    '/source-tags',
    {
      schema: {
        tags: ['tags'],
        summary: 'Sources with tags: every run starting there tags what it collects',
        querystring: TagPageQuery,
        response: { 200: Type.Array(SourceTags), ...problemResponses(422, 503) },
      },
    },
    async (request, reply) => {
      const { items, total } = await tags.sources(request.query);
      reply.header('x-total-count', total);
      const link = pageLinks('/source-tags', request.url, request.query.offset, request.query.limit, total);
      if (link) reply.header('link', link);
      return items;
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
        response: { 200: SourceApplied, ...problemResponses(400, 415, 422, 503) },
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
        response: { 200: SourceApplied, ...problemResponses(404, 422, 503) },
      },
    },
    async (request) => {
      const source = canonicalUrl(request.query.source) ?? request.query.source;
      if ((await tags.source(source)) === undefined) throw new NotFound(`No tags are set on the source ${source}.`);
      await tags.setSource(source, []);
      return { source, tags: [], applied: 0 };
    },
  );
}
