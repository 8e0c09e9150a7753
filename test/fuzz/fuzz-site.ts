// The only site the route fuzzer's scrapes and test messages may reach: a shop, a listing, an article and a receiver on 127.0.0.1, every link relative.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface FuzzSite {
  /** `http://127.0.0.1:PORT` (no trailing slash). */
  base: string;
  port: number;
  /** Pages scrapes may be pointed at: each answers at once (some with an error, none slowly). */
  pages: string[];
  /** Requests received, by method and path. */
  hits: Map<string, number>;
  close(): Promise<void>;
}

const LISTING_PAGES = 3;

function productPage(n: number): string {
  const price = (99.5 - (n % 5)).toFixed(2);
  const ld = {
    '@context': 'https://schema.org',
    '@type': 'Product',
    name: 'Fuzz Grinder',
    sku: 'FG-1',
    offers: { '@type': 'Offer', price, priceCurrency: 'EUR', availability: n % 4 === 3 ? 'https://schema.org/OutOfStock' : 'https://schema.org/InStock' },
  };
  return `<!doctype html><html lang="en"><head><title>Fuzz Grinder</title><script type="application/ld+json">${JSON.stringify(ld)}</script></head>
<body><main><h1>Fuzz Grinder</h1><p class="price">€${price}</p><p>A burr grinder for the fuzzer.</p></main></body></html>`;
}

function listingPage(page: number, n: number): string {
  const items = [1, 2, 3].map((i) => ({
    '@type': 'ListItem',
    position: i,
    item: { '@type': 'Product', name: `Kettle ${page}-${i}`, url: `/p/${page}-${i}`, offers: { '@type': 'Offer', price: String(10 * i + (n % 3)), priceCurrency: 'GBP' } },
  }));
  const next = page < LISTING_PAGES ? `<a rel="next" href="/listing?page=${page + 1}">Next</a>` : '';
  return `<!doctype html><html lang="en"><head><title>Kettles, page ${page}</title>
<script type="application/ld+json">${JSON.stringify({ '@context': 'https://schema.org', '@type': 'ItemList', itemListElement: items })}</script></head>
<body><h1>Kettles</h1>${items.map((i) => `<div class="card"><h2><a href="${i.item.url}">${i.item.name}</a></h2><span class="price">£${i.item.offers.price}</span></div>`).join('')}${next}</body></html>`;
}

function articlePage(n: number): string {
  const ld = {
    '@context': 'https://schema.org',
    '@type': 'NewsArticle',
    headline: 'Grinders hold their price',
    datePublished: '2024-03-01T08:00:00Z',
    author: { '@type': 'Person', name: 'Ada Fuzz' },
  };
  const paragraphs = [
    'Burr grinders kept their prices through the winter, a survey of twelve shops found this week.',
    'Shops that cut prices in January raised them again by March, most of them to where they started.',
    `The survey was updated ${n} times; each update changes this paragraph and makes a revision.`,
    'Hand grinders moved least of all: their prices stayed within a few percent over the whole period.',
    'The next survey is due in the autumn, when the new models arrive in the shops.',
  ];
  return `<!doctype html><html lang="en"><head><title>Grinders hold their price</title><script type="application/ld+json">${JSON.stringify(ld)}</script></head>
<body><article><h1>Grinders hold their price</h1>${paragraphs.map((p) => `<p>${p}</p>`).join('')}</article></body></html>`;
}

export async function startFuzzSite(): Promise<FuzzSite> {
  const hits = new Map<string, number>();
  let served = 0;
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    const key = `${req.method} ${url.pathname}`;
    hits.set(key, (hits.get(key) ?? 0) + 1);
    served += 1;
    const send = (status: number, body: string, type = 'text/html; charset=utf-8') => {
      res.writeHead(status, { 'content-type': type, 'content-length': Buffer.byteLength(body) });
      res.end(body);
    };
    // Drain any body first: chat services and webhooks post here, and are answered as a service would.
    req.resume();
    req.on('end', () => {
      if (req.method !== 'GET' && req.method !== 'HEAD') return send(200, '{"ok":true,"result":{}}', 'application/json');
      switch (url.pathname) {
        case '/robots.txt':
          return send(200, 'User-agent: *\nAllow: /\n', 'text/plain');
        case '/product':
          return send(200, productPage(served));
        case '/listing': {
          const page = Number(url.searchParams.get('page') ?? '1');
          return page >= 1 && page <= LISTING_PAGES ? send(200, listingPage(page, served)) : send(404, '<p>no such page</p>');
        }
        case '/article':
          return send(200, articlePage(served));
        case '/json':
          return send(200, '{"ok":true}', 'application/json');
        case '/error':
          return send(500, '<p>down</p>');
        case '/empty':
          return send(200, '');
        default:
          return send(404, '<p>not found</p>');
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const base = `http://127.0.0.1:${port}`;
  return {
    base,
    port,
    hits,
    pages: ['/product', '/listing', '/listing?page=3', '/article', '/json', '/error', '/empty', '/missing', '/p/1-1'].map((p) => base + p),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
