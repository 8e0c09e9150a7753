// Growth: does a first page of GET /products stay as fast at 100k rows as at 1k, and what does a full 10k-row list cost?
import { expect, median, percentile, send } from './client.js';
import { PRODUCT_COLUMNS } from '../src/products/product-store.js';
import type { BenchDatabase } from './database.js';
import { peakRssDuring, settle } from './memory.js';

export interface LatencyFigures {
  samples: number;
  p50Ms: number;
  p90Ms: number;
  p99Ms: number;
}

export interface SizeFigures {
  rows: number;
  http: LatencyFigures;
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
  await db.query('TRUNCATE products RESTART IDENTITY');
  const figures: GrowthFigures = { path, sizes: [], fullList: undefined };
  let seeded = 0;
  for (const rows of [...sizes].sort((a, b) => a - b)) {
    await db.seed(seeded + 1, rows);
    seeded = rows;
    await db.query('VACUUM ANALYZE products');
    log(`  ${rows} rows: GET ${path}`);
    const http = await sequentialLatency(`${mainUrl}${path}`, 50, 300);
    const sql = {
      pageWithTotalMs: await sqlMedian(db, PAGE_WITH_TOTAL_SQL),
      pageMs: await sqlMedian(db, PAGE_SQL),
      countMs: await sqlMedian(db, COUNT_SQL),
    };
    figures.sizes.push({ rows, http, sql });

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
