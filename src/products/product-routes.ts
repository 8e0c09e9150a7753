// CRUD routes over products.
import { Readable } from 'node:stream';
import { Type } from 'typebox';
import type { App } from '../http/base-app.js';
import { exportFormat, sendExport } from '../http/formats.js';
import { pageLinks } from '../http/paging.js';
import { NotFound } from '../problems.js';
import { Product, ProductCreate, ProductDeleted, ProductDetail, ProductId, ProductListQuery, ProductUpdate } from './product-schema.js';
import { JSON_PART_ROWS } from './product-list-sql.js';
import type { ProductStore } from './product-store.js';

/** Columns of a product export, in the order of the Product schema. */
const EXPORT_COLUMNS = Object.keys(Product.properties) as Array<keyof Product & string>;

const notFound = (id: number) => new NotFound(`Product ${id} does not exist.`);

/** Rows per database read of an unpaged list; a longer list is streamed batch by batch. */
export const LIST_BATCH_ROWS = 1000;

/** A JSON array written batch by batch: only one batch is in memory at a time. */
async function* jsonArray(first: Product[], rest: AsyncIterable<Product[]>, serialize: (product: Product) => string): AsyncGenerator<string> {
  yield `[${first.map(serialize).join(',')}`;
  for await (const batch of rest) yield `,${batch.map(serialize).join(',')}`;
  yield ']';
}

async function* withFirst<T>(first: T, rest: AsyncIterable<T> | undefined): AsyncGenerator<T> {
  yield first;
  if (rest !== undefined) yield* rest;
}

/** Writes that are more than a row: the use case that also records history and events (recording/product-recorder.ts). */
export interface ProductWrites {
  create(input: ProductCreate): Promise<Product>;
  update(id: number, patch: ProductUpdate): Promise<Product | undefined>;
}

export interface ProductRoutesDeps {
  store: ProductStore;
  /** Creates and changes go through the write path (history and events with them). */
  writes: ProductWrites;
}

export function productRoutes(app: App, deps: ProductRoutesDeps): void {
  const { store, writes } = deps;
  app.get(
    '/products',
    {
      schema: {
        tags: ['products'],
        summary: 'List products',
        description:
          'All products in id order unless `limit`/`offset` page them. `X-Total-Count` gives the number ' +
          'matching the filters; `Link` (rel next/prev) appears when paged. An unpaged list longer than ' +
          `${LIST_BATCH_ROWS} products is streamed (chunked), read from the database ${LIST_BATCH_ROWS} at a time; ` +
          `a page of more than ${JSON_PART_ROWS} is sent chunked too, ${JSON_PART_ROWS} products at a time. ` +
          '`Accept: text/csv` or `application/x-ndjson` exports the same list in that format, streamed the same way.',
        querystring: ProductListQuery,
        produces: ['application/json', 'text/csv', 'application/x-ndjson'],
        response: {
          200: Type.Array(Product),
        },
      },
    },
    async (request, reply) => {
      const query = request.query;
      const format = exportFormat(request);
      if (format !== 'json') {
        if (query.limit !== undefined) {
          const { items, total } = await store.list(query);
          reply.header('x-total-count', total);
          return sendExport(reply, format, EXPORT_COLUMNS, [items], 'products');
        }
        const { total, first, rest } = await store.listAll(query, LIST_BATCH_ROWS);
        reply.header('x-total-count', total);
        return sendExport(reply, format, EXPORT_COLUMNS, withFirst(first, rest), 'products');
      }
      if (query.limit === undefined) {
        const { total, first, rest } = await store.listAll(query, LIST_BATCH_ROWS);
        reply.header('x-total-count', total);
        if (rest === undefined) return first;
        // Longer than one batch: streamed (chunked), each product through the same compiled serializer.
        const serialize = reply.compileSerializationSchema(Product as unknown as Record<string, unknown>) as (product: Product) => string;
        const body = Readable.from(jsonArray(first, rest, serialize));
        // The typed reply expects the schema's array; a stream is sent as is, past the serializer.
        return reply.type('application/json; charset=utf-8').send(body as unknown as Product[]);
      }
      // A page: its JSON text comes from the database (the Product schema's fields, in order), in parts.
      const { parts, total } = await store.listJson(query);
      reply.header('x-total-count', total);
      const link = pageLinks('/products', request.url, query.offset ?? 0, query.limit, total);
      if (link) reply.header('link', link);
      // A string or stream with a JSON content type is sent as it is, past the serializer. A page of
      // several parts goes out part by part (chunked): joined into one string it was copied once more.
      const body = parts.length <= 1 ? `[${parts[0] ?? ''}]` : Readable.from(['[', ...parts.flatMap((part, i) => (i === 0 ? [part] : [',', part])), ']']);
      return reply.type('application/json; charset=utf-8').send(body as unknown as Product[]);
    },
  );

  app.get(
    '/products/:id',
    {
      schema: {
        tags: ['products'],
        summary: 'Get one product, with the provenance of its values',
        description:
          'For a scraped product, `provenance` says for each field which source of evidence it came from (json-ld, ' +
          'microdata, rdfa, opengraph, meta, visible, ...) and where on the page (a JSON path, CSS path or meta tag), ' +
          'plus the page URL and what the page was classified as. Values changed through the API say `api`. ' +
          'Null for products created through the API. `tags` are its tags (watch lists; see /products/{id}/tags).',
        params: ProductId,
        response: { 200: ProductDetail },
      },
    },
    async (request) => {
      const product = await store.get(request.params.id);
      if (!product) throw notFound(request.params.id);
      return product;
    },
  );

  app.post(
    '/products',
    {
      schema: {
        tags: ['products'],
        summary: 'Create a product',
        body: ProductCreate,
        response: { 201: Product },
      },
    },
    async (request, reply) => {
      const product = await writes.create(request.body);
      return reply.code(201).header('location', `/products/${product.id}`).send(product);
    },
  );

  for (const method of ['put', 'patch'] as const) {
    app[method](
      '/products/:id',
      {
        schema: {
          tags: ['products'],
          summary: method === 'put' ? 'Update a product (partial or full)' : 'Update some fields of a product',
          description: 'Send any subset of the fields, at least one; absent fields stay unchanged. PUT and PATCH behave the same.',
          params: ProductId,
          body: ProductUpdate,
          response: { 200: Product },
        },
      },
      async (request) => {
        const product = await writes.update(request.params.id, request.body);
        if (!product) throw notFound(request.params.id);
        return product;
      },
    );
  }

  app.delete(
    '/products/:id',
    {
      schema: {
        tags: ['products'],
        summary: 'Delete a product',
        params: ProductId,
        response: { 200: ProductDeleted },
      },
    },
    async (request) => {
      const deleted = await store.delete(request.params.id);
      if (!deleted) throw notFound(request.params.id);
      return { id: request.params.id, deleted: true as const };
    },
  );
}
