// Growth: do a first page of GET /products and a search stay fast at a million rows, on PostgreSQL and PGlite,
// and what does a full 10k-row list cost?
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createPgliteDatabase } from '../src/db/database.js';
import { migrate } from '../src/db/migrate.js';
import { PRODUCT_COLUMNS } from '../src/products/product-list-sql.js';
import { expect, median, percentile, send } from './client.js';
import type { BenchDatabase } from './database.js';
import { peakRssDuring, settle } from './memory.js';
import { CATALOGUE_SEED_SQL, CATALOGUE_WORDS } from './seed.js';
import { startMain } from './services.js';

export interface LatencyFigures {
  samples: number;
  p50Ms: number;
  p90Ms: number;
  p99Ms: number;
}

/** One search at one table size: the matches (X-Total-Count) and the latency, one client. */
export interface SearchFigures {
  label: string;
  path: string;
  matches: number;
  http: LatencyFigures;
}

export interface SizeFigures {
  rows: number;
  http: LatencyFigures;
  search: SearchFigures[];
  /**
   * Timed directly on the database, median ms: the service's one statement (the page with the running
   * total), the page alone, and count(*), which the running total replaces.
   */
  sql: { pageWithTotalMs: number; pageMs: number; countMs: number };
}

export interface FullListFigures {
  rows: number;
  runsMs: number[];
  medianMs: number;
  bytes: number;
  /** Sent chunked (streamed) rather than with a Content-Length (built in memory first). */
  chunked: boolean;
  rssBeforeMb: number;
  rssPeakMb: number;
  rssDeltaMb: number;
}

export interface GrowthFigures {
  path: string;
  sizes: SizeFigures[];
  fullList: FullListFigures | undefined;
}

/** The same searches on the main service on PGlite, seeded to each size in the bench process first. */
export interface PgliteSearchFigures {
  sizes: Array<{ rows: number; seedS: number; http: LatencyFigures; search: SearchFigures[] }>;
}

const { noun, brand } = CATALOGUE_WORDS;
const pct = (share: number) => `${Number((share * 100).toPrecision(2))} %`;

/** What a search box sends: a common product word, a rare brand, and the common word with a price filter and a sort. */
const SEARCHES: ReadonlyArray<{ label: string; path: string }> = [
  { label: `q=${noun.word} (a product word, ${pct(noun.share)} of rows)`, path: `/products?q=${noun.word}&limit=20` },
  { label: `q=${brand.word} (a brand, ${pct(brand.share)} of rows)`, path: `/products?q=${brand.word}&limit=20` },
  { label: `q=${noun.word}&min_price=10&max_price=50&sort=-price`, path: `/products?q=${noun.word}&min_price=10&max_price=50&sort=-price&limit=20` },
];

async function measureSearches(mainUrl: string): Promise<SearchFigures[]> {
  const figures: SearchFigures[] = [];
  for (const { label, path } of SEARCHES) {
    const first = await expect(200, 'GET', `${mainUrl}${path}`);
    figures.push({ label, path, matches: Number(first.headers['x-total-count']), http: await sequentialLatency(`${mainUrl}${path}`, 10, 100) });
  }
  return figures;
}

const PAGE_WITH_TOTAL_SQL = `SELECT ${PRODUCT_COLUMNS}, (SELECT sum(n) FROM product_count_shards)::int AS total
  FROM products ORDER BY id ASC LIMIT 100`;
const PAGE_SQL = `SELECT ${PRODUCT_COLUMNS} FROM products ORDER BY id ASC LIMIT 100`;
const COUNT_SQL = 'SELECT count(*)::int AS total FROM products';

/** One client, one request at a time: latency without queueing. */
export async function sequentialLatency(url: string, warmup: number, samples: number): Promise<LatencyFigures> {
  for (let i = 0; i < warmup; i++) await expect(200, 'GET', url);
  const times: number[] = [];
  for (let i = 0; i < samples; i++) times.push((await expect(200, 'GET', url)).ms);
  return { samples, p50Ms: percentile(times, 50), p90Ms: percentile(times, 90), p99Ms: percentile(times, 99) };
}

async function sqlMedian(db: BenchDatabase, sql: string, runs = 30): Promise<number> {
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    const started = performance.now();
    await db.query(sql);
    times.push(performance.now() - started);
  }
  return median(times);
}

export async function measureGrowth(
  mainUrl: string,
  servicePid: number,
  db: BenchDatabase,
  sizes: readonly number[],
  fullListRows: number,
  log: (line: string) => void,
): Promise<GrowthFigures> {
  const path = '/products?limit=100';
  // CASCADE: the tracking part's history and events refer to the products.
  await db.query('TRUNCATE products RESTART IDENTITY CASCADE');
  const figures: GrowthFigures = { path, sizes: [], fullList: undefined };
  let seeded = 0;
  for (const rows of [...sizes].sort((a, b) => a - b)) {
    log(`  ${rows} rows: seeding the catalogue`);
    await db.seed(seeded + 1, rows, CATALOGUE_SEED_SQL);
    seeded = rows;
    await db.query('VACUUM ANALYZE products');
    // Write the seeding's dirty pages back now, not during the measurements (a superuser's right; skipped otherwise).
    await db.query('CHECKPOINT').catch(() => undefined);
    log(`  ${rows} rows: GET ${path}, then searches`);
    const http = await sequentialLatency(`${mainUrl}${path}`, 50, 300);
    const search = await measureSearches(mainUrl);
    const sql = {
      pageWithTotalMs: await sqlMedian(db, PAGE_WITH_TOTAL_SQL),
      pageMs: await sqlMedian(db, PAGE_SQL),
      countMs: await sqlMedian(db, COUNT_SQL),
    };
    figures.sizes.push({ rows, http, search, sql });

    if (rows === fullListRows) {
      log(`  ${rows} rows: GET /products (all of them)`);
      await expect(200, 'GET', `${mainUrl}/products`); // warm-up
      await settle(500);
      const runsMs: number[] = [];
      let bytes = 0;
      let chunked = false;
      let rssBeforeMb = Number.NaN;
      let rssPeakMb = 0;
      for (let i = 0; i < 3; i++) {
        const sample = await peakRssDuring(servicePid, () => send('GET', `${mainUrl}/products`), 2);
        if (sample.result.status !== 200) throw new Error(`GET /products answered ${sample.result.status}`);
        if (i === 0) rssBeforeMb = sample.beforeMb;
        rssPeakMb = Math.max(rssPeakMb, sample.peakMb);
        runsMs.push(sample.result.ms);
        bytes = sample.result.bytes;
        chunked = sample.result.headers['transfer-encoding'] === 'chunked';
        const count = (sample.result.body as unknown[]).length;
        if (count !== rows) throw new Error(`GET /products returned ${count} rows, expected ${rows}`);
      }
      figures.fullList = {
        rows,
        runsMs,
        medianMs: median(runsMs),
        bytes,
        chunked,
        rssBeforeMb,
        rssPeakMb,
        rssDeltaMb: rssPeakMb - rssBeforeMb,
      };
    }
  }
  return figures;
}

/**
 * The searches on PGlite: the catalogue is seeded into a data directory by this process (50,000
 * rows a statement), then the main service starts on it, is measured, and stops, size after size.
 */
export async function measurePgliteSearch(sizes: readonly number[], demoSiteUrl: string, log: (line: string) => void): Promise<PgliteSearchFigures> {
  const dir = mkdtempSync(join(tmpdir(), 'bench-pglite-search-'));
  const figures: PgliteSearchFigures = { sizes: [] };
  try {
    let seeded = 0;
    for (const rows of [...sizes].sort((a, b) => a - b)) {
      log(`  PGlite, ${rows} rows: seeding the catalogue`);
      const started = performance.now();
      const db = await createPgliteDatabase(dir);
      try {
        await migrate(db);
        for (let from = seeded + 1; from <= rows; from += 50_000) await db.query(CATALOGUE_SEED_SQL, [from, Math.min(rows, from + 49_999)]);
        await db.exec('VACUUM ANALYZE products');
      } finally {
        await db.close();
      }
      const seedS = (performance.now() - started) / 1000;
      seeded = rows;
      log(`  PGlite, ${rows} rows: GET /products?limit=100, then searches`);
      const main = await startMain({ label: `PGlite, ${rows} rows`, dataDir: dir, demoSiteUrl });
      try {
        const http = await sequentialLatency(`${main.url}/products?limit=100`, 50, 100);
        figures.sizes.push({ rows, seedS, http, search: await measureSearches(main.url) });
      } finally {
        await main.child.stop();
      }
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  return figures;
}
