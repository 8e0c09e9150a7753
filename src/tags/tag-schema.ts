// Tag (watch list) shapes: a tag's name, the tag lists of products and sources; validation, serialisation and the OpenAPI document.
import { Type, type Static } from 'typebox';
import { NO_NUL } from '../http/schemas.js';
import { ValidationFailed } from '../problems.js';

/**
 * A tag as sent: at least one visible character, no comma or semicolon (they separate tags in a
 * query string and in a CSV cell), no control characters, no unpaired surrogate. Stored trimmed and lower-cased
 * (normalizeTag), so "Kitchen " and "kitchen" are one tag. The lookahead keeps the check linear.
 */
export const TagName = Type.String({
  minLength: 1,
  maxLength: 64,
  pattern: '^(?!\\s*$)[^,;\\u0000-\\u001f\\u007f\\ud800-\\udfff]*$',
  description: 'A tag (watch list): no comma or semicolon; stored trimmed and lower-cased',
  examples: ['espresso'],
});

export const tagList = (description = 'Tags, each stored trimmed and lower-cased') => Type.Array(TagName, { maxItems: 50, description });
export const TagList = tagList();

export const TagsBody = Type.Object({ tags: TagList }, { additionalProperties: false, examples: [{ tags: ['espresso', 'kitchen'] }] });
export type TagsBody = Static<typeof TagsBody>;

export const ProductTags = Type.Object({ product_id: Type.Integer(), tags: Type.Array(Type.String()) });
export const ArticleTags = Type.Object({
  article_id: Type.Integer(),
  tags: Type.Array(Type.String(), { description: "Its watch-list tags, sorted (not the page's own keywords, which are the article's `tags`)" }),
});

export const Tag = Type.Object(
  {
    name: Type.String({ examples: ['espresso'] }),
    products: Type.Integer({ description: 'Products carrying it' }),
    articles: Type.Integer({ description: 'Articles carrying it' }),
    sources: Type.Optional(
      Type.Array(Type.String(), {
        description: 'Source URLs whose runs give it to everything they collect; with API_KEY set, shown only to a request that carries the key (as /source-tags)',
      }),
    ),
    created_at: Type.String({ format: 'date-time' }),
  },
  { $id: 'Tag' },
);
export type Tag = Static<typeof Tag>;

// No U+0000, which PostgreSQL text cannot hold: such a name was a failed query (500), not a 422.
export const TagPath = Type.Object({ name: Type.String({ minLength: 1, maxLength: 200, pattern: NO_NUL, description: 'The tag (URL-encoded)' }) });
export const TaggedPath = Type.Object({ id: Type.Integer({ minimum: 1, maximum: 2_147_483_647 }), tag: Type.String({ minLength: 1, maxLength: 200, pattern: NO_NUL }) });

export const SourceTags = Type.Object(
  {
    source: Type.String({ description: 'The canonical URL runs start from' }),
    tags: Type.Array(Type.String()),
    updated_at: Type.String({ format: 'date-time' }),
  },
  { $id: 'SourceTags' },
);
export type SourceTags = Static<typeof SourceTags>;

export const SourceTagsBody = Type.Object(
  {
    source: Type.String({
      minLength: 1,
      maxLength: 2048,
      pattern: '^https?://',
      description: 'A URL runs start from (any spelling: stored canonical). Every scrape, job, crawl or schedule starting there tags what it collects',
    }),
    tags: TagList,
  },
  { additionalProperties: false, examples: [{ source: 'https://shop.example/espresso/', tags: ['espresso'] }] },
);

export const SourceQuery = Type.Object({ source: Type.String({ minLength: 1, maxLength: 2048, pattern: '^https?://' }) }, { additionalProperties: false });

export const TagPageQuery = Type.Object(
  { limit: Type.Integer({ minimum: 1, maximum: 500, default: 100 }), offset: Type.Integer({ minimum: 0, maximum: 2_147_483_647, default: 0 }) },
  { additionalProperties: false },
);

/** The stored form of a tag: NFC, trimmed, inner white space as one space, lower-cased. */
export function normalizeTag(name: string): string {
  return name.normalize('NFC').trim().replace(/\s+/g, ' ').toLowerCase();
}

/** Each tag once, normalised, in the order given. */
export function normalizeTags(names: readonly string[]): string[] {
  return [...new Set(names.map(normalizeTag).filter((name) => name !== ''))];
}

/** The names as stored; 422 naming the field for one that normalises to more than the column holds. */
export function checkedTags(names: readonly string[], path = '/body/tags'): string[] {
  const normalized = normalizeTags(names);
  const tooLong = normalized.findIndex((name) => [...name].length > 64);
  if (tooLong !== -1) throw new ValidationFailed([{ path: `${path}/${tooLong}`, message: 'is longer than 64 characters once lower-cased' }]);
  return normalized;
}
