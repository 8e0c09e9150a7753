// Stock as shops write it where a reader looks: in the place of the price, and under a negation ("not in stock").
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { extract } from '../../../src/scraping/extract/index.js';
import { stockFromText } from '../../../src/scraping/extract/visible/stock-text.js';

const page = (body: string, head = '') =>
  `<!doctype html><html><head><title>Shop</title>${head}</head><body><header><nav><a href="/">Home</a></nav></header><main>${body}</main></body></html>`;
const ld = (o: object) => `<script type="application/ld+json">${JSON.stringify({ '@context': 'https://schema.org', ...o })}</script>`;

describe('stock written in the place of the price is the availability', () => {
  const cases: Array<{ imitates: string; html: string; availability: string }> = [
    {
      imitates: 'JSON-LD product without an offer; the price box says "Out of stock"',
      html: page(
        `<h1>Brass desk lamp</h1><div class="product-price"><span class="price">Out of stock</span></div><button type="button">Notify me</button>`,
        ld({ '@type': 'Product', name: 'Brass desk lamp', sku: 'LAMP-1' }),
      ),
      availability: 'out_of_stock',
    },
    {
      imitates: 'an Israeli shop: a zero-price offer said in stock, the price line says "המוצר אינו במלאי"',
      html: page(
        `<h1>בושם לגבר Legend 200ml</h1><div class="price-box"><div class="price-new no-sale">המוצר אינו במלאי</div></div>`,
        ld({ '@type': 'Product', name: 'בושם לגבר Legend 200ml', offers: { '@type': 'Offer', price: '0', priceCurrency: 'ILS', availability: 'https://schema.org/InStock' } }),
      ),
      availability: 'out_of_stock',
    },
    {
      imitates: 'microdata product without an offer; a German price element says "Nicht auf Lager"',
      html: page(
        `<div itemscope itemtype="https://schema.org/Product"><h1 itemprop="name">Gusseisen Bräter 24 cm</h1><span itemprop="sku">4711</span><div class="price">Nicht auf Lager</div></div>`,
      ),
      availability: 'out_of_stock',
    },
    {
      imitates: 'Open Graph product; a Spanish price element says "Agotado"',
      html: page(
        `<h1>Lámpara de latón</h1><div id="product-price">Agotado</div>`,
        '<meta property="og:type" content="product"><meta property="og:title" content="Lámpara de latón">',
      ),
      availability: 'out_of_stock',
    },
  ];
  for (const c of cases) {
    test(c.imitates, () => {
      const result = extract(c.html, 'http://127.0.0.1:1234/p/1', { explain: true });
      assert.equal(result.page_type, 'product');
      assert.equal(result.items[0]?.availability, c.availability);
      assert.equal(result.items[0]?.provenance.availability?.source, 'visible');
    });
  }

  test('a price element that states a price and a delivery note is not a stock line', () => {
    const html = page(`<h1>Brass desk lamp</h1><div class="price">Price on request</div><button>Add to cart</button>`, ld({ '@type': 'Product', name: 'Brass desk lamp' }));
    assert.equal(extract(html, 'http://127.0.0.1:1234/p/1').items[0]?.availability, 'in_stock');
  });
});

describe('a negated stock word states nothing positive', () => {
  const table: Array<[string, string | null]> = [
    ['Not in stock', 'out_of_stock'],
    ['Derzeit nicht auf Lager', 'out_of_stock'],
    ['nicht auf Lager', 'out_of_stock'],
    ['Não disponível', 'out_of_stock'],
    ['не в наличии', 'out_of_stock'],
    ["Ce produit n'est pas disponible", 'out_of_stock'],
    ['Non è disponibile', 'out_of_stock'],
    ['nie jest dostępny', 'out_of_stock'],
    ['Not currently in stock', 'out_of_stock'],
    ['No longer in stock', 'out_of_stock'],
    ['המוצר אינו במלאי', 'out_of_stock'],
    // A classified ad's "Status: NOT SOLD" is not "sold out".
    ['NOT SOLD', null],
    // and the positive statements stay positive
    ['In stock', 'in_stock'],
    ['Currently in stock', 'in_stock'],
    ['Auf Lager', 'in_stock'],
    ['Disponible', 'in_stock'],
    ['במלאי', 'in_stock'],
  ];
  for (const [text, expected] of table) {
    test(`"${text}" -> ${expected}`, () => {
      assert.equal(stockFromText(text)?.value ?? null, expected);
    });
  }

  test('a classified ad whose microdata availability says "NOT SOLD" is not read as sold out', () => {
    const html = page(
      `<div itemscope itemtype="http://schema.org/Product"><h1 itemprop="name">Casio FX-991ES calculator</h1><div itemprop="offers" itemscope itemtype="http://schema.org/Offer"><meta itemprop="price" content="15"><meta itemprop="priceCurrency" content="CAD"><h4>Status</h4><span itemprop="availability">NOT SOLD</span></div></div>`,
    );
    const item = extract(html, 'http://127.0.0.1:1234/ad/1').items[0];
    assert.equal(item?.price, 15);
    assert.notEqual(item?.availability, 'out_of_stock');
  });
});
