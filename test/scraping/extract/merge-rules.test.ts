// Where each field comes from when the sources disagree: the buy box's price, the code the page presents, the stock it states, variants, and pages that imitate the shops where this goes wrong.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, test } from 'node:test';
import { extract } from '../../../src/scraping/extract/index.js';
import { mergeGroup } from '../../../src/scraping/extract/merge.js';
import type { Candidate } from '../../../src/scraping/extract/types.js';

const SITE = 'http://127.0.0.1:1234';
const pagesDir = new URL('../../fixtures/pages/', import.meta.url);

/** A page with this <title>, JSON-LD (when given) and body. */
function page(body: string, jsonLd?: object, title = 'Walnut Desk Tidy | Example Shop'): string {
  const script = jsonLd === undefined ? '' : `<script type="application/ld+json">${JSON.stringify(jsonLd)}</script>`;
  return `<!doctype html><html><head><title>${title}</title>${script}</head><body>${body}</body></html>`;
}

const product = (offer: object, more: object = {}) => ({
  '@context': 'https://schema.org',
  '@type': 'Product',
  name: 'Walnut Desk Tidy',
  offers: { '@type': 'Offer', priceCurrency: 'EUR', ...offer },
  ...more,
});

describe('merge rules: the page shown to people against machine data', () => {
  const CASES: ReadonlyArray<readonly [name: string, html: string, field: 'price' | 'sku' | 'availability', value: unknown, source: string, why: RegExp]> = [
    [
      'a sale price the buy box labels wins over the regular price in JSON-LD',
      page(
        '<h1>Walnut Desk Tidy</h1><div class="price-block"><span class="original-price">EUR149.00</span><span class="current-price">EUR89.00</span></div><button>Add to cart</button>',
        product({ price: '149.00' }),
      ),
      'price',
      89,
      'visible',
      /the buy box shows EUR89\.00 as the price to pay now.*json-ld states 149/,
    ],
    [
      'JSON-LD stating the struck "was" price loses to the current price beside it',
      page('<h1>Walnut Desk Tidy</h1><div><del>€ 24,00</del> <strong>€ 21,60</strong></div><button>Add to cart</button>', product({ price: '24.00' })),
      'price',
      21.6,
      'visible',
      /json-ld states 24, the regular price the page shows struck through/,
    ],
    [
      'a loose visible amount that differs does not overrule JSON-LD',
      page('<h1>Walnut Desk Tidy</h1><p class="price">€22.00</p><button>Add to cart</button>', product({ price: '24.00' })),
      'price',
      24,
      'json-ld',
      /json-ld is trusted over visible/,
    ],
    [
      'a labelled special price beside another current price (a bundle) does not overrule JSON-LD',
      page(
        '<h1>Walnut Desk Tidy</h1><p class="price">$59.99</p><div class="buy"><button>Add to cart</button><div class="bundle"><span class="special-price">$49.99</span> with the pen tray</div></div>',
        product({ price: '59.99', priceCurrency: 'USD' }),
      ),
      'price',
      59.99,
      'json-ld',
      /json-ld is trusted over visible/,
    ],
    [
      'the current bid wins over the starting price in JSON-LD',
      page(
        '<h1>Walnut Desk Tidy</h1><div class="status"><span class="price">$340</span> <span>4 bids</span></div><button>Place bid</button>',
        product({ price: 250, priceCurrency: 'USD' }),
      ),
      'price',
      340,
      'visible',
      /the current bid/,
    ],
    [
      'the product code the page prints wins over the variant id in JSON-LD',
      page(
        '<h1>Walnut Desk Tidy</h1><p class="price">€24.00</p><button>Add to cart</button><p class="product-code">Product code: 51230087</p>',
        product({ price: '24' }, { sku: '330917254' }),
      ),
      'sku',
      '51230087',
      'visible',
      /presents 51230087 to people.*labelled "Product code".*json-ld states 330917254/,
    ],
    [
      'the code as the page shows it ("512/3008") wins over its machine form',
      page(
        '<div itemscope itemtype="https://schema.org/Product"><h1 itemprop="name">Walnut Desk Tidy</h1><span itemprop="sku" content="5123008">512/3008</span><div itemprop="offers" itemscope itemtype="https://schema.org/Offer"><span itemprop="price" content="27.99">£27.99</span><meta itemprop="priceCurrency" content="GBP"></div></div><button>Add to trolley</button>',
      ),
      'sku',
      '512/3008',
      'visible',
      /presents 512\/3008.*microdata states 5123008/,
    ],
    [
      'a stock line that says the product is unavailable wins over JSON-LD in stock',
      page(
        '<h1>Walnut Desk Tidy</h1><p class="price">€24.00</p><div id="availability"><span>Currently unavailable.</span></div>',
        product({ price: '24', availability: 'https://schema.org/InStock' }),
      ),
      'availability',
      'out_of_stock',
      'visible',
      /the page says "Currently unavailable" beside the product; json-ld says in_stock/,
    ],
    [
      'an enabled buy button wins over JSON-LD out of stock (one size of several)',
      page(
        '<h1>Walnut Desk Tidy</h1><p class="price">€24.00</p><form action="/basket"><button>Add to your basket</button></form>',
        product({ price: '24', availability: 'OutOfStock' }),
      ),
      'availability',
      'in_stock',
      'visible',
      /buy button is enabled.*json-ld says out_of_stock/,
    ],
    [
      'a disabled buy button agrees with JSON-LD out of stock',
      page('<h1>Walnut Desk Tidy</h1><p class="price">€24.00</p><button disabled>Add to cart</button>', product({ price: '24', availability: 'OutOfStock' })),
      'availability',
      'out_of_stock',
      'json-ld',
      /json-ld is trusted over visible/,
    ],
  ];
  for (const [name, html, field, value, source, why] of CASES) {
    test(name, () => {
      const result = extract(html, `${SITE}/p/desk-tidy`, { explain: true });
      const [item] = result.items;
      assert.equal(item?.[field], value, result.explanation?.page_type.reasons.join('; '));
      assert.equal(item?.provenance[field]?.source, source);
      assert.match(result.explanation?.items[0]?.fields[field]?.why ?? '', why);
    });
  }

  test('what a user stated (their selectors) is never overruled by a rule of thumb', () => {
    const selectors: Candidate = {
      source: 'selectors',
      locator: '.item',
      scope: 'item',
      fields: { title: { value: 'Desk Tidy', locator: '.t' }, price: { value: 30, locator: '.p' } },
    };
    const visible: Candidate = {
      source: 'visible',
      locator: 'h1',
      scope: 'page',
      fields: { price: { value: 24, locator: '#priceblock_ourprice', cue: "the buy box's price (#priceblock_ourprice)" } },
    };
    assert.equal(mergeGroup([selectors, visible], true)?.item.price, 30);
  });

  test("schema.org's productID is the sku when none is stated, without its scheme prefix", () => {
    const html = page(
      '<div itemscope itemtype="https://schema.org/Product"><h1 itemprop="name">Walnut Desk Tidy</h1><meta itemprop="productID" content="sku:4402917736"><div itemprop="offers" itemscope itemtype="https://schema.org/Offer"><meta itemprop="price" content="31.90"><meta itemprop="priceCurrency" content="EUR"></div></div>',
    );
    const [item] = extract(html, `${SITE}/p/desk-tidy`).items;
    assert.deepEqual([item?.sku, item?.provenance.sku?.source], ['4402917736', 'microdata']);
  });

  test('a GTIN stands in for a sku no source states, and explain says so', () => {
    const result = extract(page('<h1>Walnut Desk Tidy</h1>', product({ price: '24' }, { gtin13: '4012345000048' })), `${SITE}/p/desk-tidy`, { explain: true });
    assert.deepEqual([result.items[0]?.sku, result.items[0]?.gtin], ['4012345000048', '4012345000048']);
    assert.match(result.explanation?.items[0]?.fields.sku?.why ?? '', /no source states a sku; the GTIN identifies the product/);
  });

  test('a zero on an offer that cannot be bought is no price; a zero on one that can is free', () => {
    const gone = extract(page('<h1>Walnut Desk Tidy</h1>', product({ price: '0', availability: 'https://schema.org/OutOfStock' })), `${SITE}/p/desk-tidy`).items[0];
    assert.deepEqual([gone?.price, gone?.availability], [null, 'out_of_stock']);
    const free = extract(page('<h1>Walnut Desk Tidy</h1>', product({ price: '0', availability: 'https://schema.org/InStock' })), `${SITE}/p/desk-tidy`).items[0];
    assert.equal(free?.price, 0);
  });
});

describe('pages that imitate the shops where the rules matter', () => {
  const CASES: ReadonlyArray<readonly [file: string, path: string, expected: Record<string, unknown>, sources: Record<string, string>, reason: RegExp]> = [
    [
      'marketplace-buybox.html',
      '/Ironbark-Frying-Pan-Set/dp/B0C7K2M9QX',
      { title: 'Ironbark 5 Piece Frying Pan Set, Graphite', price: 52.49, currency: 'GBP', availability: 'limited', sku: 'B0C7K2M9QX' },
      { price: 'visible', sku: 'embedded-data', availability: 'visible' },
      /one main heading, a buy control and a price beside it; the 3 priced cards elsewhere are other products/,
    ],
    [
      'marketplace-unavailable.html',
      '/Weidenkorb-mit-Deckel/dp/B0D4R8T2WZ',
      { title: 'Weidenkorb mit Deckel, natur', price: null, availability: 'out_of_stock', sku: 'B0D4R8T2WZ' },
      { sku: 'url', availability: 'visible' },
      /one main heading that the page's title repeats, with its stock stated beside it/,
    ],
    [
      'auction-item.html',
      '/item/81204457_teak-side-table',
      { price: 340, currency: 'USD', sku: '81204457' },
      { price: 'visible', sku: 'json-ld' },
      /structured data marks up the page's product/,
    ],
    [
      'classified-ad.html',
      '/moebel/c1200a307718264/gartenbank.html',
      { title: 'Gartenbank aus Eiche', price: 185, currency: 'EUR', sku: '307718264' },
      { price: 'visible', sku: 'embedded-data' },
      /structured data marks up the page's product/,
    ],
    [
      'department-store-variant.html',
      '/harbour-suede-desert-boots/sand/p6120334',
      { title: 'Harbour Suede Desert Boots, Sand', price: 95, availability: 'in_stock', sku: '72650418' },
      { price: 'json-ld', sku: 'visible', availability: 'visible' },
      /structured data marks up the page's product/,
    ],
    [
      'size-variants-graph.html',
      '/ribbed-wool-jumper-30471188.html',
      { title: 'RIBBED WOOL JUMPER', price: 59.95, availability: 'in_stock', sku: '30471188', gtin: '4012345000017' },
      { sku: 'embedded-data', availability: 'json-ld' },
      /its 3 variants share the name of the page's heading or og:title/,
    ],
  ];
  for (const [file, path, expected, sources, reason] of CASES) {
    test(`${file}: one product, ${Object.entries(expected)
      .map(([k, v]) => `${k} ${v}`)
      .join(', ')}`, () => {
      const result = extract(readFileSync(new URL(file, pagesDir), 'utf8'), `${SITE}${path}`, { explain: true });
      assert.equal(result.page_type, 'product');
      assert.equal(result.items.length, 1, 'the cards, carousels and variants are not more products');
      assert.match(result.explanation?.page_type.reasons.join('; ') ?? '', reason);
      const [item] = result.items;
      for (const [field, value] of Object.entries(expected)) assert.equal((item as unknown as Record<string, unknown>)[field], value, field);
      for (const [field, source] of Object.entries(sources)) assert.equal(item?.provenance[field as 'price']?.source, source, `${field} from ${source}`);
    });
  }
});
