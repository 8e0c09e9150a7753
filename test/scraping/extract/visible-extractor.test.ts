// The visible product page as tables: the title, the buy controls, the price of the buy box, the stock line and the product code, on markup that imitates real shops.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { extract } from '../../../src/scraping/extract/index.js';
import { parsePage } from '../../../src/scraping/extract/page.js';
import { codeLabel } from '../../../src/scraping/extract/visible/product-codes.js';
import { splitPriceText } from '../../../src/scraping/extract/visible/split-prices.js';
import { stockFromText } from '../../../src/scraping/extract/visible/stock-text.js';
import { readVisible, type VisibleEvidence } from '../../../src/scraping/extract/visible/visible-extractor.js';

const PAGE_URL = 'http://shop.example/p/desk-tidy';

/** The visible evidence of a page with this <title> and body. */
function visible(body: string, title = 'Walnut Desk Tidy | Example Shop'): VisibleEvidence {
  const page = parsePage(`<!doctype html><html><head><title>${title}</title></head><body>${body}</body></html>`, PAGE_URL);
  assert.ok(page !== null);
  return readVisible(page);
}

const fields = (v: VisibleEvidence) => v.candidate?.fields ?? {};

describe("stock in the shop's own words", () => {
  const CASES: ReadonlyArray<readonly [string, string | null]> = [
    ['Currently unavailable.', 'out_of_stock'],
    ['Derzeit nicht verfügbar.', 'out_of_stock'],
    ['Actuellement indisponible.', 'out_of_stock'],
    ['Non disponibile', 'out_of_stock'],
    ['Нет в наличии', 'out_of_stock'],
    ['Agotado', 'out_of_stock'],
    ['Épuisé', 'out_of_stock'],
    ['Niet op voorraad', 'out_of_stock'],
    ['商品は在庫切れです', 'out_of_stock'],
    ['일시품절', 'out_of_stock'],
    ["We don't know when or if this item will be back in stock.", 'out_of_stock'],
    ['Email me when in stock', 'out_of_stock'],
    ['Discontinued', 'discontinued'],
    ['Pre-order now', 'preorder'],
    ['Only 2 left in stock.', 'limited'],
    ['In stock.', 'in_stock'],
    ['Auf Lager', 'in_stock'],
    ['Disponibilità immediata.', 'in_stock'],
    ['В наличии', 'in_stock'],
    ['en stock', 'in_stock'],
    // whole words: a state flag in code is no statement; a long sentence only mentions stock
    ['unavailableReasons', null],
    ['Read our guide to keeping knives sharp, and why some sets go out of stock every winter before the holidays begin.', null],
    ['Add to cart', null],
  ];
  for (const [text, expected] of CASES) {
    test(`${JSON.stringify(text)} -> ${expected ?? 'nothing'}`, () => {
      assert.equal(stockFromText(text)?.value ?? null, expected);
    });
  }
});

describe('a product code after its label, in the languages shops write', () => {
  const CASES: ReadonlyArray<readonly [string, string | null | undefined]> = [
    // [text, the code read (null: a label alone, its value in the next element), undefined: no code label]
    ['SKU: KT-2041-BLK', 'KT-2041-BLK'],
    ['Product code: 51230087', '51230087'],
    ['Item number: 410293847561', '410293847561'],
    ['Bestellnummer 204517', '204517'],
    ['Art.-Nr.: 79961', '79961'],
    ['Артикул: 00-1245', '00-1245'],
    ['Код: 01245', '01245'],
    ['Réf. : AB123', 'AB123'],
    ['Código: 7788', '7788'],
    ['post id: 6630917724', '6630917724'],
    ['商品編號：K40718263', 'K40718263'],
    ['Šifra:', null],
    ['eBay item number:', null],
    ['Numéro de l’objet eBay :', null],
    // not codes: a model number, a count, words, a label glued into a longer word
    ['Model: XR-500', undefined],
    ['Ref. number of pieces 4', undefined],
    ['Reference: see below', undefined],
    ['SKUs available: 12', undefined],
  ];
  for (const [text, expected] of CASES) {
    test(`${JSON.stringify(text)} -> ${expected === undefined ? 'no label' : (expected ?? 'label, value beside it')}`, () => {
      const labelled = codeLabel(text);
      if (expected === undefined) assert.equal(labelled, null);
      else assert.equal(labelled?.value, expected);
    });
  }
});

describe('prices written across elements', () => {
  const CASES: ReadonlyArray<readonly [string, string]> = [
    ['<strong>€&nbsp;<span>20,-</span></strong>', '€ 20,-'],
    ['<strong>30,000<sub>원~</sub></strong>', '30,000원~'],
    ['<span class="p">$29<sup>99</sup></span>', '$29.99'],
    ['<span class="p"><sup>$</sup>29<sup>99</sup></span>', '$29.99'],
    ['<span class="a-price"><span class="a-offscreen">$29.99</span><span aria-hidden="true">$29.99</span></span>', '$29.99'],
    ['<div><span>$340</span><span>4 bids</span></div>', '$340 4 bids'],
  ];
  for (const [html, expected] of CASES) {
    test(`${html} reads as ${JSON.stringify(expected)}`, () => {
      const page = parsePage(`<html><body>${html}</body></html>`, PAGE_URL)!;
      const el = page.elements.find((e) => e.name !== 'html' && e.name !== 'body' && e.name !== 'head')!;
      assert.equal(splitPriceText(el), expected);
    });
  }
});

describe('the price of the buy box', () => {
  const buy = '<button type="submit">Add to cart</button>';
  const CASES: ReadonlyArray<readonly [name: string, body: string, price: number, extra?: Record<string, unknown>]> = [
    ['a price split across elements', `<h1>Walnut Desk Tidy</h1><div class="price">€&nbsp;<span>20,-</span></div>${buy}`, 20, { currency: 'EUR' }],
    [
      'digits beside their currency in the next element, in a cell too big to read whole',
      `<h1>Walnut Desk Tidy</h1><table><tr><td><b>8</b> 折 <span>1580</span><span class="u"> 元 </span><a href="/c"><span>Coupon: spend 1000 get 100 back on the whole store</span></a></td></tr></table>${buy}`,
      1580,
    ],
    [
      'a "from" price whose digits sit in their own element',
      `<div class="title">Walnut Desk Tidy</div><div class="deal">每份$<span>120</span>元起</div><a id="buy_btn" href="javascript:;" onclick="buy()"><img src="/b.png"></a>`,
      120,
    ],
    [
      'a price labelled for screen readers as the sale price, split from its unit',
      `<h1>Walnut Desk Tidy</h1><p><strong aria-label="판매가">30,000<sub>원~</sub></strong></p>${buy}<section class="related-deals"><p class="price">45,000원</p></section>`,
      30000,
      { cue: 'labelled for screen readers as "판매가"' },
    ],
    [
      "the buy box's own price id beats a nearer marked price",
      `<div id="centerCol"><h1 id="title">Walnut Desk Tidy</h1><table><tr><td>Price:</td><td><span id="priceblock_ourprice">£52.49</span></td></tr></table></div>` +
        `<div id="rightCol"><div class="a">${buy}</div><div class="b"><div><span class="price">£149.00</span></div></div></div>`,
      52.49,
    ],
    [
      'the current bid of an auction',
      `<h1>Walnut Desk Tidy</h1><div class="status"><span class="price">$340</span><span class="count">4 bids</span></div>${buy}`,
      340,
      { cue: 'the current bid' },
    ],
    ["an auction's starting price is not the price", `<h1>Walnut Desk Tidy</h1><p class="price">$340</p><div><span>Starting Price $250</span>${buy}</div>`, 340],
    ['a struck price alone in the box is the price', `<h1>Walnut Desk Tidy</h1><ul><li class="price"><span class="price-old-live">40.00€</span></li></ul>${buy}`, 40],
    [
      'a current price beats the struck one beside it, which becomes the list price',
      `<h1>Walnut Desk Tidy</h1><p><del>£20.00</del> <ins class="price">£15.00</ins></p>${buy}`,
      15,
      { list_price: 20 },
    ],
    ['a price per kilo is not the price', `<h1>Walnut Desk Tidy</h1><p class="price">€7.45</p><div><span class="price">(€29.80 / kg)</span>${buy}</div>`, 7.45],
    [
      'a price per kilo is not the price, whatever stands beside it',
      `<h1>Walnut Desk Tidy</h1><p class="price">€7.45</p><div><span class="price">(€29.80 / kg)</span><span>Handmade in our own workshop in Bristol, England</span>${buy}</div>`,
      7.45,
    ],
    ['shipping is not the price', `<h1>Walnut Desk Tidy</h1><p class="price">$24.00</p><div><span>Shipping: $5.99</span>${buy}</div>`, 24],
    ['a shipping box is not the price, whatever its text', `<h1>Walnut Desk Tidy</h1><p class="price">$24.00</p><div><div class="shipping-price">10 ₪</div>${buy}</div>`, 24],
    [
      "other sellers' offers are not the price",
      `<h1>Walnut Desk Tidy</h1><p class="price">68,90 €</p><div><a href="/offers"><span>New &amp; used (4) from</span> <span class="price">63,06 €</span></a>${buy}</div>`,
      68.9,
    ],
    ['a price before tax is not the price', `<h1>Walnut Desk Tidy</h1><p class="price">100.00€</p><div><span>Brez DDV: 81.20€</span>${buy}</div>`, 100],
    [
      'a price a customer wrote in a review is not the price',
      `<h1>Walnut Desk Tidy</h1><div><p class="price">$24.00</p></div><div class="buy">${buy}<section class="reviews"><span class="price">$12.00</span></section></div>`,
      24,
    ],
    ['points to collect are not the price', `<h1>Walnut Desk Tidy</h1><p class="price">$880</p><div><p>下載APP即可獲得$50點！</p>${buy}</div>`, 880],
    [
      'a price in a line-through class is the regular one',
      `<h1>Walnut Desk Tidy</h1><div class="price"><div class="line-through">$1100</div><div class="current">$880</div></div>${buy}`,
      880,
      { list_price: 1100 },
    ],
    ['a zero shown near the button is not the price', `<h1>Walnut Desk Tidy</h1><p class="price">$24.00</p><div><span class="price">0 р.</span>${buy}</div>`, 24],
    [
      'a price drawn twice, once for screen readers and once split for the eye, is read whole',
      `<h1>Walnut Desk Tidy</h1><p class="a-price"><span class="a-offscreen">$29.99</span></p><div><span aria-hidden="true"><span class="a-price-symbol">$</span><span class="a-price-whole">29<span class="a-price-decimal">.</span></span><span class="a-price-fraction">99</span></span>${buy}</div>`,
      29.99,
    ],
    ['itemprop="price" outside any item: its content is the amount', `<h1>Walnut Desk Tidy</h1><span itemprop="price" content="24.99">24,99</span>${buy}`, 24.99],
    ['"Was … Now …" in one text: the amount after "now"', `<h1>Walnut Desk Tidy</h1><p class="price">Was $129.99 Now $89.99</p>${buy}`, 89.99],
  ];
  for (const [name, body, price, extra] of CASES) {
    test(name, () => {
      const f = fields(visible(body));
      assert.equal(f.price?.value, price, JSON.stringify(f.price_text));
      if (extra?.['currency'] !== undefined) assert.equal(f.currency?.value, extra['currency']);
      if (extra?.['cue'] !== undefined) assert.equal(f.price?.cue, extra['cue']);
      if (extra?.['list_price'] !== undefined) assert.equal(f.list_price?.value, extra['list_price']);
    });
  }
});

describe("the title of the page's product", () => {
  const CASES: ReadonlyArray<readonly [name: string, body: string, title: string, pageTitle?: string, locator?: RegExp]> = [
    [
      "a hidden template's h1 before the real one",
      '<div class="aok-hidden"><h1>Added to Basket</h1></div><h1><span>Walnut Desk Tidy</span></h1>',
      'Walnut Desk Tidy',
      'Example Shop',
    ],
    [
      'the h1 inside the site header, among its menus',
      '<header><ul><li><a href="/a">Kitchen</a></li><li><a href="/b">Office</a></li></ul><h1>Walnut Desk Tidy</h1></header><p class="price">$24.00</p>',
      'Walnut Desk Tidy',
    ],
    ['no h1: the element whose text the page title repeats', '<div class="menu">Office</div><div class="title">Walnut Desk Tidy</div>', 'Walnut Desk Tidy'],
    [
      'a region hidden from screen readers while a dialog was open is still shown',
      `<div id="Body" aria-hidden="true"><h1>Walnut Desk Tidy</h1><ul>${'<li><span>Walnut</span> <span>Oiled</span></li>'.repeat(12)}</ul></div><div role="dialog">Sign in</div>`,
      'Walnut Desk Tidy',
    ],
    ['the h2 the page title repeats', '<h2 class="deal_title_main">Walnut Desk Tidy</h2><p>Free delivery</p>', 'Walnut Desk Tidy'],
    [
      "a card title inside a link is not the page's",
      '<ul><li><a href="/x"><h1>Brass Letter Opener</h1></a></li></ul><h1>Walnut Desk Tidy</h1>',
      'Walnut Desk Tidy',
      'Example Shop',
    ],
    ['an h1 beats a container named "productTitle" around it', '<div id="productTitle_feature_div"><h1>Walnut Desk Tidy</h1></div>', 'Walnut Desk Tidy', undefined, /h1$/],
  ];
  for (const [name, body, title, pageTitle, locator] of CASES) {
    test(name, () => {
      const f = fields(visible(body, pageTitle));
      assert.equal(f.title?.value, title);
      if (locator !== undefined) assert.match(f.title?.locator ?? '', locator);
    });
  }
});

describe('buy controls and purchase points', () => {
  const title = '<h1>Walnut Desk Tidy</h1><p class="price">$24.00</p>';
  const CASES: ReadonlyArray<readonly [name: string, body: string, count: number]> = [
    ['"In den Warenkorb"', '<button>In den Warenkorb</button>', 1],
    ['"Ajouter au panier"', '<button>Ajouter au panier</button>', 1],
    ['"Купить" on a div named for buying', '<div class="buy-btn">Купить</div>', 1],
    ['"장바구니 담기"', '<button>장바구니 담기</button>', 1],
    ['"Kupi" link', '<a href="#">Kupi</a>', 1],
    ['"Add to your basket"', '<button>Add to your basket</button>', 1],
    ['"Buy MP3 Album $11.99" on a link styled as a button', '<a role="button" href="/buy">Buy MP3 Album <span>$11.99</span></a>', 1],
    ['a cart button named by id whatever it says', '<button type="button" id="button-cart">Dodaj</button>', 1],
    ['"Naroči"', '<button type="button">Naroči</button>', 1],
    ['a script link that buys ("javascript:buy_process")', '<a href="javascript:buy_process(\'x\')">購物車</a>', 1],
    [
      'a container named for the cart is not the control; the button in it is',
      '<div id="addToCart_feature_div"><span>Add to Basket</span><input type="submit" value="Add to Basket"></div>',
      1,
    ],
    ['a promotion link that starts with "Buy" is not a control', '<a href="/music">Buy this item and get 90 days free</a>', 0],
    ['"Buy at" another site is not a control', '<a href="https://other.example/x">Buy now</a>', 0],
    [
      'copies of one buy box for other screen sizes count once',
      '<form name="buy_large" action="/service/kupi"><input type="hidden" name="addservice" value="380"><a href="#">Kupi</a></form><form name="buy_small" action="/service/kupi"><input type="hidden" name="addservice" value="380"><a href="#">Kupi</a></form><a onclick="document.buy_large.submit();" href="#">Kupi</a>',
      1,
    ],
    [
      'the buy box the page names wins over per-track buy buttons',
      `<ol>${'<li><a id="track_buyButton_1" role="button" href="/t">$1.29</a></li>'.repeat(6)}</ol><div id="buybox"><a role="button" href="/buy">Buy MP3 Album</a></div>`,
      1,
    ],
    [
      "unlabelled submits of other sellers' cart forms do not count",
      '<button>Add to Cart</button><form action="/cart/add"><input type="submit"></form><form action="/cart/add?s=2"><input type="submit"></form>',
      1,
    ],
  ];
  for (const [name, body, count] of CASES) {
    test(name, () => {
      assert.equal(visible(title + body).buyControls.length, count);
    });
  }
});

describe('the stock line beside the product', () => {
  const CASES: ReadonlyArray<readonly [name: string, body: string, availability: string | undefined, stated: boolean]> = [
    [
      'the page says it in the stock line, no buy button',
      '<h1>Walnut Desk Tidy</h1><div id="availability"><span>Currently unavailable.</span><br>We don\'t know when or if this item will be back in stock.</div>',
      'out_of_stock',
      true,
    ],
    ['a disabled buy button', '<h1>Walnut Desk Tidy</h1><p class="price">$24</p><button disabled>Add to cart</button>', 'out_of_stock', false],
    ['an enabled buy button', '<h1>Walnut Desk Tidy</h1><p class="price">$24</p><button>Add to cart</button>', 'in_stock', false],
    [
      'a chat that is unavailable says nothing of stock',
      '<h1>Walnut Desk Tidy</h1><p class="price">$24</p><p class="chatStatus">Chat is unavailable</p><button>Add to cart</button>',
      'in_stock',
      false,
    ],
    [
      'store pickup that is unavailable says nothing of stock',
      '<h1>Walnut Desk Tidy</h1><div class="storeAvailability"><span>Unavailable for store pickup</span></div><p class="price">$24</p><button>Add to cart</button>',
      'in_stock',
      false,
    ],
    [
      'a sentence that mentions a stock word is not the stock line',
      '<h1>Walnut Desk Tidy</h1><p class="price">$24</p><div class="buy"><p>Sold out twice last winter, order early</p><button>Add to cart</button></div>',
      'in_stock',
      false,
    ],
    [
      'a size that is unavailable says nothing of the product',
      '<h1>Walnut Desk Tidy</h1><p class="price">$24</p><ul class="size-selector"><li><span>42</span> <span>Unavailable</span></li></ul><button>Add to cart</button>',
      'in_stock',
      false,
    ],
    [
      'a wish list that is unavailable says nothing of stock',
      '<h1>Walnut Desk Tidy</h1><p class="price">$24</p><div class="buy"><button>Add to cart</button><span>List unavailable.</span></div>',
      'in_stock',
      false,
    ],
    [
      "a hidden dropdown's words are not read",
      '<h1>Walnut Desk Tidy</h1><p class="price">$24</p><div class="buy"><button>Add to cart</button><div class="a-hidden"><span>Currently unavailable</span></div></div>',
      'in_stock',
      false,
    ],
    [
      'a word inside the buy button is its state, read from the button',
      '<h1>Walnut Desk Tidy</h1><p class="price">$24</p><a class="btn" href="/cart/add"><span>Dodaj do koszyka</span><span class="state">niedostępny</span></a>',
      'in_stock',
      false,
    ],
  ];
  for (const [name, body, availability, stated] of CASES) {
    test(name, () => {
      const v = visible(body);
      assert.equal(fields(v).availability?.value, availability);
      assert.equal(v.stockStated, stated);
    });
  }
});

describe('the product code the page prints', () => {
  const head = '<h1>Walnut Desk Tidy</h1><p class="price">$24.00</p><button>Add to cart</button>';
  const CASES: ReadonlyArray<readonly [name: string, body: string, sku: string | undefined]> = [
    ['a labelled paragraph', '<p class="product-code">Product code: 51230087</p>', '51230087'],
    ['a label and its value in a definition list', '<dl><dt>Artikelnummer</dt><dd>79961</dd></dl>', '79961'],
    ['a label in <strong> and the value after it', '<ul><li><strong>Šifra:</strong> 0417</li></ul>', '0417'],
    ['a label and the value in sibling divs', '<div><div class="lbl">eBay item number:</div><div class="value">410293847561</div></div>', '410293847561'],
    ['an element marked as the product reference', '<p><span class="colour">Silver</span> - <span data-qa-qualifier="product-reference">5104/388</span></p>', '5104/388'],
    ['itemprop productID outside any item', '<p>Ref : <span itemprop="productID">QZ417</span></p>', 'QZ417'],
    ['a model number is not the code', '<p>Model: XR-500</p>', undefined],
  ];
  for (const [name, body, sku] of CASES) {
    test(name, () => {
      const f = fields(visible(head + body));
      assert.equal(f.sku?.value, sku);
      if (sku !== undefined) assert.ok(f.sku?.cue !== undefined, 'a code the page presents says how');
    });
  }
});

describe('a listing is not one product for its stock lines and codes', () => {
  test('a category page whose cards each state their stock and code, without buy buttons, is a listing', () => {
    const card = (i: number) =>
      `<li class="product-card"><a href="/p/${i}"><h3>Desk item ${i}</h3></a><span class="price">€${10 + i}.00</span><span class="stock-status">In stock</span><span>SKU: DT-${100 + i}</span></li>`;
    const html = `<!doctype html><html><head><title>Desk Accessories | Example Shop</title></head><body><h1>Desk Accessories</h1><ul class="grid">${[1, 2, 3, 4, 5, 6].map(card).join('')}</ul></body></html>`;
    const v = readVisible(parsePage(html, PAGE_URL)!);
    assert.deepEqual([v.headingNamesPage, v.stockStated, v.codeShown], [true, false, false], 'six stock lines and six codes are six products');
    const result = extract(html, PAGE_URL, { explain: true });
    assert.equal(result.page_type, 'listing', result.explanation?.page_type.reasons.join('; '));
    assert.equal(result.items.length, 6);
  });
});
