// Scraping benches: a 50-page crawl of the local catalogue (static), and a script-rendered page through the browser.
import { load } from 'cheerio';
import { extract } from '../src/scraping/extract/index.js';
import { renderCataloguePage, renderCataloguePageUnderCatalogue } from '../test/fixtures/books-catalogue.js';
import { expect, median } from './client.js';

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
