// Article shapes: one TypeBox schema each for validation, serialisation and the OpenAPI document.
import { Type, type Static } from 'typebox';
import { NO_NUL, Nullable } from '../http/schemas.js';

const Time = Type.String({ format: 'date-time', examples: ['2026-11-23T07:00:00.000Z'] });
const StatedTime = (what: string) =>
  Nullable(
    Type.String({
      description: `${what}, as the page states it: ISO 8601 with the page's own offset, a local time when it gives none, or a bare date when it gives only the day`,
      examples: ['2024-03-05T09:30:00+00:00'],
    }),
  );

export const Article = Type.Object(
  {
    id: Type.Integer({ examples: [1] }),
    url: Type.String({ description: 'The canonical URL of the article (its identity: a re-scrape updates it)', examples: ['https://news.example/uk/harbour-wall-collapse'] }),
    title: Type.String({ examples: ['Harbour wall collapses after storm'] }),
    body: Nullable(Type.String({ description: 'The main text, plain, paragraphs separated by a blank line; null for a listing entry whose page was not read yet' })),
    body_html: Nullable(Type.String({ description: 'The same main content as sanitized HTML: no script, style, event handlers or unsafe URLs' })),
    description: Nullable(Type.String()),
    authors: Type.Array(Type.String(), { examples: [['Jane Doe']] }),
    published_at: StatedTime('When it was published'),
    modified_at: StatedTime('When it was last changed'),
    language: Nullable(Type.String({ description: 'BCP 47 language tag', examples: ['en-GB'] })),
    site_name: Nullable(Type.String({ examples: ['Example News'] })),
    image_url: Nullable(Type.String()),
    section: Nullable(Type.String({ examples: ['UK'] })),
    tags: Type.Array(Type.String()),
    word_count: Nullable(Type.Integer({ description: 'Words of the body (as POST /process/text counts them); null without a body' })),
    source_url: Nullable(Type.String({ description: 'Where the scrape or crawl that stored it started' })),
    created_at: Time,
    updated_at: Time,
  },
  { $id: 'Article' },
);
export type Article = Static<typeof Article>;

const FieldSource = Type.Object(
  {
    source: Type.String({ description: 'json-ld, microdata, rdfa, opengraph, meta, visible, article-body or article-list', examples: ['json-ld'] }),
    locator: Type.String({ description: 'Where on the page: a JSON path, a CSS path, or a meta tag', examples: ['ld+json[0] $.headline'] }),
  },
  { additionalProperties: true },
);

export const ArticleProvenance = Type.Object(
  {
    page_url: Type.String({ description: 'The page the article was read from (its own page, or a listing that links to it)' }),
    page_type: Type.String({ description: 'What that page was classified as: article or article-list', examples: ['article'] }),
    fields: Type.Record(Type.String(), FieldSource, { description: 'Per field: the source of evidence and where on the page' }),
  },
  { additionalProperties: true, description: 'Where each value came from.' },
);

/** One article with the provenance of its values, as GET /articles/{id} answers. */
export const ArticleDetail = Type.Object(
  {
    ...Article.properties,
    provenance: Nullable(ArticleProvenance),
    last_seen_at: Nullable(Type.String({ format: 'date-time', description: 'When a scrape last saw it' })),
  },
  { $id: 'ArticleDetail' },
);
export type ArticleDetail = Static<typeof ArticleDetail>;

export const ArticleId = Type.Object({
  id: Type.Integer({ minimum: 1, maximum: 2_147_483_647, description: 'Positive integer', examples: [1] }),
});

export const ARTICLE_SORTS = ['published_at', '-published_at', 'id', '-id'] as const;
export type ArticleSort = (typeof ARTICLE_SORTS)[number];

const Filter = (description: string, extra: object = {}) => Type.Optional(Type.String({ minLength: 1, maxLength: 2048, pattern: NO_NUL, description, ...extra }));

/** The filters of the list, shared by the feeds. */
export const ARTICLE_FILTERS = {
  q: Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: 200,
      pattern: NO_NUL,
      description:
        'Full-text search over the title, description and body, each article read in its own language (stemmed: "flooding" finds "floods" in ' +
        'an English article; words as written where the language is unknown). Web-search syntax: "a phrase", -excluded, or. ' +
        'Without `sort`, best matches first (a match in the title counts most, then the description, then the body), then newest.',
      examples: ['harbour wall'],
    }),
  ),
  site: Filter('The site: a host or URL (its subdomains included: `example.com` covers `news.example.com`), or the site name exactly (any case)', {
    examples: ['news.example'],
  }),
  source_url: Filter('Articles stored by runs started from this URL (any spelling of it: compared in canonical form)'),
  author: Filter('An author, exactly (any case)', { maxLength: 500, examples: ['Jane Doe'] }),
  language: Type.Optional(
    Type.String({
      pattern: '^[A-Za-z]{2,3}(?:-[A-Za-z0-9]{1,8})*$',
      maxLength: 35,
      description: 'A BCP 47 tag: `en` matches every English article (en, en-GB...), `en-GB` only that',
      examples: ['en'],
    }),
  ),
  published_since: Type.Optional(Type.String({ format: 'date-time', description: 'Published at or after this time (undated articles are left out)' })),
  published_before: Type.Optional(Type.String({ format: 'date-time', description: 'Published before this time (undated articles are left out)' })),
  tag: Filter("Only articles carrying this watch-list tag (see /tags; compared trimmed and lower-cased). The page's own keywords are the answer's `tags`", {
    maxLength: 200,
    examples: ['harbours'],
  }),
  has_body: Type.Optional(Type.Boolean({ description: "true: articles whose text was read; false: a listing's entries not followed yet" })),
};

export const ArticleListQuery = Type.Object(
  {
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000, description: 'Page size; all articles when absent' })),
    offset: Type.Optional(Type.Integer({ minimum: 0, maximum: 2_147_483_647, default: 0 })),
    ...ARTICLE_FILTERS,
    // No schema default: an absent sort means relevance when q is given, newest first otherwise.
    sort: Type.Optional(
      Type.Unsafe<ArticleSort>({
        type: 'string',
        enum: [...ARTICLE_SORTS],
        description: 'Order; a leading - sorts descending; undated articles come last either way. Default: -published_at (newest first), or best matches when q is given',
      }),
    ),
  },
  { additionalProperties: false },
);
export type ArticleListQuery = Static<typeof ArticleListQuery>;

export const ArticleFeedQuery = Type.Object(
  {
    ...ARTICLE_FILTERS,
    limit: Type.Integer({ minimum: 1, maximum: 200, default: 50, description: 'Entries in the feed, newest first' }),
  },
  { additionalProperties: false },
);
export type ArticleFeedQuery = Static<typeof ArticleFeedQuery>;

export const ArticleDeleted = Type.Object({ id: Type.Integer(), deleted: Type.Literal(true) });
