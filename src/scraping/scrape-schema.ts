// Request and response shapes of POST /scrape.
import { Type, type Static, type TSchema } from 'typebox';
import { NO_NUL, Nullable } from '../http/schemas.js';
import { Article } from '../articles/article-schema.js';
import { Product } from '../products/product-schema.js';
import { tagList } from '../tags/tag-schema.js';
import type { TargetVerdict } from '../egress/address-guard.js';
import { PAGE_TYPES, type PageType, type ExtractedArticle, type ExtractedItem, type PageExplanation, type SiteRuleOutcome } from './extract/types.js';

// NO_NUL: a job or schedule keeps its request as JSONB, which holds neither U+0000 nor an unpaired surrogate.
const Css = Type.String({ minLength: 1, maxLength: 500, pattern: NO_NUL });

/** The forms of a page's main content an answer can carry. */
export const ContentFormat = Type.Union([Type.Literal('content'), Type.Literal('markdown')]);
export type ContentFormat = Static<typeof ContentFormat>;

const MainText = (what: string) =>
  Type.String({
    description: `${what} of the (first) page's main content, whatever its type: an article's body, a product's description and specifications, every post of a thread, every section of a service page, every card of a listing; without navigation, headers, footers and sidebars. At most 200,000 characters, cut at a paragraph.`,
  });

export const ScrapeRequest = Type.Object(
  {
    url: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 2048,
        pattern: NO_NUL,
        description: 'Page to scrape (http or https). Absent: the demo scraper on DEMO_SITE_URL.',
        examples: ['https://books.toscrape.com/'],
      }),
    ),
    use_selenium: Type.Optional(Type.Boolean({ default: false, description: 'Render the page in headless Chromium (dynamic mode).' })),
    max_pages: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 1, description: 'Follow the page\'s "next" link up to this many pages.' })),
    selectors: Type.Optional(
      Type.Object(
        { item: Css, title: Css, price: Css, description: Type.Optional(Css), link: Type.Optional(Css) },
        {
          additionalProperties: false,
          description: 'CSS selectors; title, price, description and link are relative to item.',
          examples: [{ item: 'article.product_pod', title: 'h3 a', price: '.price_color', link: 'h3 a' }],
        },
      ),
    ),
    wait_for: Type.Optional(Type.String({ minLength: 1, maxLength: 500, pattern: NO_NUL, description: 'Dynamic mode: CSS selector to wait for.' })),
    timeout_ms: Type.Optional(Type.Integer({ minimum: 100, maximum: 120_000, description: 'Per-page timeout (default 15000).' })),
    tags: Type.Optional(tagList('Tags (watch lists) given to every product the run collects; stored trimmed and lower-cased')),
    formats: Type.Optional(
      Type.Array(ContentFormat, {
        uniqueItems: true,
        maxItems: 2,
        description:
          "The page's main content the answer carries: `content` (plain text), `markdown`, both (the default) or none (`[]`). The run's log keeps both whatever this says.",
        examples: [['markdown']],
      }),
    ),
  },
  { additionalProperties: false, examples: [{}, { url: 'https://books.toscrape.com/', max_pages: 2 }] },
);
export type ScrapeRequest = Static<typeof ScrapeRequest>;

export const ScrapeMode = Type.Union([Type.Literal('demo'), Type.Literal('static'), Type.Literal('dynamic')]);
export type ScrapeMode = Static<typeof ScrapeMode>;

/** An open object: explain's nested parts are described, not fixed, so they may grow. */
const Open = (description: string, properties: Record<string, TSchema> = {}) => Type.Object(properties, { additionalProperties: true, description });

/** An article as extracted from a page (not stored): the page's own article, or a listing's entry with `body: null`. */
export const ExtractedArticleSchema = Type.Object(
  {
    url: Nullable(Type.String({ description: 'Canonical URL' })),
    title: Type.String(),
    body: Nullable(Type.String({ description: "Plain text, paragraphs separated by a blank line; null for a listing's entry" })),
    body_html: Nullable(Type.String({ description: 'The same content as sanitized HTML (no script, style, event handlers or unsafe URLs)' })),
    description: Nullable(Type.String()),
    authors: Type.Array(Type.String()),
    published_at: Nullable(Type.String({ description: 'ISO 8601, with the offset when the page states one' })),
    modified_at: Nullable(Type.String({ description: 'ISO 8601, with the offset when the page states one' })),
    language: Nullable(Type.String({ description: 'BCP 47 language tag' })),
    site_name: Nullable(Type.String()),
    image_url: Nullable(Type.String()),
    section: Nullable(Type.String()),
    tags: Type.Array(Type.String()),
    word_count: Nullable(Type.Integer()),
    provenance: Open('Per field: the source of evidence and the locator it was read at'),
    page_url: Type.String({ description: 'The page it was extracted from' }),
  },
  { $id: 'ExtractedArticle', additionalProperties: false },
);

export const ScrapeResult = Type.Object({
  log_id: Type.String({ format: 'uuid' }),
  mode: ScrapeMode,
  source_url: Type.String(),
  pages: Type.Integer({ description: 'Pages fetched and extracted' }),
  count: Type.Integer({ description: 'Products stored by this run' }),
  created: Type.Integer(),
  updated: Type.Integer(),
  duration_ms: Type.Number(),
  extractor: Nullable(
    Type.String({
      description: "The source of evidence the items' titles came from (json-ld, microdata, rdfa, opengraph, visible, books-listing, product-cards, article-list, selectors)",
      examples: ['books-listing'],
    }),
  ),
  page_type: Type.Unsafe<PageType>(
    Type.Union(
      PAGE_TYPES.map((t) => Type.Literal(t)),
      { description: 'What the (first) page was classified as before extracting for it' },
    ),
  ),
  content: Type.Optional(MainText('Plain text (headings on their own lines, paragraphs separated by a blank line, list items and table rows on their own lines)')),
  markdown: Type.Optional(MainText('CommonMark (GFM tables): headings, lists, links, tables, code blocks, images with their alt text')),
  products: Type.Array(Product),
  articles: Type.Array(Article, {
    description: "The articles the run stored, as GET /articles/{id} shows them (without provenance): the page's own article, or a listing's entries (without a body)",
  }),
  articles_created: Type.Integer({ description: 'Articles this run stored for the first time' }),
  articles_updated: Type.Integer({ description: 'Articles it stored again (a re-scrape, or an entry whose page was read)' }),
  warning: Type.Optional(Type.String({ description: 'Something the caller should know although the run succeeded (e.g. its log could not be finished)' })),
  site_rule_warnings: Type.Optional(
    Type.Array(Type.String(), { description: 'Pages where a field pinned by a site rule (/site-rules) found nothing: the site may have changed its layout' }),
  ),
});
export type ScrapeResult = Static<typeof ScrapeResult>;

const Truncation = Type.Object({
  list: Type.String({ description: 'The list cut, e.g. "candidates.product-cards", "items", "products"' }),
  shown: Type.Integer({ description: 'Entries shown (the first ones)' }),
  total: Type.Integer({ description: 'Entries there were' }),
});

const ExplainedPage = Type.Object(
  {
    url: Type.String(),
    fetch: Nullable(Open('How the page was loaded: requested and final URL, status, content type, bytes, charset, redirects, robots.txt, ms')),
    page_type: Type.Object({ type: Type.String(), reasons: Type.Array(Type.String()) }, { description: 'What the page was classified as, and why' }),
    extractor: Nullable(Type.String()),
    candidates: Open('Every candidate each source of evidence found, by source: its locator and the values it read'),
    skipped: Type.Array(Open('A source not run for this page, and why')),
    dropped: Type.Array(Open('Candidates found but left out of the result, and why')),
    items: Type.Array(Open('Per item: for each field the chosen value, its source and locator, why, and what other sources offered')),
    article_candidates: Type.Optional(
      Open(
        "Every article candidate each source found (structured data, Open Graph and article:* tags, meta and Dublin Core, the visible page, the body read from the page, a listing's entries)",
      ),
    ),
    articles: Type.Optional(
      Type.Array(
        Open(
          'Per article: for each field the chosen value, its source and locator, why, and what other sources offered; how the body was found and the page furniture removed first',
        ),
      ),
    ),
    content: MainText('Plain text'),
    markdown: MainText('Markdown'),
    timings_ms: Open('Parse and extract time of this page', { parse: Type.Number(), extract: Type.Number() }),
    truncated: Type.Array(Truncation, { description: 'The lists of this page cut to their first 100 entries (candidates per source, items, articles): empty when none was' }),
    site_rule: Type.Optional(
      Open('The site rule (/site-rules) that applied to the page: its id and host pattern, its page type, the pinned fields it found (applied) and found nothing for (missed)'),
    ),
  },
  { additionalProperties: true },
);

export const ScrapeExplanation = Type.Object(
  {
    stored: Type.Literal(false, { description: 'Explain never stores products or writes a log' }),
    mode: ScrapeMode,
    renderer: Type.Union([Type.Literal('http'), Type.Literal('browser')]),
    source_url: Type.String(),
    target: Open("The address guard's verdict on the URL: allowed or blocked, why, and every address the host resolves to"),
    pages: Type.Array(ExplainedPage),
    fetches: Type.Array(Open('Every page load attempted, in order, failed ones included')),
    count: Type.Integer({ description: 'Products a scrape would store' }),
    products: Type.Array(Open('The items as a scrape would store them, each with per-field provenance and its page URL: the first 100 (`count` says how many)')),
    articles: Type.Array(ExtractedArticleSchema, { description: 'The articles as extracted, each with per-field provenance and its page URL' }),
    warning: Type.Optional(Type.String()),
    truncated: Type.Array(Truncation, { description: 'The lists of the answer cut to their first 100 entries (`products`): empty when none was' }),
    site_rule_warnings: Type.Optional(
      Type.Array(Type.String(), { description: 'Pages where a field pinned by a site rule (/site-rules) found nothing: the site may have changed its layout' }),
    ),
    timings_ms: Open('Time per phase', { guard: Type.Number(), fetch: Type.Number(), extract: Type.Number(), total: Type.Number() }),
  },
  { $id: 'ScrapeExplanation', additionalProperties: true },
);

/** The explain answer as the pipeline builds it (the schema above documents and serialises it). */
export interface ScrapeExplanation {
  stored: false;
  mode: ScrapeMode;
  renderer: 'http' | 'browser';
  source_url: string;
  target: TargetVerdict;
  pages: Array<
    Pick<PageExplanation, 'page_type' | 'candidates' | 'skipped' | 'dropped' | 'items' | 'article_candidates' | 'articles' | 'timings_ms' | 'truncated'> & {
      url: string;
      content: string;
      markdown: string;
      fetch: object | null;
      extractor: string | null;
      site_rule?: SiteRuleOutcome;
    }
  >;
  fetches: object[];
  count: number;
  products: Array<ExtractedItem & { page_url: string }>;
  articles: Array<ExtractedArticle & { page_url: string }>;
  warning?: string;
  truncated: Array<{ list: string; shown: number; total: number }>;
  site_rule_warnings?: string[];
  timings_ms: { guard: number; fetch: number; extract: number; total: number };
}
