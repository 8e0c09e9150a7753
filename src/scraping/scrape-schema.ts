// Request and response shapes of POST /scrape.
import { Type, type Static } from 'typebox';
import { Nullable } from '../http/schemas.js';
import { Product } from '../products/product-schema.js';

const Css = Type.String({ minLength: 1, maxLength: 500 });

export const ScrapeRequest = Type.Object(
  {
    url: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 2048,
        description: 'Page to scrape (http or https). Absent: the demo scraper on DEMO_SITE_URL.',
        examples: ['https://books.toscrape.com/'],
      }),
    ),
    use_selenium: Type.Optional(
      Type.Boolean({ default: false, description: 'Render the page in headless Chromium (dynamic mode).' }),
    ),
    max_pages: Type.Optional(
      Type.Integer({ minimum: 1, maximum: 100, default: 1, description: 'Follow the page\'s "next" link up to this many pages.' }),
    ),
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
    wait_for: Type.Optional(Type.String({ minLength: 1, maxLength: 500, description: 'Dynamic mode: CSS selector to wait for.' })),
    timeout_ms: Type.Optional(Type.Integer({ minimum: 100, maximum: 120_000, description: 'Per-page timeout (default 15000).' })),
  },
  { additionalProperties: false, examples: [{}, { url: 'https://books.toscrape.com/', max_pages: 2 }] },
);
export type ScrapeRequest = Static<typeof ScrapeRequest>;

export const ScrapeMode = Type.Union([Type.Literal('demo'), Type.Literal('static'), Type.Literal('dynamic')]);
export type ScrapeMode = Static<typeof ScrapeMode>;

export const ScrapeResult = Type.Object({
  log_id: Type.String({ format: 'uuid' }),
  mode: ScrapeMode,
  source_url: Type.String(),
  pages: Type.Integer({ description: 'Pages fetched and extracted' }),
  count: Type.Integer({ description: 'Products stored by this run' }),
  created: Type.Integer(),
  updated: Type.Integer(),
  duration_ms: Type.Number(),
  extractor: Nullable(Type.String({ description: 'The extraction method that found the items', examples: ['books-listing'] })),
  products: Type.Array(Product),
});
export type ScrapeResult = Static<typeof ScrapeResult>;
