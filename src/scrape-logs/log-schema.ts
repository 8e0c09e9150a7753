// The scrape-log document: one per scrape run, succeeded or failed. Documents may carry extra fields.
import { Type, type Static } from 'typebox';
import { BlockedSchema, NO_NUL, Nullable } from '../http/schemas.js';

export const RawItem = Type.Object(
  {
    title: Type.String(),
    price_text: Nullable(Type.String()),
    price: Nullable(Type.Number()),
    currency: Nullable(Type.String()),
    url: Nullable(Type.String()),
    // Written since extraction merges sources; older documents lack them.
    list_price: Type.Optional(Nullable(Type.Number())),
    high_price: Type.Optional(Nullable(Type.Number())),
    availability: Type.Optional(Nullable(Type.String())),
    sku: Type.Optional(Nullable(Type.String())),
    gtin: Type.Optional(Nullable(Type.String())),
    brand: Type.Optional(Nullable(Type.String())),
    image_url: Type.Optional(Nullable(Type.String())),
    page_url: Type.Optional(Type.String()),
    provenance: Type.Optional(
      Type.Record(Type.String(), Type.Object({ source: Type.String(), locator: Type.String() }), { description: 'Per field: source of evidence and locator' }),
    ),
  },
  { additionalProperties: true },
);

export const LogError = Type.Object({ type: Type.String(), status: Type.Integer(), detail: Type.String(), blocked: Type.Optional(BlockedSchema) }, { additionalProperties: true });

export const ScrapeLog = Type.Object(
  {
    id: Type.String({ format: 'uuid' }),
    source_url: Nullable(Type.String()),
    mode: Type.Union([Type.Literal('demo'), Type.Literal('static'), Type.Literal('dynamic')]),
    status: Type.Union([Type.Literal('running'), Type.Literal('succeeded'), Type.Literal('failed'), Type.Literal('cancelled')], {
      description: 'running from the start of a run until it ends; a run whose process died is marked failed (interrupted)',
    }),
    count: Type.Integer(),
    products: Type.Array(RawItem),
    error: Type.Optional(LogError),
    pages: Type.Integer(),
    started_at: Type.String({ format: 'date-time' }),
    finished_at: Nullable(Type.String({ format: 'date-time', description: 'Null while running' })),
    duration_ms: Nullable(Type.Number({ description: 'Null while running' })),
    // Written by this service's pipeline; older or foreign documents may lack them.
    renderer: Type.Optional(Type.Union([Type.Literal('http'), Type.Literal('browser')])),
    extractor: Type.Optional(Nullable(Type.String())),
    page_types: Type.Optional(Type.Array(Type.String(), { description: 'What each page was classified as' })),
    page_urls: Type.Optional(Type.Array(Type.String())),
    contents: Type.Optional(
      Type.Array(
        Type.Object({
          url: Type.String(),
          content: Type.String({ description: "The page's main content as plain text" }),
          markdown: Type.String({ description: 'The same as Markdown' }),
        }),
        { description: "Each page's main content, in page order, while the log's budget for them lasts (2,000,000 characters in all)" },
      ),
    ),
    contents_truncated: Type.Optional(Type.Boolean({ description: "Pages past the log's budget for main content are left out of `contents`" })),
    created: Type.Optional(Type.Integer()),
    updated: Type.Optional(Type.Integer()),
    warning: Type.Optional(Type.String({ description: 'Why a multi-page crawl stopped early' })),
    site_rule_warnings: Type.Optional(
      Type.Array(Type.String(), { description: 'Pages where a field pinned by a site rule found nothing (the site may have changed its layout); at most 50' }),
    ),
    request: Type.Optional(Type.Object({}, { additionalProperties: true, description: 'The POST /scrape body' })),
    job_id: Type.Optional(Type.String({ description: 'The job this run belongs to, when it ran as a job' })),
    crawl: Type.Optional(Type.Boolean({ description: 'The one log of a whole-site crawl (its id is the job id)' })),
    failed_pages: Type.Optional(Type.Array(Type.Object({ url: Type.String(), error: Type.Unknown() }), { description: "A crawl's pages that failed, with why" })),
    products_truncated: Type.Optional(Type.Boolean({ description: 'The crawl found more items than a log keeps (5000); counts cover them all' })),
    article_count: Type.Optional(Type.Integer({ description: "Articles the run stored (its pages' own articles and the entries of listings)" })),
    articles_created: Type.Optional(Type.Integer()),
    articles_updated: Type.Optional(Type.Integer()),
    articles: Type.Optional(
      Type.Array(
        Type.Object(
          {
            url: Nullable(Type.String()),
            title: Type.String(),
            published_at: Nullable(Type.String()),
            has_body: Type.Boolean({ description: "false for a listing's entry" }),
            word_count: Nullable(Type.Integer()),
            page_url: Type.Optional(Type.String()),
          },
          { additionalProperties: true },
        ),
        { description: 'The articles found, as extracted: what and where, not their text (GET /articles has it)' },
      ),
    ),
    articles_truncated: Type.Optional(Type.Boolean({ description: 'More articles were found than a log keeps (5000)' })),
  },
  { $id: 'ScrapeLog', additionalProperties: true },
);
export type ScrapeLog = Static<typeof ScrapeLog>;

export const LogListQuery = Type.Object(
  {
    limit: Type.Integer({ minimum: 1, maximum: 500, default: 50 }),
    offset: Type.Integer({ minimum: 0, maximum: 2_147_483_647, default: 0 }),
    status: Type.Optional(Type.Union([Type.Literal('running'), Type.Literal('succeeded'), Type.Literal('failed'), Type.Literal('cancelled')])),
    source_url: Type.Optional(Type.String({ maxLength: 2048, pattern: NO_NUL })),
  },
  { additionalProperties: false },
);
export type LogListQuery = Static<typeof LogListQuery>;

// The pattern, because format "uuid" also takes "urn:uuid:…", which PostgreSQL's uuid type refuses (500).
export const LogId = Type.Object({
  id: Type.String({
    format: 'uuid',
    pattern: '^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$',
    description: 'UUID of the log document',
  }),
});
