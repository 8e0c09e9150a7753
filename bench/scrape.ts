// Scraping benches: a 50-page crawl of the local catalogue (static), and a script-rendered page through the browser.
import { readFileSync } from 'node:fs';
import { load } from 'cheerio';
import { extract } from '../src/scraping/extract/index.js';
import { renderCataloguePage, renderCataloguePageUnderCatalogue } from '../test/fixtures/books-catalogue.js';
import { expect, median, percentile } from './client.js';

interface ScrapeAnswer {
  mode: string;
  pages: number;
  count: number;
  created: number;
  updated: number;
  duration_ms: number;
  extractor: string | null;
}

export interface CrawlFigures {
  label: string;
  request: Record<string, unknown>;
  /** The first run (creates the rows, opens connections, fetches robots.txt): reported, not counted. */
  firstMs: number;
  /** Wall time of each counted run as the client saw it (request to last byte of the answer). */
  runsMs: number[];
  /** The service's own duration_ms of each counted run. */
  serviceMs: number[];
  medianMs: number;
  minMs: number;
  maxMs: number;
  books: number;
  pages: number;
  booksPerSecond: number;
}

export async function measureCrawl(mainUrl: string, label: string, body: Record<string, unknown>, runs: number, expectedBooks: number): Promise<CrawlFigures> {
  const once = async () => {
    const res = await expect<ScrapeAnswer>(200, 'POST', `${mainUrl}/scrape`, body);
    if (res.body.count !== expectedBooks) {
      throw new Error(`${label}: stored ${res.body.count} books over ${res.body.pages} pages, expected ${expectedBooks}`);
    }
    return res;
  };
  const first = await once();
  const runsMs: number[] = [];
  const serviceMs: number[] = [];
  let last = first;
  for (let i = 0; i < runs; i++) {
    last = await once();
    runsMs.push(last.ms);
    serviceMs.push(last.body.duration_ms);
  }
  const medianMs = median(runsMs);
  return {
    label,
    request: body,
    firstMs: first.ms,
    runsMs,
    serviceMs,
    medianMs,
    minMs: Math.min(...runsMs),
    maxMs: Math.max(...runsMs),
    books: last.body.count,
    pages: last.body.pages,
    booksPerSecond: last.body.count / (medianMs / 1000),
  };
}

export interface DynamicFigures {
  request: Record<string, unknown>;
  /** The first dynamic scrape of the service: includes launching the browser. */
  coldMs: number;
  /** Later scrapes, one at a time, the browser reused. */
  warmMs: number[];
  warmMedianMs: number;
  warmMinMs: number;
  warmMaxMs: number;
  /** The service's own duration_ms of the warm runs, median. */
  warmServiceMedianMs: number;
  items: number;
}

/**
 * One cold scrape, then `warmRuns` warm ones; `between` runs after the cold one (a memory reading
 * once the browser is up).
 */
export async function measureDynamic(mainUrl: string, pageUrl: string, warmRuns: number, between?: () => Promise<void>): Promise<DynamicFigures> {
  const body = { url: pageUrl, use_selenium: true, wait_for: '.card' };
  const once = async () => {
    const res = await expect<ScrapeAnswer>(200, 'POST', `${mainUrl}/scrape`, body);
    if (res.body.count !== 4) throw new Error(`dynamic scrape found ${res.body.count} cards, expected 4`);
    return res;
  };
  const cold = await once();
  await between?.();
  const warm: number[] = [];
  const service: number[] = [];
  for (let i = 0; i < warmRuns; i++) {
    const res = await once();
    warm.push(res.ms);
    service.push(res.body.duration_ms);
  }
  return {
    request: body,
    coldMs: cold.ms,
    warmMs: warm,
    warmMedianMs: median(warm),
    warmMinMs: Math.min(...warm),
    warmMaxMs: Math.max(...warm),
    warmServiceMedianMs: median(service),
    items: cold.body.count,
  };
}

export interface ExtractionFigures {
  pages: number;
  books: number;
  /** Parse + extract of all the pages, one round each, in the bench process (no fetch, no store). */
  roundsMs: number[];
  medianMs: number;
  /** The HTML parse (cheerio.load) alone, median over the rounds. */
  parseMedianMs: number;
}

/** The CPU floor of a crawl: the service's own extract() over the catalogue pages, nothing else. */
export function measureExtraction(catalogue: { pages: number; perPage: number }, rounds: number): ExtractionFigures {
  const base = 'http://127.0.0.1/books/';
  const pages = Array.from({ length: catalogue.pages }, (_, i) => ({
    url: i === 0 ? base : `${base}catalogue/page-${i + 1}.html`,
    html: (i === 0 ? renderCataloguePage(1, catalogue) : renderCataloguePageUnderCatalogue(i + 1, catalogue))!,
  }));
  const round = () => {
    let books = 0;
    const started = performance.now();
    for (const page of pages) books += extract(page.html, page.url).items.length;
    return { ms: performance.now() - started, books };
  };
  const parseRound = () => {
    const started = performance.now();
    for (const page of pages) load(page.html);
    return performance.now() - started;
  };
  round(); // warm-up: JIT
  parseRound();
  const roundsMs: number[] = [];
  const parseMs: number[] = [];
  let books = 0;
  for (let i = 0; i < rounds; i++) {
    const r = round();
    roundsMs.push(r.ms);
    books = r.books;
    parseMs.push(parseRound());
  }
  return { pages: pages.length, books, roundsMs, medianMs: median(roundsMs), parseMedianMs: median(parseMs) };
}

export interface PageExtractionFigures {
  bytes: number;
  runs: number;
  medianMs: number;
  p95Ms: number;
  pageType: string;
  items: number;
}

/**
 * Extraction of one real-world-sized product page (~500 KB: the fixture shop's product page with
 * the mega menu, inline app state, reviews and carousels real shops carry), in this process.
 */
export function measurePageExtraction(runs: number): PageExtractionFigures {
  const html = realWorldSizedPage();
  const url = 'http://127.0.0.1/products/cast-iron-casserole';
  const first = extract(html, url);
  if (first.page_type !== 'product' || first.items.length !== 1 || first.items[0]?.price !== 64) {
    throw new Error(`the 500 KB page extracted to ${first.page_type} with ${first.items.length} items; expected its one product at 64`);
  }
  return { bytes: Buffer.byteLength(html), runs, ...timeExtraction(html, url, runs), pageType: first.page_type, items: first.items.length };
}

/** `runs` extractions of one page in this process, after a JIT warm-up: median and p95 in ms. */
export function timeExtraction(html: string, url: string, runs: number): { medianMs: number; p95Ms: number } {
  for (let i = 0; i < 5; i++) extract(html, url);
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    const started = performance.now();
    extract(html, url);
    times.push(performance.now() - started);
  }
  return { medianMs: median(times), p95Ms: percentile(times, 95) };
}

function realWorldSizedPage(): string {
  const base = readFileSync(new URL('../test/fixtures/pages/product-page-carousel.html', import.meta.url), 'utf8');
  const menu = Array.from(
    { length: 60 },
    (_, c) =>
      `<li class="mega-menu__column"><a class="mega-menu__heading" href="/collections/c${c}">Category ${c}</a><ul>${Array.from({ length: 25 }, (_, i) => `<li class="mega-menu__item"><a class="mega-menu__link link" href="/collections/c${c}/s${i}" data-track="menu-${c}-${i}">Subcategory ${c}.${i} <span class="badge">new</span></a></li>`).join('')}</ul></li>`,
  ).join('');
  const state = JSON.stringify({
    products: Array.from({ length: 800 }, (_, i) => ({
      id: 7000 + i,
      handle: `product-${i}`,
      title: `Product ${i}`,
      variants: [{ id: 90000 + i, price: 1000 + i, sku: `SKU-${i}`, available: i % 3 !== 0 }],
      tags: ['kitchen', 'cookware', `tag-${i % 17}`],
    })),
  });
  const reviews = Array.from(
    { length: 80 },
    (_, i) =>
      `<article class="review" data-review-id="${i}"><header class="review__header"><span class="review__author">Reviewer ${i}</span><time datetime="2024-0${(i % 9) + 1}-1${i % 9}">2024</time><span class="review__stars" aria-label="${(i % 5) + 1} out of 5 stars">★★★★★</span></header><p class="review__body">Used it ${i} times so far. The enamel is holding up, the lid is heavy and seals well, and it goes from hob to oven without fuss. Paid full price and would again.</p></article>`,
  ).join('');
  const cards = Array.from(
    { length: 24 },
    (_, i) =>
      `<li class="grid__item"><div class="card card--product"><a href="/products/extra-${i}" class="card__link"><img src="/img/extra-${i}.jpg" alt="" loading="lazy"><h3 class="card__heading">Extra product ${i}</h3></a><span class="price">£${(10 + i).toFixed(2)}</span></div></li>`,
  ).join('');
  return base
    .replace('<body', `<script>window.__STATE__ = ${state};</script>\n<body`)
    .replace('</header>', `<nav class="mega-menu" aria-label="All categories"><ul>${menu}</ul></nav></header>`)
    .replace('</main>', `<section class="reviews-all">${reviews}</section><section class="related-products"><ul class="grid">${cards}</ul></section></main>`);
}
