// Test helper: a one-product shop on 127.0.0.1 whose price and stock the test changes between scrapes.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Shop {
  /** The product page's URL. */
  url: string;
  price: number;
  inStock: boolean;
  hits: number;
  close(): Promise<void>;
}

export async function startShop(title: string, price: number): Promise<Shop> {
  const shop: Shop = { url: '', price, inStock: true, hits: 0, close: async () => undefined };
  const server = createServer((req, res) => {
    shop.hits += 1;
    if (req.url !== '/p/1') {
      res.writeHead(404).end();
      return;
    }
    const amount = shop.price.toFixed(2);
    const product = {
      '@context': 'https://schema.org/',
      '@type': 'Product',
      name: title,
      sku: 'SHOP-1',
      offers: { '@type': 'Offer', priceCurrency: 'EUR', price: amount, availability: `https://schema.org/${shop.inStock ? 'InStock' : 'OutOfStock'}` },
    };
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    res.end(
      `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${title}</title>` +
        `<script type="application/ld+json">${JSON.stringify(product)}</script></head>` +
        `<body><main><h1>${title}</h1><p class="price">€${amount}</p></main></body></html>`,
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  shop.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/p/1`;
  shop.close = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return shop;
}
