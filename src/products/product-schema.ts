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

export const Product = Type.Object(
  {
    id: Type.Integer({ examples: [1] }),
    title: Type.String({ examples: ['A Light in the Attic'] }),
    price: Nullable(
      Type.Number({ description: 'Exact decimal. Null only for scraped articles that show no price.', examples: [51.77] }),
    ),
    currency: Nullable(Type.String({ examples: ['GBP'] })),
    description: Nullable(Type.String()),
    source_url: Nullable(Type.String()),
    created_at: Type.String({ format: 'date-time' }),
    updated_at: Type.String({ format: 'date-time' }),
  },
  { $id: 'Product' },
);
export type Product = Static<typeof Product>;

export const ProductCreate = Type.Object(
  {
    title: Title,
    price: Price,
    description: Type.Optional(Nullable(Description)),
    currency: Type.Optional(Nullable(Currency)),
    source_url: Type.Optional(Nullable(SourceUrl)),
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
    q: Type.Optional(Type.String({ minLength: 1, maxLength: 200, pattern: NO_NUL, description: 'Case-insensitive text in title or description' })),
    min_price: Type.Optional(Type.Number({ minimum: 0 })),
    max_price: Type.Optional(Type.Number({ minimum: 0 })),
    source_url: Type.Optional(Type.String({ maxLength: 2048, pattern: NO_NUL })),
    sort: Type.Optional(Type.Unsafe<Sort>({ type: 'string', enum: [...SORTS], default: 'id', description: 'Order; a leading - sorts descending' })),
  },
  { additionalProperties: false },
);
export type ProductListQuery = Static<typeof ProductListQuery>;

export const ProductDeleted = Type.Object({ id: Type.Integer(), deleted: Type.Literal(true) });
