// The product code (and price) a page keeps for its scripts and in its address: hidden fields, data attributes, analytics, app state, /dp/, /itm/; bounded on hostile input.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { embeddedDataExtractor } from '../../../src/scraping/extract/structured/embedded-data-extractor.js';
import { embeddedJson } from '../../../src/scraping/extract/structured/embedded-json.js';
import { parsePage } from '../../../src/scraping/extract/page.js';
import { urlExtractor } from '../../../src/scraping/extract/visible/url-extractor.js';

const SITE = 'http://shop.example';

function pageOf(body: string, url = `${SITE}/p/1`, head = '<title>Walnut Desk Tidy | Example Shop</title>') {
  const page = parsePage(`<!doctype html><html><head>${head}</head><body>${body}</body></html>`, url);
  assert.ok(page !== null);
  return page;
}

describe('the code in the page address', () => {
  const CASES: ReadonlyArray<readonly [path: string, sku: string | undefined]> = [
    ['/dp/B0C7K2M9QX', 'B0C7K2M9QX'],
    ['/Sea-Salt-Crackers/dp/B0C7K2M9QX/ref=sr_1_1?keywords=crackers', 'B0C7K2M9QX'],
    ['/gp/product/B0D4R8T2WZ', 'B0D4R8T2WZ'],
    ['/itm/410293847561', '410293847561'],
    ['/itm/Vintage-Brass-Desk-Lamp-/410293847561?hash=item5f', '410293847561'],
    ['/store/1200?pid=508113', '508113'],
    ['/catalog/item?productId=AB-123456', 'AB-123456'],
    ['/product/5512034', '5512034'],
    ['/shop/K40718263.htm', 'K40718263'],
    ['/app/d/tumble-dryer-7kg/6630917724.html', '6630917724'],
    ['/Prod/208311/', '208311'],
    ['/carriers/Baby_Carrier_Air-552310.html', '552310'],
    ['/jumpers/ribbed-wool-jumper-30471188.html', '30471188'],
    // not codes: a lower-case prefix, a year, words, a short number
    ['/suede-desert-boot/p6120334', undefined],
    ['/blog/2020/12/', undefined],
    ['/category/shoes', undefined],
    ['/p/12345', undefined],
    ['/?sort=price&page=2', undefined],
  ];
  for (const [path, sku] of CASES) {
    test(`${path} -> ${sku ?? 'nothing'}`, () => {
      const [candidate] = urlExtractor.extract(pageOf('<h1>x</h1>', `${SITE}${path}`));
      assert.equal(candidate?.fields.sku?.value, sku);
    });
  }

  test("the canonical address is the shop's own and comes first", () => {
    const page = pageOf('<h1>x</h1>', `${SITE}/mirror/view?pid=999999`, '<link rel="canonical" href="https://www.example.com/Title/dp/B0C7K2M9QX">');
    assert.equal(urlExtractor.extract(page)[0]?.fields.sku?.value, 'B0C7K2M9QX');
  });
});

describe('the code and price the page embeds', () => {
  const CASES: ReadonlyArray<readonly [name: string, body: string, sku: string | undefined]> = [
    ['a hidden ASIN field', '<form action="/gp/buy"><input type="hidden" id="ASIN" name="ASIN" value="B0C7K2M9QX"></form>', 'B0C7K2M9QX'],
    ['a hidden ad number', '<form action="/report"><input type="hidden" name="adno" value="307718264"></form>', '307718264'],
    ['a hidden ProductId of the cart form', '<form action="/Basket/Add"><input name="ProductId" type="hidden" value="220457913"></form>', '220457913'],
    ['data-product-code anywhere', '<div id="store-stock" data-sku-id="330917254" data-product-code="51230087"></div>', '51230087'],
    ['data-sku on the cart form', '<form action="/cart/add" data-sku="KT-2041"><button>Add</button></form>', 'KT-2041'],
    ["data-sku elsewhere is a variant's, not read", '<div class="swatch" data-sku="411902735"></div>', undefined],
    ['a hidden field that is not an id', '<input type="hidden" name="session-id" value="123-4567890-1234567">', undefined],
    [
      'the detail product of enhanced ecommerce, its article number first',
      '<script>dataLayer = [{"ecommerce":{"detail":{"products":[{"id":"4012345000017","name":"Jumper","articleNumber":"30471188"}]}}}];</script>',
      '30471188',
    ],
    [
      'the one item of a GA4 view_item',
      '<script>dataLayer.push({"event":"view_item","ecommerce":{"items":[{"item_id":"SKU-9912","item_name":"Desk Tidy"}]}});</script>',
      'SKU-9912',
    ],
    ["Shopify's product: the sku its variants share", '<script>var meta = {"product":{"id":7012345678901,"variants":[{"id":1,"sku":"3310472"}]}};</script>', '3310472'],
    ["Shopify's product whose variants differ has no one sku", '<script>var meta = {"product":{"variants":[{"sku":"DT-100"},{"sku":"DT-200"}]}};</script>', undefined],
    [
      "app state: the object with a sku and the page's name",
      '<script id="__NEXT_DATA__" type="application/json">{"props":{"related":[{"sku":"OTHER-1","name":"Brass Letter Opener"}],"product":{"sku":"WDT-001","name":"Walnut Desk Tidy"}}}</script>',
      'WDT-001',
    ],
    ['state that is JavaScript, not JSON, is skipped', "<script>window.__INITIAL_STATE__ = {sku: 'X1', name: 'Walnut Desk Tidy'};</script>", undefined],
  ];
  for (const [name, body, sku] of CASES) {
    test(`${name} -> ${sku ?? 'nothing'}`, () => {
      const [candidate] = embeddedDataExtractor.extract(pageOf(body));
      assert.equal(candidate?.fields.sku?.value, sku);
    });
  }

  test("Amazon's data-asin-price with its currency code is a price; an empty one is not", () => {
    const [priced] = embeddedDataExtractor.extract(pageOf('<div id="cerberus-data-metrics" style="display:none" data-asin-price="52.49" data-asin-currency-code="GBP"></div>'));
    assert.deepEqual([priced?.fields.price?.value, priced?.fields.currency?.value], [52.49, 'GBP']);
    assert.deepEqual(embeddedDataExtractor.extract(pageOf('<div data-asin-price="" data-asin-currency-code=""></div>')), []);
  });

  test("Magento's final price is a price", () => {
    const [candidate] = embeddedDataExtractor.extract(
      pageOf('<span data-price-type="oldPrice" data-price-amount="64"></span><span data-price-type="finalPrice" data-price-amount="49.5"></span>'),
    );
    assert.equal(candidate?.fields.price?.value, 49.5);
  });
});

describe('embedded JSON on hostile input', () => {
  test('a state blob above a megabyte is not parsed', () => {
    const big = JSON.stringify({ product: { variants: [{ sku: 'BIG-1' }] }, pad: 'x'.repeat(1_100_000) });
    assert.deepEqual(embeddedJson(pageOf(`<script>var meta = ${big};</script>`)), []);
  });

  test('unclosed brackets, brackets inside strings and broken JSON are skipped without throwing', () => {
    const found = embeddedJson(pageOf('<script>dataLayer = [{"a":"]}}}"</script><script>var meta = {"product":{"variants":[{"sku":"OK-1"}]}}; dataLayer.push({broken);</script>'));
    assert.deepEqual(
      found.map((f) => f.locator),
      ['script[1] meta'],
    );
  });

  test('many assignments in one script are read only up to a bound', () => {
    const many = Array.from({ length: 50 }, (_, i) => `dataLayer.push({"i":${i}});`).join('');
    assert.equal(embeddedJson(pageOf(`<script>${many}</script>`)).length, 8);
  });
});
