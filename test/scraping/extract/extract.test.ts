// Extraction of whole pages: fixture pages through extract(), each source alone, the books layout, and hostile input.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { runInNewContext } from 'node:vm';
import { load } from 'cheerio';
import fc from 'fast-check';
import { fileURLToPath } from 'node:url';
import { Piscina } from 'piscina';
import type { ExtractTask } from '../../../src/scraping/extract/extract-worker.js';
import { extract } from '../../../src/scraping/extract/index.js';
import { articleListExtractor } from '../../../src/scraping/extract/article/article-list-extractor.js';
import { booksListingExtractor } from '../../../src/scraping/extract/visible/books-listing-extractor.js';
import { jsonLdExtractor } from '../../../src/scraping/extract/structured/jsonld-extractor.js';
import { TRUST } from '../../../src/scraping/extract/merge.js';
import { microdataExtractor } from '../../../src/scraping/extract/structured/microdata-extractor.js';
import { openGraphExtractor } from '../../../src/scraping/extract/structured/meta-extractor.js';
import { parsePage } from '../../../src/scraping/extract/page.js';
import { productCardsExtractor } from '../../../src/scraping/extract/visible/product-cards-extractor.js';
import type { Candidate, ExtractedItem, ExtractionResult } from '../../../src/scraping/extract/types.js';
import type { Extractor } from '../../../src/scraping/extract/extractor.js';
import { catalogueBooks, renderCataloguePage, type CatalogueBook } from '../../fixtures/books-catalogue.js';

const SITE = 'http://127.0.0.1:1234';

function fixture(file: string): { html: string; pageUrl: string } {
  return { html: readFileSync(new URL(`../../fixtures/pages/${file}`, import.meta.url), 'utf8'), pageUrl: `${SITE}/pages/${file}` };
}

/** Runs one source of evidence alone on a fixture page. */
function runAlone(extractor: Extractor, file: string): Candidate[] {
  const { html, pageUrl } = fixture(file);
  return extractor.extract(parsePage(html, pageUrl)!);
}

/** The fields the first version of extraction had; the richer ones are checked where a page states them. */
type CoreItem = Pick<ExtractedItem, 'title' | 'price_text' | 'price' | 'currency' | 'url' | 'description'>;

function item(fields: Partial<CoreItem> & { title: string }): CoreItem {
  return { price_text: null, price: null, currency: null, url: null, description: null, ...fields };
}

function core(items: ExtractedItem[]): CoreItem[] {
  return items.map(({ title, price_text, price, currency, url, description }) => ({ title, price_text, price, currency, url, description }));
}

describe('extract() on fixture pages', () => {
  test('jsonld-product.html: one Product, first in-stock offer of the array, price given as a string', () => {
    const { html, pageUrl } = fixture('jsonld-product.html');
    const result = extract(html, pageUrl);
    assert.equal(result.page_type, 'product');
    assert.equal(result.extractor, 'json-ld');
    assert.equal(result.nextUrl, null);
    assert.deepEqual(core(result.items), [
      item({
        title: 'AeroPress Go Travel Coffee Maker – "Compact" Edition',
        price_text: '39.95',
        price: 39.95,
        currency: 'USD',
        url: `${SITE}/products/aeropress-go`,
        description: 'A complete coffee press that packs into its own mug.',
      }),
    ]);
    const [product] = result.items;
    assert.equal(product?.sku, 'AP-GO-01');
    assert.equal(product?.brand, 'AeroPress');
    assert.equal(product?.availability, 'in_stock');
    assert.equal(product?.image_url, 'https://shop.example.com/img/aeropress-go.jpg');
    assert.deepEqual(product?.provenance.price, { source: 'json-ld', locator: 'ld+json[1] $.offers[0].price' });
  });

  test('jsonld-itemlist.html: ItemList of 3 Products with numeric prices, AggregateOffer and priceSpecification', () => {
    const { html, pageUrl } = fixture('jsonld-itemlist.html');
    const result = extract(html, pageUrl);
    assert.equal(result.page_type, 'listing');
    assert.equal(result.extractor, 'json-ld');
    assert.equal(result.nextUrl, `${SITE}/pages/jsonld-itemlist.html?page=2`);
    assert.deepEqual(core(result.items), [
      item({
        title: 'Keychron Q1 Pro',
        price_text: '199',
        price: 199,
        currency: 'EUR',
        url: 'https://keyhaus.example/p/keychron-q1-pro',
        description: '75% wireless, gasket mount.',
      }),
      item({ title: 'HHKB Professional Hybrid Type-S', price_text: '289.5', price: 289.5, currency: 'EUR', url: `${SITE}/p/hhkb-hybrid-type-s` }),
      item({ title: 'Nuphy Air75 V2', price_text: '129.99', price: 129.99, currency: 'EUR', url: `${SITE}/pages/p/nuphy-air75-v2` }),
    ]);
  });

  test('jsonld-graph.html: two Products from @graph despite broken blocks before it and an HTML-comment wrapper', () => {
    const { html, pageUrl } = fixture('jsonld-graph.html');
    const result = extract(html, pageUrl);
    assert.equal(result.extractor, 'json-ld');
    assert.deepEqual(core(result.items), [
      item({
        title: 'Felco 2 Secateurs',
        price_text: '54.00',
        price: 54,
        currency: 'GBP',
        url: 'https://greenleaf.example/garden-tools/felco-2-secateurs/',
        description: 'The classic Swiss pruning shear.',
      }),
      item({ title: 'Spear & Jackson Digging Spade', price_text: '£32.50', price: 32.5, currency: 'GBP', url: 'https://greenleaf.example/garden-tools/spear-jackson-spade/' }),
    ]);
  });

  test('microdata.html: 3 Products with nested offers; a related product inside one is not an item', () => {
    const { html, pageUrl } = fixture('microdata.html');
    const result = extract(html, pageUrl);
    assert.equal(result.extractor, 'microdata');
    assert.equal(result.page_type, 'listing');
    assert.deepEqual(core(result.items), [
      item({
        title: 'Sony WH-1000XM5 Wireless Noise Cancelling',
        price_text: '$1,299.99',
        price: 1299.99,
        currency: 'USD',
        url: `${SITE}/headphones/sony-wh-1000xm5`,
        description: 'Industry-leading noise cancellation, 30 hours battery.',
      }),
      item({ title: 'Sennheiser HD 660S2', price_text: '549,00', price: 549, currency: 'EUR', url: `${SITE}/headphones/sennheiser-hd-660s2` }),
      item({ title: 'Koss Porta Pro & Case', price_text: '£39.00', price: 39, currency: 'GBP', url: 'https://sounddepot.example/headphones/koss-porta-pro' }),
    ]);
  });

  test('opengraph.html: one product from og:title, product:price:*, relative og:url made absolute', () => {
    const { html, pageUrl } = fixture('opengraph.html');
    const result = extract(html, pageUrl);
    assert.equal(result.page_type, 'product');
    assert.equal(result.extractor, 'opengraph');
    assert.deepEqual(core(result.items), [
      item({
        title: 'Handmade Ceramic Mug "Sea Glass"',
        price_text: '28.50',
        price: 28.5,
        currency: 'GBP',
        url: `${SITE}/shop/ceramic-mug-sea-glass`,
        description: 'Wheel-thrown stoneware, 350 ml, glazed in sea-glass green.',
      }),
    ]);
    assert.equal(result.items[0]?.image_url, 'https://studiokiln.example/img/mug.jpg');
  });

  test('tricky-prices.html: 7 cards in mixed formats; sidebar, header and footer prices are not items', () => {
    const { html, pageUrl } = fixture('tricky-prices.html');
    const result = extract(html, pageUrl);
    assert.equal(result.extractor, 'product-cards');
    assert.equal(result.nextUrl, `${SITE}/pages/tricky-prices.html?page=2`);
    const card = (slug: string, title: string, priceText: string, price: number | null, currency: string | null): CoreItem =>
      item({ title, price_text: priceText, price, currency, url: `${SITE}/items/${slug}` });
    assert.equal(result.page_type, 'listing');
    assert.deepEqual(core(result.items), [
      card('vintage-camera', 'Leica M3 Vintage Camera', '$1,299.99', 1299.99, 'USD'),
      card('espresso-machine', 'La Marzocco Linea Micra', '1.299,00 €', 1299, 'EUR'),
      card('tea-set', 'Tokoname Kyusu Tea Set', '¥3,000', 3000, 'JPY'),
      card('wool-scarf', 'Merino Wool Scarf', 'USD 45', 45, 'USD'),
      card('postcard', 'Postcard: Tower Bridge at Dusk', '£0.99', 0.99, 'GBP'),
      card('catalogue-pdf', 'Printable Catalogue (PDF)', 'Free', 0, null),
      card('zloty-vase', 'Bolesławiec Stoneware Vase', '1 299,99 zł', 1299.99, 'PLN'),
    ]);
  });

  test('articles.html: 6 posts with titles, links and summaries, as articles without a body; nav headings and sidebar posts are not entries', () => {
    const { html, pageUrl } = fixture('articles.html');
    const result = extract(html, pageUrl);
    assert.equal(result.extractor, 'article-list');
    assert.equal(result.page_type, 'article-list');
    assert.equal(result.nextUrl, `${SITE}/page/2/`);
    assert.deepEqual(result.items, [], 'entries of a blog are articles, never price-less products');
    const entry = (title: string, url: string, description: string) => ({ title, url, description, body: null });
    assert.deepEqual(
      result.articles.map(({ title, url, description, body }) => ({ title, url, description, body })),
      [
        entry(
          'Mapping the Tides of the Severn Estuary',
          `${SITE}/2024/05/mapping-the-tides/`,
          'The second-highest tidal range in the world, measured with a borrowed theodolite and a great deal of patience.',
        ),
        entry('Why Ordnance Survey Maps Use Four Typefaces', `${SITE}/2024/04/ordnance-survey-fonts/`, 'Upright for land, italic for water, and a story about a 1930s committee.'),
        entry('Contour Lines, Hachures & Hill Shading', 'https://fieldnotes.example/2024/03/contour-lines/', 'Three centuries of trying to draw mountains on flat paper.'),
        entry('The Lost Villages of Salisbury Plain', `${SITE}/2024/02/lost-villages/`, 'Imber was evacuated in 1943 and never given back; the maps kept it for decades.'),
        entry(
          'GPS vs Paper: a Winter Walk in the Cairngorms',
          `${SITE}/2024/01/gps-vs-paper/`,
          'One battery died at −12 °C. The paper map did not. Costs: £14.99 for the map, about $400 for the GPS.',
        ),
        entry('Reading Old Town Plans', `${SITE}/2023/12/old-town-plans/`, 'Burgage plots, market places and the long shadows of medieval property lines.'),
      ],
    );
  });

  test('broken.html: unclosed tags and stray end tags still yield the 4 cards', () => {
    const { html, pageUrl } = fixture('broken.html');
    const result = extract(html, pageUrl);
    assert.equal(result.extractor, 'product-cards');
    assert.deepEqual(
      result.items.map((i) => [i.title, i.price, i.currency, i.url]),
      [
        ['Cast-iron skillet, 10"', 24, 'USD', `${SITE}/bin/1`],
        ['Enamel & steel kettle', 18.5, 'USD', `${SITE}/bin/2`],
        ['Set of 6 tumblers', 9.99, 'USD', `${SITE}/bin/3`],
        ['Wooden chopping board', 12, 'USD', `${SITE}/bin/4`],
      ],
    );
  });

  test('script-rendered.html: nothing before scripts run; product-cards finds the 4 cards the script inserts', () => {
    const { html, pageUrl } = fixture('script-rendered.html');
    // Before its scripts run the page is a shell: its one line is all the content it has.
    assert.deepEqual(extract(html, pageUrl), { page_type: 'none', extractor: null, items: [], articles: [], nextUrl: null, content: 'Loading stock…', markdown: 'Loading stock…' });

    const rendered = runInlineScripts(html);
    const result = extract(rendered, pageUrl);
    assert.equal(result.extractor, 'product-cards');
    assert.deepEqual(core(result.items), [
      item({ title: 'Lantern, paper (red)', price_text: '£4.50', price: 4.5, currency: 'GBP', url: `${SITE}/pages/item-1.html` }),
      item({ title: 'Dumplings × 6', price_text: '£6.00', price: 6, currency: 'GBP', url: `${SITE}/pages/item-2.html` }),
      item({ title: 'Hand-poured candle', price_text: '£12.25', price: 12.25, currency: 'GBP', url: `${SITE}/pages/item-3.html` }),
      item({ title: 'Vinyl: "Night Drive" LP', price_text: '£19.99', price: 19.99, currency: 'GBP', url: `${SITE}/pages/item-4.html` }),
    ]);
  });
});

/**
 * What a browser would show after the fixture's inline script ran: executes it in a sandbox with
 * just the DOM it touches (#app's innerHTML) and a setTimeout that fires at once.
 */
function runInlineScripts(html: string): string {
  const $ = load(html);
  const app = { innerHTML: '' };
  for (const script of $('script:not([src])').toArray()) {
    runInNewContext($(script).text(), {
      document: { getElementById: (id: string) => (id === 'app' ? app : null) },
      setTimeout: (callback: () => void) => callback(),
    });
  }
  $('#app').html(app.innerHTML);
  return $.html();
}

describe('each source alone', () => {
  test('the order of trust is the documented one', () => {
    assert.deepEqual(TRUST, [
      'site-rule',
      'selectors',
      'json-ld',
      'microdata',
      'rdfa',
      'opengraph',
      'meta',
      'books-listing',
      'visible',
      'embedded-data',
      'url',
      'product-cards',
      'article-list',
    ]);
  });

  test('product-cards does not fire on an article list, whose posts mention prices in their summaries', () => {
    assert.deepEqual(runAlone(productCardsExtractor, 'articles.html'), []);
  });

  test('article-list alone would read a shop as linked headings; the classifier keeps it off shops', () => {
    const { html, pageUrl } = fixture('tricky-prices.html');
    const entries = articleListExtractor.extract(parsePage(html, pageUrl)!);
    assert.equal(entries.length, 7);
    assert.ok(entries.every((i) => i.source === 'article-list' && i.fields.url !== undefined));
    const result = extract(html, pageUrl);
    assert.equal(result.extractor, 'product-cards');
    assert.deepEqual(result.articles, [], "the shop's cards are not articles");
  });

  test('structured-data sources find nothing on pages without their markup', () => {
    for (const file of ['tricky-prices.html', 'articles.html', 'broken.html']) {
      assert.deepEqual(runAlone(jsonLdExtractor, file), [], `json-ld on ${file}`);
      assert.deepEqual(runAlone(microdataExtractor, file), [], `microdata on ${file}`);
      assert.deepEqual(runAlone(booksListingExtractor, file), [], `books-listing on ${file}`);
    }
  });

  test("og:type website is no product: the blog is read as a list of articles, not as the site's product", () => {
    const { html, pageUrl } = fixture('articles.html');
    assert.equal(runAlone(openGraphExtractor, 'articles.html')[0]?.fields.price, undefined);
    const result = extract(html, pageUrl);
    assert.ok(result.items.every((i) => i.price === null));
  });

  test('product-cards also finds the books layout (the layout is more trusted)', () => {
    const html = renderCataloguePage(1)!;
    const items = productCardsExtractor.extract(parsePage(html, `${SITE}/`)!);
    assert.deepEqual(
      items.map((i) => [i.fields.title?.value, i.fields.price?.value]),
      catalogueBooks()
        .slice(0, 20)
        .map((b) => [b.title, b.price]),
    );
  });

  test('a product page with JSON-LD and "you may also like" cards yields the JSON-LD product only', () => {
    const { html, pageUrl } = fixture('jsonld-product.html');
    assert.equal(runAlone(productCardsExtractor, 'jsonld-product.html').length, 2);
    const result = extract(html, pageUrl, { explain: true });
    assert.equal(result.extractor, 'json-ld');
    assert.equal(result.items.length, 1);
    assert.deepEqual(
      result.explanation?.dropped.find((d) => d.source === 'product-cards'),
      {
        source: 'product-cards',
        count: 2,
        reason: 'cards on a product page are other products (related items, carousels)',
      },
    );
  });
});

describe('product-cards heuristics', () => {
  const card = (n: number, price: string, extra = ''): string =>
    `<div class="col-4"><div class="card ${extra}"><a href="/p/${n}"><img src="/i/${n}.jpg" alt=""></a><div class="card-body"><h5>Product ${n}</h5>${price}</div></div></div>`;

  test('a grid split into rows is one listing; a card wins over its inner body', () => {
    const html = `<main><div class="row">${card(1, '<b class="price">$1</b>')}${card(2, '<b class="price">$2</b>')}${card(3, '<b class="price">$3</b>')}</div>
      <div class="row">${card(4, '<b class="price">$4</b>')}${card(5, '<b class="price">$5</b>')}${card(6, '<b class="price">$6</b>')}</div></main>`;
    const result = extract(html, `${SITE}/`);
    assert.equal(result.extractor, 'product-cards');
    assert.deepEqual(
      result.items.map((i) => [i.title, i.price, i.url]),
      [1, 2, 3, 4, 5, 6].map((n) => [`Product ${n}`, n, `${SITE}/p/${n}`]),
    );
  });

  test('a struck-through or "was" price above the current one is kept as the list price', () => {
    const html = `<section>
      ${card(1, '<div class="price-box"><del class="price">$20</del><span class="price">$15</span></div>')}
      ${card(2, '<div class="prices"><span class="price price--was">$30</span><span class="price price--now">$25</span></div>')}
      ${card(3, '<span class="price">$9</span>')}
    </section>`;
    assert.deepEqual(
      extract(html, `${SITE}/`).items.map((i) => [i.price, i.list_price]),
      [
        [15, 20],
        [25, 30],
        [9, null],
      ],
    );
  });

  test('the current price wins over struck-through and "was" prices; a sold-out card keeps its price', () => {
    const html = `<section>
      ${card(1, '<div class="price-box"><del class="price">$20</del><span class="price">$15</span></div>')}
      ${card(2, '<div class="prices"><span class="price price--was">$30</span><span class="price price--now">$25</span></div>')}
      ${card(3, '<span class="price">$9</span>', 'sold-out')}
    </section>`;
    assert.deepEqual(
      extract(html, `${SITE}/`).items.map((i) => [i.title, i.price_text]),
      [
        ['Product 1', '$15'],
        ['Product 2', '$25'],
        ['Product 3', '$9'],
      ],
    );
  });

  test('one priced card is not a listing', () => {
    const html = `<section>${card(1, '<span class="price">$9</span>')}${card(2, '')}</section>`;
    assert.equal(productCardsExtractor.extract(parsePage(html, `${SITE}/`)!).length, 0);
  });
});

describe('selectors extractor', () => {
  const { html, pageUrl } = fixture('tricky-prices.html');

  test('caller selectors win over every other method, link resolved against the page', () => {
    const result = extract(html, pageUrl, { selectors: { item: '.product-card', title: 'h3', price: '.special-price, .price', link: 'a.thumb' } });
    assert.equal(result.extractor, 'selectors');
    assert.equal(result.items.length, 7);
    assert.deepEqual(
      core(result.items)[0],
      item({ title: 'Leica M3 Vintage Camera', price_text: '$1,299.99', price: 1299.99, currency: 'USD', url: `${SITE}/items/vintage-camera` }),
    );
    assert.equal(result.items[0]?.provenance.title?.source, 'selectors');
  });

  test('the title comes from the title attribute when there is one', () => {
    const result = extract(renderCataloguePage(1)!, `${SITE}/`, { selectors: { item: 'article.product_pod', title: 'h3 a', price: '.price_color' } });
    assert.equal(result.extractor, 'selectors');
    assert.deepEqual(
      result.items.map((i) => i.title),
      catalogueBooks()
        .slice(0, 20)
        .map((b) => b.title),
    );
  });

  test('description selector, and link defaulting to the title link', () => {
    const result = extract(fixture('articles.html').html, fixture('articles.html').pageUrl, {
      selectors: { item: 'main article', title: '.entry-title', price: '.none', description: '.summary' },
    });
    assert.equal(result.extractor, 'selectors');
    assert.deepEqual(
      core(result.items)[0],
      item({
        title: 'Mapping the Tides of the Severn Estuary',
        url: `${SITE}/2024/05/mapping-the-tides/`,
        description: 'The second-highest tidal range in the world, measured with a borrowed theodolite and a great deal of patience.',
      }),
    );
  });

  test('invalid or non-matching selectors fall through to the other extractors', () => {
    assert.equal(extract(html, pageUrl, { selectors: { item: '!!not css((', title: 'h3', price: '.price' } }).extractor, 'product-cards');
    assert.equal(extract(html, pageUrl, { selectors: { item: '.no-such-card', title: 'h3', price: '.price' } }).extractor, 'product-cards');
    assert.equal(extract(html, pageUrl, { selectors: { item: '.product-card', title: '[[', price: '.price' } }).extractor, 'product-cards');
  });
});

describe('JSON-LD details', () => {
  const page = (...blocks: string[]): string => `<html><head>${blocks.map((b) => `<script type="application/ld+json">${b}</script>`).join('')}</head><body></body></html>`;

  test('a block with trailing commas is repaired; a block that is not JSON is skipped alone', () => {
    const result = extract(
      page('{"@type": "Product", "name": "A", "offers": {"price": 1, "priceCurrency": "usd",},}', '{oops', '[{"@type":"Product","name":"B","offers":{"price":"2"}}]'),
      `${SITE}/x`,
    );
    assert.equal(result.page_type, 'listing');
    assert.deepEqual(
      result.items.map((i) => [i.title, i.price, i.currency]),
      [
        ['A', 1, 'USD'],
        ['B', 2, null],
      ],
    );
  });

  test("one priced product beside unpriced ones is the page's product; the others are related items", () => {
    const result = extract(page('{"@type": "Product", "name": "A", "offers": {"price": 1, "priceCurrency": "USD"}}', '[{"@type":"Product","name":"B"}]'), `${SITE}/x`);
    assert.equal(result.page_type, 'product');
    assert.deepEqual(
      result.items.map((i) => [i.title, i.price]),
      [['A', 1]],
    );
  });

  test('CDATA and comment wrappers around the JSON are tolerated', () => {
    const product = '{"@type": "Product", "name": "Wrapped", "offers": {"price": "2.50", "priceCurrency": "EUR"}}';
    for (const wrapped of [`//<![CDATA[\n${product}\n//]]>`, `/* <![CDATA[ */ ${product} /* ]]> */`, `<!-- ${product} -->`]) {
      assert.deepEqual(
        extract(page(wrapped), `${SITE}/`).items.map((i) => [i.title, i.price, i.currency]),
        [['Wrapped', 2.5, 'EUR']],
        wrapped,
      );
    }
  });

  test('ItemList entries that are only url + name become items without price', () => {
    const list = {
      '@type': 'ItemList',
      itemListElement: [
        { '@type': 'ListItem', position: 1, url: '/a', name: 'First' },
        { '@type': 'ListItem', item: '/b', name: 'Second' },
      ],
    };
    assert.deepEqual(core(extract(page(JSON.stringify(list)), `${SITE}/list/`).items), [item({ title: 'First', url: `${SITE}/a` }), item({ title: 'Second', url: `${SITE}/b` })]);
  });

  test('an Offer with itemOffered, and prices that are negative or absurd, are handled', () => {
    const offers = {
      '@type': 'ItemList',
      itemListElement: [
        { '@type': 'Offer', price: '9.99', priceCurrency: 'GBP', itemOffered: { '@type': 'Product', name: 'Offered' } },
        { '@type': 'Product', name: 'Negative', offers: { price: -3 } },
        { '@type': 'Product', name: 'Absurd', offers: { price: 1e300 } },
      ],
    };
    assert.deepEqual(
      extract(page(JSON.stringify(offers)), `${SITE}/`).items.map((i) => [i.title, i.price, i.currency]),
      [
        ['Offered', 9.99, 'GBP'],
        ['Negative', null, null],
        ['Absurd', null, null],
      ],
    );
  });
});

describe('OpenGraph details', () => {
  test('og:price:amount without og:type still makes a product; the URL falls back to the page', () => {
    const html = `<html><head><title>Fallback title</title>
      <meta name="og:price:amount" content="1.299,00"><meta property="og:price:currency" content="EUR"></head><body></body></html>`;
    assert.deepEqual(core(extract(html, `${SITE}/p/1`).items), [item({ title: 'Fallback title', price_text: '1.299,00', price: 1299, currency: 'EUR', url: `${SITE}/p/1` })]);
  });

  test('og:type website without prices is not a product', () => {
    const html = '<html><head><meta property="og:type" content="website"><meta property="og:title" content="Home"></head></html>';
    assert.equal(extract(html, `${SITE}/`).extractor, null);
  });
});

describe('normalisation and next links', () => {
  test('whitespace collapses, long titles are capped at 500, empty titles are dropped, repeats removed', () => {
    const long = 'x'.repeat(800);
    const html = `<ul>
      <li class="c"><h3><a href="/1">  Spaced \n\t out&nbsp;title </a></h3><span class="price">£1.00</span></li>
      <li class="c"><h3><a href="/1">Spaced out title</a></h3><span class="price">£1.00</span></li>
      <li class="c"><h3><a href="/2">${long}</a></h3><span class="price">£2.00</span></li>
      <li class="c"><h3><a href="/3">   </a></h3><span class="price">£3.00</span></li>
    </ul>`;
    const result = extract(html, `${SITE}/`);
    assert.equal(result.extractor, 'product-cards');
    assert.deepEqual(
      result.items.map((i) => [i.title.length > 100 ? i.title.length : i.title, i.url]),
      [
        ['Spaced out title', `${SITE}/1`],
        [500, `${SITE}/2`],
      ],
    );
  });

  const next = (body: string, pageUrl = `${SITE}/list/page-1.html`): string | null => extract(`<html><head></head><body>${body}</body></html>`, pageUrl).nextUrl;

  test('next link from li.next, a[rel~=next] and link[rel~=next], made absolute', () => {
    assert.equal(next('<ul class="pager"><li class="next"><a href="page-2.html">next</a></li></ul>'), `${SITE}/list/page-2.html`);
    assert.equal(next('<a rel="nofollow next" href="/list?p=2">More</a>'), `${SITE}/list?p=2`);
    assert.equal(extract('<html><head><link rel="next" href="https://other.example/p3"></head></html>', `${SITE}/`).nextUrl, 'https://other.example/p3');
  });

  test('next link is never the page itself nor a non-http URL', () => {
    assert.equal(next('<li class="next"><a href="page-1.html#top">next</a></li>'), null);
    assert.equal(next('<a rel="next" href="javascript:void(0)">next</a>'), null);
    assert.equal(next('<a rel="next" href="mailto:me@example.com">next</a>'), null);
    assert.equal(next('<li class="next"><a href="#">next</a></li>'), null);
    assert.equal(next('<li class="next"><a href="">next</a></li><a rel="next" href="page-3.html">3</a>'), `${SITE}/list/page-3.html`);
  });
});

describe('hostile input', () => {
  test('empty, binary and truncated documents give no items and do not throw', () => {
    for (const html of ['', '\u0000\u0001\uFFFD\uD800', '<', '<html><body><div class="card"><h3>T', '<script type="application/ld+json">{"@graph": [[[[[[', 'x'.repeat(100_000)]) {
      const result = extract(html, `${SITE}/`);
      assert.equal(result.extractor, null);
    }
  });

  test('an invalid pageUrl still extracts, with relative links left null', () => {
    const result = extract(renderCataloguePage(1)!, 'not a url');
    assert.equal(result.extractor, 'books-listing');
    assert.equal(result.items[0]?.url, null);
    assert.equal(result.nextUrl, null);
  });

  test('deeply nested markup does not overflow the stack: the product 10,000 levels down is found, with a bounded path', () => {
    const depth = 10_000;
    const html = `${'<div>'.repeat(depth)}<h1>A</h1><span class="price">£1</span>${'</div>'.repeat(depth)}`;
    const [found, ...rest] = extract(html, `${SITE}/`).items;
    assert.deepEqual(rest, []);
    assert.deepEqual([found?.title, found?.price, found?.currency], ['A', 1, 'GBP']);
    // The path of 10,000 divs is kept by its specific end, bounded for storage.
    assert.match(found?.provenance.title?.locator ?? '', /^… .*div > div > h1$/);
    assert.ok((found?.provenance.title?.locator.length ?? Infinity) <= 1000);
  });

  test('schema.org graphs whose references point at each other are walked once per node, in microdata and JSON-LD', async (t) => {
    // Each item refers to all the others: a walk of every path through the graph (16 levels deep)
    // would never end, so the page is extracted in a thread the test can stop (the hang guard).
    const pool = new Piscina<ExtractTask, ExtractionResult>({
      filename: fileURLToPath(new URL('../../../src/scraping/extract/extract-worker.ts', import.meta.url)),
      maxThreads: 1,
    });
    t.after(() => pool.destroy());
    // The thread loads the extraction code first, untimed: the guard is for the page, not for a busy machine's start.
    await pool.run({ html: '<p>warm</p>', pageUrl: `${SITE}/`, options: {} });
    const ids = Array.from({ length: 12 }, (_, i) => `n${i}`);
    const microdata = ids
      .map(
        (id) =>
          `<div id="${id}" itemprop="related" itemscope itemtype="https://schema.org/Thing" itemref="${ids.filter((other) => other !== id).join(' ')}"><span itemprop="name">${id}</span></div>`,
      )
      .join('');
    const graph = ids.map((id) => ({ '@id': `#${id}`, '@type': 'Thing', name: id, related: ids.filter((other) => other !== id).map((other) => ({ '@id': `#${other}` })) }));
    const product = '<script type="application/ld+json">{"@type":"Product","name":"Mesh lamp","offers":{"price":"9.50","priceCurrency":"EUR"}}</script>';
    for (const html of [`<body>${microdata}${product}</body>`, `<body><script type="application/ld+json">${JSON.stringify({ '@graph': graph })}</script>${product}</body>`]) {
      assert.ok(html.length < 10_000, 'a small page');
      const result = await pool.run({ html, pageUrl: `${SITE}/`, options: {} }, { signal: AbortSignal.timeout(30_000) });
      assert.deepEqual(
        result.items.map((i) => [i.title, i.price]),
        [['Mesh lamp', 9.5]],
      );
    }
  });

  test('pages built against the visible and embedded readers finish, in a thread the test can stop (the hang guard)', async (t) => {
    const pool = new Piscina<ExtractTask, ExtractionResult>({
      filename: fileURLToPath(new URL('../../../src/scraping/extract/extract-worker.ts', import.meta.url)),
      maxThreads: 1,
    });
    t.after(() => pool.destroy());
    await pool.run({ html: '<p>warm</p>', pageUrl: `${SITE}/`, options: {} });
    const head = '<title>Mesh lamp</title>';
    const pages = [
      // thousands of buttons that each submit the same named form
      `<head>${head}</head><body><h1>Mesh lamp</h1><span class="price">€9.50</span><form name="f" action="/cart"></form>${'<a onclick="document.f.submit();" href="#">Kupi</a>'.repeat(5000)}</body>`,
      // thousands of split-price fragments and labels without values
      `<head>${head}</head><body><h1>Mesh lamp</h1><span class="price">€9.50</span><button>Add to cart</button>${'<div><span>€</span><span>1</span><span>4 bids</span><b>SKU:</b></div>'.repeat(5000)}</body>`,
      // a wide page: tens of thousands of stock lines, codes and prices side by side in one element
      `<head>${head}</head><body><h1>Mesh lamp</h1><span class="price">€9.50</span><button>Add to cart</button>${'<p>In stock</p><p>SKU: A1</p><span class="price">€1</span>'.repeat(40_000)}</body>`,
      // nested headings and code-marked elements, each holding all the others
      `<head>${head}</head><body><h1>Mesh lamp</h1><span class="price">€9.50</span><button>Add to cart</button>${'<h1 class="product-title"><span class="sku">'.repeat(3000)}A1${'</span></h1>'.repeat(3000)}</body>`,
      // app state: unclosed brackets, many assignments, deep nesting
      `<head>${head}<script>${'window.__STATE__ = {"a":['.repeat(2000)}</script><script>var meta = ${'{"x":'.repeat(5000)}1${'}'.repeat(5000)};</script></head><body><h1>Mesh lamp</h1><span class="price">€9.50</span><button>Add to cart</button></body>`,
    ];
    for (const html of pages) {
      const result = await pool.run({ html, pageUrl: `${SITE}/p/1`, options: {} }, { signal: AbortSignal.timeout(60_000) });
      assert.deepEqual(
        result.items.map((i) => [i.title, i.price]),
        [['Mesh lamp', 9.5]],
      );
    }
  });

  test('random HTML-ish markup gives only storable items, and a product stated after it is still found', () => {
    const piece = fc.oneof(
      fc.constantFrom(
        '<div class="card">',
        '</div>',
        '<h3>',
        '</h3>',
        '<a href="/x">',
        '<a href=',
        '</a>',
        '<span class="price">',
        '$1,299.99',
        '£0.99',
        '<article>',
        '<script type="application/ld+json">',
        '{"@type":"Product","name":',
        '</script>',
        '<li class="next">',
        '<meta property="og:type" content="product">',
        '<div itemscope itemtype="https://schema.org/Product">',
        '<span itemprop="name">',
        '<!--',
        '-->',
        '&amp;',
        '&#x',
        '<![CDATA[',
        '\u0000',
      ),
      fc.string({ unit: 'binary', maxLength: 20 }),
    );
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 60 }), fc.webUrl(), (pieces, pageUrl) => {
        const result = extract(pieces.join(''), pageUrl);
        for (const item of result.items) {
          assert.ok(item.title.trim().length > 0 && item.title.length <= 500, JSON.stringify(item.title));
          assert.ok(item.price === null || (Number.isFinite(item.price) && item.price >= 0), String(item.price));
        }
        // A product stated after the noise (its open constructs closed) is still found.
        const planted = extract(
          `${pieces.join('')}--></script>\n<script type="application/ld+json">{"@type":"Product","name":"Planted lamp","offers":{"price":"12.50","priceCurrency":"EUR"}}</script>`,
          pageUrl,
        );
        // (Unless the noise left a construct only its own end closes: an attribute value or a CDATA section.)
        if (!/<a href=(?!"\/x">)|<!\[CDATA\[|&#x$/.test(pieces.join(''))) {
          const found = planted.items.find((i) => i.title === 'Planted lamp');
          assert.deepEqual([found?.price, found?.currency], [12.5, 'EUR'], `lost after ${JSON.stringify(pieces.join('').slice(0, 200))}`);
        }
      }),
      // A fixed seed: the same 300 cases every run (random noise can, rarely, legitimately swallow what follows).
      { numRuns: 300, seed: 1234 },
    );
  });
});

describe('books catalogue fixture', () => {
  const books = catalogueBooks();
  const expected = (slice: CatalogueBook[]): CoreItem[] =>
    slice.map((b) => item({ title: b.title, price_text: b.priceText, price: b.price, currency: b.currency, url: new URL(b.detailPath, `${SITE}/`).href }));

  /** A catalogue page: its books through books-listing, its next link, and its content the cards (each title with its price), not the site's navigation. */
  const assertCataloguePage = (n: number, pageUrl: string, slice: CatalogueBook[], next: string) => {
    const result = extract(renderCataloguePage(n)!, pageUrl);
    const { content, markdown: _markdown, ...rest } = result;
    assert.deepEqual({ ...rest, items: core(result.items) }, { page_type: 'listing', extractor: 'books-listing', items: expected(slice), articles: [], nextUrl: next });
    for (const book of slice) assert.ok(content.includes(book.priceText) && content.includes(book.title.slice(0, 30)), book.title);
    assert.ok(!content.includes('Books to Scrape We love being scraped!'));
    return result;
  };

  test('page 1 (served at the root) extracts to the first 20 books with books-listing and links to page 2', () => {
    const result = assertCataloguePage(1, `${SITE}/`, books.slice(0, 20), `${SITE}/catalogue/page-2.html`);
    assert.ok(result.items.every((i) => i.availability === 'in_stock'));
  });

  test('page 2 (served under catalogue/) extracts to books 21-40 with absolute detail URLs and links to page 3', () => {
    assertCataloguePage(2, `${SITE}/catalogue/page-2.html`, books.slice(20, 40), `${SITE}/catalogue/page-3.html`);
  });

  test('the last page has no next link, so the pager stops there', () => {
    assert.equal(extract(renderCataloguePage(3)!, `${SITE}/catalogue/page-3.html`).nextUrl, null);
  });
});
