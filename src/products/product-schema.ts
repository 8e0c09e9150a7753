// Product shapes: one TypeBox schema each for validation, serialisation and the OpenAPI document.
import { Type, type Static } from 'typebox';
import { NO_NUL, Nullable } from '../http/schemas.js';

// Not blank, and no NUL (see NO_NUL); the lookahead keeps the check linear on hostile input.
const Title = Type.String({ minLength: 1, maxLength: 500, pattern: '^(?![\\s\\S]*\\u0000)[\\s\\S]*?\\S', examples: ['A Light in the Attic'] });
// NUMERIC in the database; bounded so a typo cannot store 1e300.
const Price = Type.Number({ minimum: 0, maximum: 1e12, examples: [51.77] });
const Currency = Type.String({ pattern: '^[A-Z]{3}$', description: 'ISO 4217 code', examples: ['GBP'] });
const Description = Type.String({ maxLength: 20_000, pattern: NO_NUL, examples: ['A collection of poems.'] });
const SourceUrl = Type.String({ format: 'uri', pattern: '^https?://', maxLength: 2048, examples: ['https://books.toscrape.com/catalogue/a-light-in-the-attic_1000/index.html'] });
const ListPrice = Type.Number({ minimum: 0, maximum: 1e12, description: 'The regular ("was") price beside a sale price', examples: [64.99] });
export const AVAILABILITY_VALUES = ['in_stock', 'out_of_stock', 'preorder', 'backorder', 'limited', 'discontinued'] as const;
const Availability = Type.Unsafe<(typeof AVAILABILITY_VALUES)[number]>({ type: 'string', enum: [...AVAILABILITY_VALUES], examples: ['in_stock'] });
const Sku = Type.String({ minLength: 1, maxLength: 200, pattern: NO_NUL, examples: ['KT-2041-BLK'] });
const Gtin = Type.String({ pattern: '^(?:[0-9]{8}|[0-9]{12,14})$', description: 'GTIN-8/12/13/14 (EAN, UPC, ISBN-13)', examples: ['9780316769488'] });
const Brand = Type.String({ minLength: 1, maxLength: 200, pattern: NO_NUL, examples: ['Tom Dixon'] });
const ImageUrl = Type.String({ format: 'uri', pattern: '^https?://', maxLength: 2048, examples: ['https://books.toscrape.com/media/cache/2c/da/2cdad67c.jpg'] });

/** The fields beyond the spec's four, shared by create, update and the product itself. */
const DETAIL_FIELDS = {
  list_price: Type.Optional(Nullable(ListPrice)),
  availability: Type.Optional(Nullable(Availability)),
  sku: Type.Optional(Nullable(Sku)),
  gtin: Type.Optional(Nullable(Gtin)),
  brand: Type.Optional(Nullable(Brand)),
  image_url: Type.Optional(Nullable(ImageUrl)),
};

export const Product = Type.Object(
  {
    id: Type.Integer({ examples: [1] }),
    title: Type.String({ examples: ['A Light in the Attic'] }),
    price: Nullable(Type.Number({ description: 'Exact decimal. Null only for scraped articles that show no price.', examples: [51.77] })),
    currency: Nullable(Type.String({ examples: ['GBP'] })),
    description: Nullable(Type.String()),
    source_url: Nullable(Type.String()),
    list_price: Nullable(Type.Number({ description: 'The regular ("was") price beside a sale price', examples: [64.99] })),
    availability: Nullable(Type.Unsafe<(typeof AVAILABILITY_VALUES)[number]>({ type: 'string', enum: [...AVAILABILITY_VALUES] })),
    sku: Nullable(Type.String()),
    gtin: Nullable(Type.String()),
    brand: Nullable(Type.String()),
    image_url: Nullable(Type.String()),
    created_at: Type.String({ format: 'date-time' }),
    updated_at: Type.String({ format: 'date-time' }),
  },
  { $id: 'Product' },
);
export type Product = Static<typeof Product>;

const FieldSource = Type.Object(
  {
    source: Type.String({
      description: 'selectors, json-ld, microdata, rdfa, opengraph, meta, books-listing, visible, embedded-data, url, product-cards, article-list, or api',
      examples: ['json-ld'],
    }),
    locator: Type.String({ description: 'Where on the page: a JSON path, a CSS path, or a meta tag', examples: ['ld+json[0] $.offers.price'] }),
  },
  { additionalProperties: true },
);

export const Provenance = Type.Object(
  {
    page_url: Type.String({ description: 'The page the product was read from' }),
    page_type: Type.String({ description: 'What the page was classified as: product, listing, article, article-list', examples: ['product'] }),
    fields: Type.Record(Type.String(), FieldSource, { description: 'Per field: the source of evidence and where on the page' }),
  },
  { additionalProperties: true, description: 'Where each value of a scraped product came from; null for products made through the API.' },
);
export type Provenance = Static<typeof Provenance>;

/** One product with the provenance of its values, as GET /products/{id} answers. */
export const ProductDetail = Type.Object(
  {
    ...Product.properties,
    provenance: Nullable(Provenance),
    last_seen_at: Nullable(Type.String({ format: 'date-time', description: 'When a scrape last saw it; null for products made through the API and never scraped' })),
    gone_at: Nullable(Type.String({ format: 'date-time', description: 'When it was declared gone (missed GONE_AFTER_RUNS successful runs of its source); null while found' })),
    tags: Type.Array(Type.String(), { description: 'Its tags (watch lists), sorted' }),
  },
  { $id: 'ProductDetail' },
);
export type ProductDetail = Static<typeof ProductDetail>;

export const ProductCreate = Type.Object(
  {
    title: Title,
    price: Price,
    description: Type.Optional(Nullable(Description)),
    currency: Type.Optional(Nullable(Currency)),
    source_url: Type.Optional(Nullable(SourceUrl)),
    ...DETAIL_FIELDS,
  },
  {
    additionalProperties: false,
    examples: [{ title: 'A Light in the Attic', price: 51.77, currency: 'GBP', description: 'Poems.' }],
  },
);
export type ProductCreate = Static<typeof ProductCreate>;

export const ProductUpdate = Type.Object(
  {
    title: Type.Optional(Title),
    price: Type.Optional(Price),
    description: Type.Optional(Nullable(Description)),
    currency: Type.Optional(Nullable(Currency)),
    source_url: Type.Optional(Nullable(SourceUrl)),
    ...DETAIL_FIELDS,
  },
  {
    additionalProperties: false,
    minProperties: 1,
    description: 'Any subset of the fields (at least one); absent fields stay unchanged.',
    examples: [{ price: 45.5 }],
  },
);
export type ProductUpdate = Static<typeof ProductUpdate>;

export const ProductId = Type.Object({
  id: Type.Integer({ minimum: 1, maximum: 2_147_483_647, description: 'Positive integer', examples: [1] }),
});

export const SORTS = ['id', '-id', 'price', '-price', 'title', '-title', 'created_at', '-created_at'] as const;
export type Sort = (typeof SORTS)[number];

export const ProductListQuery = Type.Object(
  {
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000, description: 'Page size; all products when absent' })),
    offset: Type.Optional(Type.Integer({ minimum: 0, maximum: 2_147_483_647, default: 0 })),
    q: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 200,
        pattern: NO_NUL,
        description:
          'Case-insensitive text anywhere in the title or description (% and _ are literal). Without `sort`, best matches first: ' +
          'title equal to q, then starting with it, then a word of the title starting with it, then holding it anywhere, then only the description; ' +
          'shorter titles first within each, then id',
      }),
    ),
    min_price: Type.Optional(Type.Number({ minimum: 0 })),
    max_price: Type.Optional(Type.Number({ minimum: 0 })),
    source_url: Type.Optional(Type.String({ maxLength: 2048, pattern: NO_NUL })),
    currency: Type.Optional(Type.String({ pattern: '^[A-Z]{3}$', description: 'ISO 4217 code, exactly' })),
    source: Type.Optional(
      Type.String({ maxLength: 2048, pattern: NO_NUL, description: 'Products found by runs started from this URL (any spelling of it: compared in canonical form)' }),
    ),
    availability: Type.Optional(Availability),
    tag: Type.Optional(
      Type.String({ minLength: 1, maxLength: 200, pattern: NO_NUL, description: 'Only products carrying this tag (watch list); compared trimmed and lower-cased' }),
    ),
    changed_since: Type.Optional(Type.String({ format: 'date-time', description: 'Only products whose price, list price or availability changed at or after this time' })),
    price_dropped_since: Type.Optional(
      Type.String({
        format: 'date-time',
        description: 'Only products whose price now is lower than at this time (or than their first price, for products first seen later)',
      }),
    ),
    // No schema default: an absent sort means relevance when q is given, id otherwise.
    sort: Type.Optional(Type.Unsafe<Sort>({ type: 'string', enum: [...SORTS], description: 'Order; a leading - sorts descending. Default: id, or relevance when q is given' })),
  },
  { additionalProperties: false },
);
export type ProductListQuery = Static<typeof ProductListQuery>;

export const ProductDeleted = Type.Object({ id: Type.Integer(), deleted: Type.Literal(true) });
