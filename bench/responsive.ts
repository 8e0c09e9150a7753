// Is the API still answering while big pages are extracted? /health latency during four concurrent 5 MiB scrapes, threads off vs on.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from './client.js';
import { measureOne, type LoadResult } from './http.js';
import { startMain } from './services.js';
import { defaultExtractThreads } from '../src/config/config.js';

export interface ResponsivenessFigures {
  pageBytes: number;
  scrapesAtOnce: number;
  /** EXTRACT_THREADS=0: every page extracted on the event loop. */
  inline: { health: LoadResult; scrapes: number };
  /** The default pool. */
  threaded: { health: LoadResult; scrapes: number; threads: number };
}

/** A listing of ~`bytes` of real-looking markup: product cards with nested layout, each with a price. */
function bigListing(bytes: number): string {
  const card = (i: number) =>
    `<li class="col"><article class="product_pod"><div class="image_container"><a href="/p/${i}"><img src="/i/${i}.jpg" alt="Lamp ${i}" class="thumbnail"></a></div>` +
    `<p class="star-rating Three"><i></i><i></i><i></i></p><h3><a href="/p/${i}" title="Lamp number ${i}">Lamp number ${i}</a></h3>` +
    `<div class="product_price"><p class="price_color">£${(10 + (i % 50)).toFixed(2)}</p><p class="instock availability"><i class="icon-ok"></i> In stock</p>` +
    `<form><button type="submit" class="btn btn-primary btn-block" data-loading-text="Adding...">Add to basket</button></form></div></article></li>`;
  const parts: string[] = ['<!doctype html><html><head><title>All lamps</title></head><body><section><ol class="row">'];
  let size = parts[0]!.length;
  for (let i = 1; size < bytes; i++) {
    const html = card(i);
    parts.push(html);
    size += html.length;
  }
  parts.push('</ol></section></body></html>');
  return parts.join('');
}

export async function measureResponsiveness(
  options: { pageBytes: number; scrapesAtOnce: number; databaseUrl: string; demoSiteUrl: string; durationS: number; connections: number },
  log: (line: string) => void,
): Promise<ResponsivenessFigures> {
  const page = bigListing(options.pageBytes);
  const server = createServer((req, res) => {
    if (req.url === '/robots.txt') return void res.writeHead(404).end();
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(page);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const pageUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/big.html`;
  try {
    const run = async (threads: string | undefined) => {
      const main = await startMain({
        label: threads === '0' ? 'inline extraction' : 'threaded extraction',
        databaseUrl: options.databaseUrl,
        demoSiteUrl: options.demoSiteUrl,
        ...(threads === undefined ? {} : { env: { EXTRACT_THREADS: threads } }),
      });
      try {
        // Scrapes keep coming, four at a time, for as long as /health is measured.
        let stop = false;
        let scrapes = 0;
        const scraper = async () => {
          while (!stop) {
            await expect(200, 'POST', `${main.url}/scrape`, { url: pageUrl, timeout_ms: 120_000 });
            scrapes++;
          }
        };
        const scraping = Array.from({ length: options.scrapesAtOnce }, scraper);
        await new Promise((r) => setTimeout(r, 1500)); // all four under way
        const health = await measureOne(
          { base: main.url, method: 'GET', path: '/health', ...(main.child.pid === undefined ? {} : { pid: main.child.pid }) },
          { connections: options.connections, durationS: options.durationS, warmupS: 0, slices: 1 },
        );
        stop = true;
        await Promise.all(scraping);
        log(`  ${threads === '0' ? 'inline' : 'threaded'}: /health p99 ${health.p99Ms.toFixed(1)} ms, ${scrapes} scrapes`);
        return { health, scrapes };
      } finally {
        await main.child.stop();
      }
    };
    const inline = await run('0');
    const threaded = await run(undefined);
    const threads = defaultExtractThreads();
    return { pageBytes: page.length, scrapesAtOnce: options.scrapesAtOnce, inline, threaded: { ...threaded, threads } };
  } finally {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}
