// Extraction on pages that imitate real structures: each fixture against what a shopper reads on it, and the merge of evidence per field.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, test } from 'node:test';
import { articleListExtractor } from '../../../src/scraping/extract/article/article-list-extractor.js';
import { extract } from '../../../src/scraping/extract/index.js';
import { jsonLdExtractor } from '../../../src/scraping/extract/structured/jsonld-extractor.js';
import { openGraphExtractor } from '../../../src/scraping/extract/structured/meta-extractor.js';
import { microdataExtractor } from '../../../src/scraping/extract/structured/microdata-extractor.js';
import { parsePage } from '../../../src/scraping/extract/page.js';
import { productCardsExtractor } from '../../../src/scraping/extract/visible/product-cards-extractor.js';
import { rdfaExtractor } from '../../../src/scraping/extract/structured/rdfa-extractor.js';
import type { Extractor } from '../../../src/scraping/extract/extractor.js';
import { visibleExtractor } from '../../../src/scraping/extract/visible/visible-extractor.js';

const SITE = 'http://127.0.0.1:1234';
const pagesDir = new URL('../../fixtures/pages/', import.meta.url);

interface Expected {
  imitates: string;
  page_type: string;
  products: Array<{ title: string; price: number; currency: string; list_price: number | null; availability: string | null; sku: string | null; url: string | null }>;
  articles?: number;
}
const expectations = JSON.parse(readFileSync(new URL('expectations.json', pagesDir), 'utf8')) as Record<string, Expected>;

describe('pages that imitate real shops and news sites', () => {
  for (const [file, expected] of Object.entries(expectations)) {
    test(`${file}: ${expected.imitates.split(':')[0]} -> ${expected.page_type}, ${expected.products.length} products`, () => {
      const result = extract(readFileSync(new URL(file, pagesDir), 'utf8'), `${SITE}/pages/${file}`, { explain: true });
      const reasons = result.explanation?.page_type.reasons.join('; ');
      assert.equal(result.page_type, expected.page_type, reasons);
      const priced = result.items.filter((i) => i.price !== null);
      assert.deepEqual(
        priced.map(({ title, price, currency, list_price, availability, sku, url }) => ({ title, price, currency, list_price, availability, sku, url })),
        expected.products,
        reasons,
      );
      if (expected.articles !== undefined) {
        assert.equal(result.articles.length, expected.articles, 'the article, or the teasers read as articles');
        if (expected.page_type === 'article') assert.ok((result.articles[0]?.word_count ?? 0) > 100, 'the article has its body');
        else
          assert.ok(
            result.articles.every((a) => a.body === null && a.url !== null),
            "a listing's entries have no body, and a link",
          );
        assert.equal(result.items.length, priced.length, 'no price-less products');
      }
    });
  }

  test('the product page keeps the related cards out, and explain says so', () => {
    const result = extract(readFileSync(new URL('product-page-carousel.html', pagesDir), 'utf8'), `${SITE}/pages/product-page-carousel.html`, { explain: true });
    assert.equal(result.items.length, 1);
    assert.ok((result.explanation?.candidates['product-cards']?.length ?? 0) >= 3, 'the carousel cards were found');
    assert.ok(result.explanation?.dropped.some((d) => d.source === 'product-cards' && /related/.test(d.reason)));
    assert.deepEqual(result.items[0]?.provenance.list_price?.source, 'visible');
  });
});

/** A page with only a <head> of meta tags and the body given. */
const page = (head: string, body: string) => `<!doctype html><html><head>${head}</head><body>${body}</body></html>`;

describe('merged evidence: each field from the most trusted source that states it', () => {
  test('a microdata Product with a name and no price takes its price from Open Graph', () => {
    const html = page(
      '<meta property="og:type" content="product"><meta property="product:price:amount" content="24.00"><meta property="product:price:currency" content="EUR">',
      '<div itemscope itemtype="https://schema.org/Product"><h1 itemprop="name">Walnut Desk Tidy</h1><img itemprop="image" src="/tidy.jpg"></div>',
    );
    const [item] = extract(html, `${SITE}/tidy`).items;
    assert.deepEqual([item?.title, item?.price, item?.currency, item?.image_url], ['Walnut Desk Tidy', 24, 'EUR', `${SITE}/tidy.jpg`]);
    assert.deepEqual([item?.provenance.title?.source, item?.provenance.price?.source, item?.provenance.image_url?.source], ['microdata', 'opengraph', 'microdata']);
    assert.equal(item?.provenance.price?.locator, 'meta[property="product:price:amount"]');
  });

  test('Open Graph gives the title; the visible "Price: $165.95" beside the buy button gives the price', () => {
    const html = page(
      '<meta property="og:type" content="product"><meta property="og:title" content="Canvas Tote">',
      '<main><h1>Canvas Tote</h1><form action="/cart/add"><p>Price: $165.95</p><button type="submit">Add to Cart</button></form></main>',
    );
    const [item] = extract(html, `${SITE}/tote`).items;
    assert.deepEqual([item?.title, item?.price, item?.currency, item?.availability], ['Canvas Tote', 165.95, 'USD', 'in_stock']);
    assert.deepEqual([item?.provenance.title?.source, item?.provenance.price?.source], ['opengraph', 'visible']);
  });

  test('JSON-LD and microdata of the same product merge into one item, JSON-LD winning where both speak', () => {
    const html = page(
      '<script type="application/ld+json">{"@type":"Product","name":"Desk Lamp","sku":"DL-1","offers":{"price":"49.00","priceCurrency":"GBP"}}</script>',
      '<div itemscope itemtype="https://schema.org/Product"><h1 itemprop="name">Desk Lamp</h1><span itemprop="sku">DL-1</span><span itemprop="gtin13">5012345678900</span><div itemprop="offers" itemscope itemtype="https://schema.org/Offer"><span itemprop="price" content="45.00">£45</span><link itemprop="availability" href="https://schema.org/OutOfStock"></div></div>',
    );
    const { items, page_type } = extract(html, `${SITE}/lamp`);
    assert.equal(page_type, 'product');
    assert.equal(items.length, 1);
    const [item] = items;
    assert.deepEqual([item?.price, item?.gtin, item?.availability], [49, '5012345678900', 'out_of_stock']);
    assert.deepEqual([item?.provenance.price?.source, item?.provenance.gtin?.source, item?.provenance.availability?.source], ['json-ld', 'microdata', 'microdata']);
  });

  test('a sale and a list price in JSON-LD: price is what a buyer pays now, the ListPrice is kept beside it', () => {
    const offer = {
      '@type': 'Offer',
      price: '79.99',
      priceCurrency: 'USD',
      priceSpecification: [{ '@type': 'UnitPriceSpecification', priceType: 'https://schema.org/ListPrice', price: '99.99', priceCurrency: 'USD' }],
    };
    const html = page(`<script type="application/ld+json">${JSON.stringify({ '@type': 'Product', name: 'Trail Shoe', offers: offer })}</script>`, '');
    const [item] = extract(html, `${SITE}/shoe`).items;
    assert.deepEqual([item?.price, item?.list_price], [79.99, 99.99]);
    assert.equal(item?.provenance.list_price?.locator, 'ld+json[0] $.offers.priceSpecification[0].price');
  });

  test('a list price that is not above the price is no sale, and is dropped', () => {
    const offer = { price: '99.99', priceSpecification: { priceType: 'ListPrice', price: '99.99' } };
    const [item] = extract(page(`<script type="application/ld+json">${JSON.stringify({ '@type': 'Product', name: 'Same', offers: offer })}</script>`, ''), `${SITE}/same`).items;
    assert.equal(item?.list_price, null);
  });

  test('an AggregateOffer states a range: price is the low end, the high end is kept in the raw item', () => {
    const offers = { '@type': 'AggregateOffer', lowPrice: '5.29', highPrice: '9.56', priceCurrency: 'GBP', offerCount: 2 };
    const [item] = extract(page(`<script type="application/ld+json">${JSON.stringify({ '@type': 'Product', name: 'Flea Tablets', offers })}</script>`, ''), `${SITE}/t`).items;
    assert.deepEqual([item?.price, item?.high_price, item?.currency], [5.29, 9.56, 'GBP']);
  });

  test('microdata and RDFa items of other types that carry offers are products (Book, Vehicle)', () => {
    const book =
      '<div itemscope itemtype="https://schema.org/Book"><h1 itemprop="name">The Long Field</h1><span itemprop="isbn">0-316-76948-7</span><div itemprop="offers" itemscope itemtype="https://schema.org/Offer"><span itemprop="price">12.99</span><meta itemprop="priceCurrency" content="GBP"></div></div>';
    const [fromMicrodata] = extract(page('', book), `${SITE}/book`).items;
    assert.deepEqual([fromMicrodata?.title, fromMicrodata?.price, fromMicrodata?.gtin], ['The Long Field', 12.99, '9780316769488'], 'an ISBN-10 becomes its ISBN-13');
    const vehicle =
      '<div vocab="https://schema.org/" typeof="Vehicle"><h1 property="name">2019 Estate, 1.6 petrol</h1><div property="offers" typeof="Offer"><span property="price" content="8450">£8,450</span><meta property="priceCurrency" content="GBP"></div></div>';
    const [fromRdfa] = extract(page('', vehicle), `${SITE}/car`).items;
    assert.deepEqual([fromRdfa?.title, fromRdfa?.price, fromRdfa?.price_text, fromRdfa?.provenance.price?.source], ['2019 Estate, 1.6 petrol', 8450, '£8,450', 'rdfa']);
  });

  test('a review that marks up the reviewed product without an offer yields no product; with an offer it does', () => {
    const review = (offers: string) =>
      page(
        `<meta property="og:type" content="article"><script type="application/ld+json">{"@type":"Review","itemReviewed":{"@type":"Product","name":"Console X"${offers}},"reviewRating":{"ratingValue":8}}</script>`,
        '<article><h1>Console X review</h1><div class="score"><h3>Console X</h3><span class="price">$610</span></div><p>Verdict.</p></article>',
      );
    assert.deepEqual(extract(review(''), `${SITE}/review`).items, []);
    const marked = extract(review(',"offers":{"price":"499","priceCurrency":"USD"}'), `${SITE}/review`).items;
    assert.deepEqual(
      marked.map((i) => [i.title, i.price]),
      [['Console X', 499]],
    );
  });
});

describe('each source of evidence alone on those pages', () => {
  const read = (file: string) => parsePage(readFileSync(new URL(file, pagesDir), 'utf8'), `${SITE}/pages/${file}`)!;
  /** [source, page, candidates found, what the first one says] */
  const CASES: ReadonlyArray<readonly [Extractor, string, number, Record<string, unknown>]> = [
    [
      rdfaExtractor,
      'rdfa-product.html',
      1,
      { title: 'Kestrel K7 Full-Frame Mirrorless Camera (Body Only)', price: 1249, price_text: '$1,249.00', list_price: 1499, availability: 'in_stock', gtin: '4063219874523' },
    ],
    [jsonLdExtractor, 'rdfa-product.html', 0, {}],
    [microdataExtractor, 'product-og-visible.html', 1, { title: 'Harlow Leather Messenger Bag', price: undefined }],
    [openGraphExtractor, 'product-og-visible.html', 1, { title: 'Harlow Leather Messenger Bag | Tanner & Finch', price: undefined }],
    [visibleExtractor, 'product-og-visible.html', 1, { title: 'Harlow Leather Messenger Bag', price: 165.95, sku: 'TF-MB-014' }],
    [visibleExtractor, 'product-page-carousel.html', 1, { price: 64, list_price: 80, availability: 'in_stock', sku: 'KT-2041-BLK' }],
    [productCardsExtractor, 'product-page-carousel.html', 4, { title: 'Oak Pot Trivet', price: 12.5 }],
    [jsonLdExtractor, 'review-score-box.html', 0, {}],
    [productCardsExtractor, 'listing-with-buttons.html', 8, { title: 'Aurora 1.7L Glass Kettle', price: 29.99 }],
  ];
  test('article-list on news-subscription-cards.html: 9 entries, each with a link', () => {
    const found = articleListExtractor.extract(read('news-subscription-cards.html'));
    assert.equal(found.length, 9, JSON.stringify(found.map((c) => c.fields.title?.value)));
    assert.ok(found.every((c) => c.source === 'article-list' && c.fields.url !== undefined));
  });
  for (const [extractor, file, count, first] of CASES) {
    test(`${extractor.source} on ${file}: ${count} candidate${count === 1 ? '' : 's'}`, () => {
      const found = extractor.extract(read(file));
      assert.equal(found.length, count, JSON.stringify(found.map((c) => c.fields.title?.value)));
      for (const [field, value] of Object.entries(first)) {
        assert.deepEqual(found[0]?.fields[field as keyof (typeof found)[0]['fields']]?.value, value, field);
      }
      for (const candidate of found) assert.equal(candidate.source, extractor.source);
    });
  }
});
