// `npm run bench`: HTTP against a bare ceiling, scraping, memory and growth, in one run; a table per section and a JSON file.
//
// Environment: BENCH_DURATION_S (measured seconds per server and endpoint, default 10, run as 2 s slices
// alternating ours and the ceiling; warm-up is min(2, that)),
// BENCH_ONLY (comma list of http,scrape,memory,growth,jobs,tracking,logging,startup,articles), BENCH_DATABASE_URL (an administrative
// PostgreSQL URL; a fresh bench_* database is created there and dropped at the end), BENCH_SKIP_BUILD=1
// (use the existing dist/), BENCH_CPU_PROF=1 (V8 CPU profiles into bench/results/cpu-<timestamp>/: the PostgreSQL
// main service's, and each whole-site crawl row's worker processes' or PGlite service's in a folder named after the row), BENCH_GROWTH_ROWS (PostgreSQL, default 1000,10000,100000,1000000), BENCH_PGLITE_SEARCH_ROWS
// (the searches on PGlite, default 1000,100000,1000000; seeding the million takes about two minutes), BENCH_ARTICLE_ROWS
// (article search on PostgreSQL and PGlite, default 100000,1000000; BENCH_PGLITE_ARTICLE_ROWS sets PGlite's alone), BENCH_HTTP_ROWS
// (comma list: only the HTTP rows whose endpoint contains one of them, e.g. `POST /products,limit=1000`),
// BENCH_CRAWL_LATENCIES_MS (the whole-site crawl's per-response latencies, default 100,500; warm rows at the
// shortest). The main service runs with the inspector on 127.0.0.1 so memory readings can follow a forced full GC.
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { startFixtureSite, type FixtureSite } from '../test/fixtures/site.js';
import { expect, median } from './client.js';
import { createBenchDatabase, type BenchDatabase } from './database.js';
import { openBackendCpu } from './database-cpu.js';
import { measureGrowth, measurePgliteSearch, type GrowthFigures, type LatencyFigures, type PgliteSearchFigures, type SearchFigures } from './growth.js';
import { measureJobCrawl, measurePgliteJobCrawl, measureQueueCost, type JobCrawlFigures, type QueueCostFigures } from './jobs.js';
import { measureResponsiveness, type ResponsivenessFigures } from './responsive.js';
import { measureScrapyCrawl, scrapyMissing } from './scrapy.js';
import { measureRescrape, measureTrackingReads, seedTracking, type ReadFigures, type RescrapeFigures } from './tracking.js';
import { measurePair, type LoadOptions, type LoadResult, type LoadSpec } from './http.js';
import { measureWrkPair, wrkMissing, type WrkResult } from './wrk.js';
import { loggingSection, loggingTarget, measureLogging, type LoggingFigures } from './logging.js';
import { measureStartup, startupSection, startupTargets, type StartupFigures } from './startup.js';
import { measureTextThroughput, type TextFigures } from './text.js';
import { collectGarbage } from './inspector.js';
import { childTreeMemory, rssMb, settle, type TreeMemory } from './memory.js';
import { killAllChildrenNow, stopAllChildren } from './processes.js';
import { mark, num, section, table, type TargetCheck } from './report.js';
import {
  measureCrawl,
  measureDynamic,
  measureExtraction,
  measurePageExtraction,
  type CrawlFigures,
  type DynamicFigures,
  type ExtractionFigures,
  type PageExtractionFigures,
} from './scrape.js';
import { measureArticleExtraction, type ArticleExtractionFigures } from './article.js';
import { measureArticleSearchPglite, measureArticleSearchPostgres, type ArticleSearchFigures } from './article-search.js';
import { productBody, sampleText } from './seed.js';
import { ROOT, SERVICE_LOG_LEVEL, startAux, startCeiling, startFlaskText, startMain, type Running } from './services.js';

// ---- settings -------------------------------------------------------------------------------

const PARTS = ['http', 'scrape', 'memory', 'growth', 'jobs', 'tracking', 'logging', 'startup', 'articles'] as const;
type Part = (typeof PARTS)[number];

function settings() {
  const duration = Number(process.env.BENCH_DURATION_S ?? 10);
  if (!(duration > 0)) throw new Error(`BENCH_DURATION_S must be a positive number, got "${process.env.BENCH_DURATION_S}"`);
  const only = (process.env.BENCH_ONLY ?? PARTS.join(','))
    .split(',')
    .map((p) => p.trim())
    .filter(Boolean);
  const unknown = only.filter((p) => !(PARTS as readonly string[]).includes(p));
  if (unknown.length > 0) throw new Error(`BENCH_ONLY: unknown part(s) ${unknown.join(', ')}; choose from ${PARTS.join(', ')}`);
  const rowList = (value: string) => value.split(',').map(Number);
  const growthRows = rowList(process.env.BENCH_GROWTH_ROWS ?? '1000,10000,100000,1000000');
  const pgliteSearchRows = rowList(process.env.BENCH_PGLITE_SEARCH_ROWS ?? '1000,100000,1000000');
  const articleRows = rowList(process.env.BENCH_ARTICLE_ROWS ?? '100000,1000000');
  const pgliteArticleRows = rowList(process.env.BENCH_PGLITE_ARTICLE_ROWS ?? process.env.BENCH_ARTICLE_ROWS ?? '100000,1000000');
  const httpRows = (process.env.BENCH_HTTP_ROWS ?? '')
    .split(',')
    .map((r) => r.trim())
    .filter(Boolean);
  return {
    /** An HTTP row runs when no BENCH_HTTP_ROWS is given or its endpoint contains one of them. */
    httpRow: (endpoint: string) => httpRows.length === 0 || httpRows.some((r) => endpoint.includes(r)),
    connections: 50,
    durationS: duration,
    warmupS: Math.min(2, duration),
    /** The measured time of each server is split into this many slices, alternating ours and the ceiling. */
    slices: Math.max(1, Math.floor(duration / 2)),
    parts: new Set(only as Part[]),
    adminUrl: process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres',
    skipBuild: process.env.BENCH_SKIP_BUILD === '1',
    cpuProf: process.env.BENCH_CPU_PROF === '1',
    catalogue: { pages: 50, perPage: 20 },
    crawlRuns: 5,
    slowPageLatencyMs: 100,
    /** Per-response latencies of the whole-site crawl rows (BENCH_CRAWL_LATENCIES_MS, comma list). */
    crawlLatenciesMs: (process.env.BENCH_CRAWL_LATENCIES_MS ?? '100,500')
      .split(',')
      .map(Number)
      .filter((n) => n > 0),
    dynamicScrapes: 20,
    growthRows,
    pgliteSearchRows,
    articleRows,
    pgliteArticleRows,
    fullListRows: 10_000,
    listRows: 1000,
    rescrapeProducts: 1000,
    rescrapeRounds: 25,
    historyPoints: 1000,
    events: 1_000_000,
    textBytes: 10 * 1024,
    /** In-process text statistics: MB/s on a text this large, median of this many runs. */
    textThroughputBytes: 1024 * 1024,
    textThroughputRuns: 30,
    serviceLogLevel: SERVICE_LOG_LEVEL,
  };
}

const TARGET = {
  ratio: 0.8,
  /** The auxiliary text endpoint against a Flask service doing the original's counts (issue 13). */
  flaskTextRatio: 3,
  /** Our p99 over the bare ceiling's p99 in the same run: the tail both see on a shared machine is queueing. */
  p99Ratio: 1.5,
  crawlMs: 300,
  slowCrawlMs: 1000,
  warmDynamicMs: 500,
  dynamicGrowthMb: 50,
  growthRatio: 1.5,
  /** Median latency of a search, one client, at a million rows or more. */
  searchP50Ms: 20,
  searchTargetRows: 1_000_000,
  rescrapeRatio: 1.2,
  fullListRssMb: 32,
};

// ---- bookkeeping ----------------------------------------------------------------------------

const log = (line: string) => process.stderr.write(`[bench ${new Date().toISOString().slice(11, 19)}] ${line}\n`);

interface HttpRow {
  backend: 'postgresql' | 'pglite' | 'auxiliary';
  endpoint: string;
  ours: LoadResult;
  ceiling: LoadResult;
  ratio: number;
  /** Targets apply on PostgreSQL; the other rows are for information. */
  judged: boolean;
}

/** Our p99 over the ceiling's, from the same run. */
const p99Ratio = (row: HttpRow): number => row.ours.p99Ms / row.ceiling.p99Ms;

interface HeaderSample {
  count: number;
  bytes: number;
  names: string[];
}

async function headerSample(url: string): Promise<HeaderSample> {
  const res = await expect(200, 'GET', url);
  const entries = Object.entries(res.headers).flatMap(([name, value]) => [value].flat().map((v) => `${name}: ${v ?? ''}\r\n`));
  return { count: entries.length, bytes: entries.reduce((n, line) => n + Buffer.byteLength(line), 0), names: Object.keys(res.headers) };
}

interface MemoryReading {
  /** VmRSS after a full GC forced through the inspector (the raw reading when that failed). */
  serviceMb: number;
  /** VmRSS just before that GC. */
  serviceRawMb: number;
  gc: boolean;
  browser?: TreeMemory;
}

interface Results {
  startedAt: string;
  finishedAt?: string;
  machine: { cpus: number; cpuModel: string | undefined; totalMemMb: number; node: string; loadavgStart: number[]; loadavgEnd?: number[] };
  settings: ReturnType<typeof settings> extends infer S ? Omit<S, 'parts'> & { parts: string[] } : never;
  notes: string[];
  http: HttpRow[];
  /** What one GET /products/1 answer carries besides its body, ours vs the ceiling. */
  responseHeaders?: { ours: HeaderSample; ceiling: HeaderSample };
  pgliteMemory?: { idle: MemoryReading; afterHttp: MemoryReading };
  scrape: { crawls: CrawlFigures[]; extraction?: ExtractionFigures; page?: PageExtractionFigures; article?: ArticleExtractionFigures; dynamic?: DynamicFigures };
  text?: TextFigures;
  /** The auxiliary text endpoint beside a Flask stand-in for the original service, same run. */
  flaskText?: { ours: WrkResult; flask: WrkResult } | { missing: string };
  jobs?: JobCrawlFigures[];
  /** Why the jobs table has no Scrapy rows (no /usr/bin/python3 with Scrapy). */
  scrapyMissing?: string;
  queueCost?: QueueCostFigures;
  tracking?: { rescrape: RescrapeFigures; reads: ReadFigures[] };
  responsiveness?: ResponsivenessFigures;
  logging?: LoggingFigures;
  startup?: StartupFigures;
  memory: { idle?: MemoryReading; afterHttp?: MemoryReading; beforeDynamic?: MemoryReading; afterColdDynamic?: MemoryReading; afterDynamic?: MemoryReading; health?: unknown };
  growth?: GrowthFigures;
  pgliteSearch?: PgliteSearchFigures;
  articleSearch?: ArticleSearchFigures[];
  targets: TargetCheck[];
  error?: string;
}

// ---- cleanup --------------------------------------------------------------------------------

const cleanups: Array<() => Promise<unknown> | unknown> = [];
let cleaning: Promise<void> | undefined;

function cleanup(): Promise<void> {
  cleaning ??= (async () => {
    await stopAllChildren();
    for (const task of cleanups.reverse()) {
      try {
        await task();
      } catch (error) {
        log(`cleanup: ${(error as Error).message}`);
      }
    }
  })();
  return cleaning;
}

function onSignal(signal: NodeJS.Signals) {
  log(`${signal}: stopping children, closing fixtures, dropping the database`);
  const force = setTimeout(() => {
    killAllChildrenNow();
    process.exit(130);
  }, 20_000);
  force.unref();
  void cleanup().finally(() => process.exit(130));
}
process.once('SIGINT', onSignal);
process.once('SIGTERM', onSignal);
process.on('exit', killAllChildrenNow);

// ---- the parts ------------------------------------------------------------------------------

function build(skip: boolean): void {
  if (skip) {
    log('BENCH_SKIP_BUILD=1: using the existing dist/');
    return;
  }
  log('building (tsc -p tsconfig.build.json)');
  const tsc = join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');
  const result = spawnSync(process.execPath, [tsc, '-p', 'tsconfig.build.json'], { cwd: ROOT, stdio: ['ignore', 2, 2] });
  if (result.status !== 0) throw new Error('the build failed (see above); fix it, or run with BENCH_SKIP_BUILD=1 to use the existing dist/');
}

async function readMemory(service: Running, withBrowser = false): Promise<MemoryReading> {
  const pid = service.child.pid;
  await settle();
  const serviceRawMb = rssMb(pid);
  const gc = service.inspectPort === undefined ? false : await collectGarbage(service.inspectPort);
  if (gc) await settle(500);
  const reading: MemoryReading = { serviceMb: gc ? rssMb(pid) : serviceRawMb, serviceRawMb, gc };
  if (withBrowser) reading.browser = childTreeMemory(pid);
  return reading;
}

async function seedThroughApi(url: string, count: number): Promise<void> {
  let next = 1;
  const worker = async () => {
    while (next <= count) {
      const n = next++;
      await expect(201, 'POST', `${url}/products`, productBody(n));
    }
  };
  await Promise.all(Array.from({ length: 8 }, worker));
}

function productSpecs(base: string, rows: number): Array<{ endpoint: string; spec: LoadSpec; judged: boolean }> {
  const postBody = JSON.stringify(productBody(rows + 1));
  return [
    { endpoint: 'GET /products/{id}', judged: true, spec: { base, method: 'GET', path: '/products/1', pathFor: () => `/products/${1 + Math.floor(Math.random() * rows)}` } },
    { endpoint: 'GET /products?limit=20', judged: true, spec: { base, method: 'GET', path: '/products?limit=20' } },
    { endpoint: 'GET /products?limit=1000', judged: true, spec: { base, method: 'GET', path: '/products?limit=1000' } },
    { endpoint: 'POST /products', judged: true, spec: { base, method: 'POST', path: '/products', body: postBody, headers: { 'content-type': 'application/json' } } },
  ];
}

async function compare(backend: HttpRow['backend'], endpoint: string, judged: boolean, ceiling: LoadSpec, ours: LoadSpec, options: LoadOptions): Promise<HttpRow> {
  log(`  ${backend} ${endpoint}: warm-up, then ceiling and ours in alternating slices`);
  const [c, o] = await measurePair(ceiling, ours, options);
  return { backend, endpoint, ours: o, ceiling: c, ratio: o.requestsPerSecond / c.requestsPerSecond, judged };
}

async function httpOnPostgres(main: Running, db: BenchDatabase, s: ReturnType<typeof settings>, results: Results): Promise<void> {
  const options: LoadOptions = { connections: s.connections, durationS: s.durationS, warmupS: s.warmupS, slices: s.slices };
  const ceiling = await startCeiling('PostgreSQL', { databaseUrl: db.url });
  // Only one server is loaded at a time, so the database's backends work for it alone.
  const database = await openBackendCpu(db.url);
  try {
    results.responseHeaders = { ours: await headerSample(`${main.url}/products/1`), ceiling: await headerSample(`${ceiling.url}/products/1`) };
    for (const { endpoint, judged, spec } of productSpecs(main.url, s.listRows).filter((r) => s.httpRow(r.endpoint))) {
      const ours = { ...spec, pid: main.child.pid, database };
      results.http.push(await compare('postgresql', endpoint, judged, { ...spec, base: ceiling.url, pid: ceiling.child.pid, database }, ours, options));
    }
    // The POST runs added rows; the lists and scrapes after this see the seeded 1000 again.
    await db.query(`DELETE FROM products WHERE id > ${s.listRows}`);
    await db.query('VACUUM ANALYZE products');
    if (!s.httpRow('POST /process/text')) return;

    const aux = await startAux(main.url);
    try {
      const body = JSON.stringify({ text: sampleText(s.textBytes) });
      const spec: LoadSpec = { base: aux.url, method: 'POST', path: '/process/text', body, headers: { 'content-type': 'application/json' }, pid: aux.child.pid };
      results.http.push(await compare('auxiliary', `POST /process/text (${s.textBytes / 1024} KB)`, false, { ...spec, base: ceiling.url, pid: ceiling.child.pid }, spec, options));
      const noWrk = wrkMissing();
      const flask = noWrk === undefined ? await startFlaskText() : { missing: noWrk };
      if ('missing' in flask) results.flaskText = { missing: flask.missing };
      else {
        try {
          log(`  auxiliary POST /process/text: warm-up, then the Flask stand-in and ours in alternating slices (wrk)`);
          const target = (url: string, pid: number) => ({ url: `${url}/process/text`, body, contentType: 'application/json', pid });
          const [f, o] = await measureWrkPair(target(flask.url, flask.child.pid), target(aux.url, aux.child.pid), options);
          results.flaskText = { ours: o, flask: f };
        } finally {
          await flask.child.stop();
        }
      }
    } finally {
      await aux.child.stop();
    }
  } finally {
    await database.close();
    await ceiling.child.stop();
  }
}

async function httpOnPglite(fixture: FixtureSite, s: ReturnType<typeof settings>, results: Results): Promise<void> {
  const options: LoadOptions = { connections: s.connections, durationS: s.durationS, warmupS: s.warmupS, slices: s.slices };
  const dir = mkdtempSync(join(tmpdir(), 'bench-pglite-'));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  log('PGlite: starting the main service (temp DATA_DIR) and seeding 1000 products through the API');
  const main = await startMain({ label: 'PGlite', dataDir: join(dir, 'service'), demoSiteUrl: `${fixture.url}books/` });
  try {
    const idle = await readMemory(main);
    await seedThroughApi(main.url, s.listRows);
    const ceiling = await startCeiling('PGlite', { pgliteDir: join(dir, 'ceiling'), seedRows: s.listRows });
    try {
      for (const { endpoint, spec } of productSpecs(main.url, s.listRows).filter((r) => s.httpRow(r.endpoint))) {
        results.http.push(await compare('pglite', endpoint, false, { ...spec, base: ceiling.url, pid: ceiling.child.pid }, { ...spec, pid: main.child.pid }, options));
      }
    } finally {
      await ceiling.child.stop();
    }
    results.pgliteMemory = { idle, afterHttp: await readMemory(main) };
  } finally {
    await main.child.stop();
  }
}

// ---- judging and printing -------------------------------------------------------------------

function judge(results: Results): void {
  const t = results.targets;
  for (const row of results.http.filter((r) => r.judged)) {
    t.push({ section: 'http', name: `${row.endpoint} req/s vs ceiling`, value: row.ratio, unit: 'x', target: `>= ${TARGET.ratio}`, pass: row.ratio >= TARGET.ratio });
    // At 50 connections on 2 shared cores the tail is mostly queueing, which an absolute bound would
    // judge the machine by: ours is held to the bare ceiling's p99 in the same run instead.
    const tail = p99Ratio(row);
    t.push({
      section: 'http',
      name: `${row.endpoint} p99 vs ceiling (${num(row.ours.p99Ms, 2)} / ${num(row.ceiling.p99Ms, 2)} ms)`,
      value: tail,
      unit: 'x',
      target: `<= ${TARGET.p99Ratio}`,
      pass: tail <= TARGET.p99Ratio,
    });
    const failures = row.ours.errors + row.ours.non2xx;
    t.push({ section: 'http', name: `${row.endpoint} errors + non-2xx`, value: failures, unit: '', target: '= 0', pass: failures === 0 });
  }
  const ft = results.flaskText;
  if (ft !== undefined && 'ours' in ft) {
    const ratio = ft.ours.requestsPerSecond / ft.flask.requestsPerSecond;
    t.push({
      section: 'http',
      name: `POST /process/text (${results.settings.textBytes / 1024} KB) req/s vs the Flask stand-in of the original`,
      value: ratio,
      unit: 'x',
      target: `>= ${TARGET.flaskTextRatio}`,
      pass: ratio >= TARGET.flaskTextRatio,
    });
  }
  const [fast, slow] = results.scrape.crawls;
  if (fast)
    t.push({ section: 'scrape', name: 'crawl 1000 books, median', value: fast.medianMs, unit: 'ms', target: `<= ${TARGET.crawlMs} ms`, pass: fast.medianMs <= TARGET.crawlMs });
  if (slow)
    t.push({
      section: 'scrape',
      name: `crawl 1000 books, ${results.settings.slowPageLatencyMs} ms/page, median`,
      value: slow.medianMs,
      unit: 'ms',
      target: `<= ${TARGET.slowCrawlMs} ms`,
      pass: slow.medianMs <= TARGET.slowCrawlMs,
    });
  const dyn = results.scrape.dynamic;
  if (dyn)
    t.push({
      section: 'scrape',
      name: 'warm dynamic scrape, median',
      value: dyn.warmMedianMs,
      unit: 'ms',
      target: `< ${TARGET.warmDynamicMs} ms`,
      pass: dyn.warmMedianMs < TARGET.warmDynamicMs,
    });
  const m = results.memory;
  // The first dynamic scrape loads playwright-core (~45 MB, once, lazily so that services that never
  // render do not pay it) and starts Chromium: a one-time cost, shown beside the table. Growth is
  // judged from there on, where contexts left open would show.
  if (m.afterColdDynamic && m.afterDynamic) {
    const growth = m.afterDynamic.serviceMb - m.afterColdDynamic.serviceMb;
    t.push({
      section: 'memory',
      name: `service RSS growth, after 1st -> after ${results.settings.dynamicScrapes}th dynamic scrape`,
      value: growth,
      unit: 'MB',
      target: `< ${TARGET.dynamicGrowthMb} MB`,
      pass: growth < TARGET.dynamicGrowthMb,
    });
  }
  if (m.afterColdDynamic?.browser && m.afterDynamic?.browser) {
    const growth = m.afterDynamic.serviceMb + m.afterDynamic.browser.pssMb - (m.afterColdDynamic.serviceMb + m.afterColdDynamic.browser.pssMb);
    t.push({
      section: 'memory',
      name: 'service + browser (PSS) growth, after 1st -> after 20th scrape',
      value: growth,
      unit: 'MB',
      target: `< ${TARGET.dynamicGrowthMb} MB`,
      pass: growth < TARGET.dynamicGrowthMb,
    });
  }
  if (results.logging) t.push(loggingTarget(results.logging));
  if (results.startup) t.push(...startupTargets(results.startup));
  const rs = results.responsiveness;
  if (rs) {
    t.push({
      section: 'scrape',
      name: `/health p99 during ${rs.scrapesAtOnce} concurrent ${(rs.pageBytes / 1e6).toFixed(1)} MB scrapes, threads / inline (${num(rs.threaded.health.p99Ms, 1)} / ${num(rs.inline.health.p99Ms, 1)} ms)`,
      value: rs.threaded.health.p99Ms / rs.inline.health.p99Ms,
      unit: 'x',
      target: '< 1',
      pass: rs.threaded.health.p99Ms < rs.inline.health.p99Ms,
    });
  }
  const tr = results.tracking;
  if (tr) {
    const r = tr.rescrape;
    t.push({
      section: 'tracking',
      name: `re-scrape of ${r.products} unchanged products with history / without`,
      value: r.ratio,
      unit: 'x',
      target: `<= ${TARGET.rescrapeRatio}`,
      pass: r.ratio <= TARGET.rescrapeRatio,
    });
    t.push({
      section: 'tracking',
      name: `rows the ${r.rounds} unchanged re-scrapes added (observations + events)`,
      value: r.observationsAdded + r.eventsAdded,
      unit: '',
      target: '= 0',
      pass: r.observationsAdded + r.eventsAdded === 0,
    });
    for (const read of tr.reads) {
      const failures = read.result.errors + read.result.non2xx;
      t.push({ section: 'tracking', name: `${read.endpoint} errors + non-2xx`, value: failures, unit: '', target: '= 0', pass: failures === 0 });
    }
  }
  const g = results.growth;
  if (g && g.sizes.length >= 2) {
    const first = g.sizes[0]!;
    const last = g.sizes[g.sizes.length - 1]!;
    const ratio = last.http.p50Ms / first.http.p50Ms;
    t.push({
      section: 'growth',
      name: `limit=100 p50 at ${last.rows} rows / at ${first.rows} rows`,
      value: ratio,
      unit: 'x',
      target: `<= ${TARGET.growthRatio}`,
      pass: ratio <= TARGET.growthRatio,
    });
  }
  const searchSizes: Array<{ backend: string; rows: number; search: SearchFigures[] }> = [
    ...(g?.sizes ?? []).map((z) => ({ backend: 'PostgreSQL', rows: z.rows, search: z.search })),
    ...(results.pgliteSearch?.sizes ?? []).map((z) => ({ backend: 'PGlite', rows: z.rows, search: z.search })),
  ];
  for (const { backend, rows, search } of searchSizes.filter((z) => z.rows >= TARGET.searchTargetRows)) {
    for (const f of search) {
      t.push({
        section: 'growth',
        name: `${backend}, ${rows.toLocaleString('en-US')} rows: GET /products?${f.label} p50`,
        value: f.http.p50Ms,
        unit: 'ms',
        target: `< ${TARGET.searchP50Ms} ms`,
        pass: f.http.p50Ms < TARGET.searchP50Ms,
      });
    }
  }
  if (g?.fullList) {
    t.push({
      section: 'growth',
      name: `full list of ${g.fullList.rows} rows streamed (chunked)`,
      value: g.fullList.chunked ? 1 : 0,
      unit: '',
      target: 'chunked',
      pass: g.fullList.chunked,
    });
    t.push({
      section: 'growth',
      name: `full list of ${g.fullList.rows} rows: service RSS peak - before`,
      value: g.fullList.rssDeltaMb,
      unit: 'MB',
      target: `< ${TARGET.fullListRssMb} MB (stated bound)`,
      pass: g.fullList.rssDeltaMb < TARGET.fullListRssMb,
    });
  }
}

/** /health while big pages are scraped: the event loop's freedom with and without extraction threads. */
function responsivenessTable(rs: ResponsivenessFigures | undefined): string {
  if (rs === undefined) return '';
  const row = (label: string, r: { health: LoadResult; scrapes: number }) => [
    label,
    num(r.health.requestsPerSecond, 0),
    num(r.health.p50Ms, 1),
    num(r.health.p99Ms, 1),
    num(r.health.maxMs, 0),
    String(r.scrapes),
  ];
  return (
    `\n\n/health at 10 connections while ${rs.scrapesAtOnce} scrapes of a ${num(rs.pageBytes / 1e6, 1)} MB listing run at once, again and again:\n` +
    table(
      ['extraction', '/health req/s', 'p50 ms', 'p99 ms', 'max ms', 'scrapes done'],
      [row('inline, on the event loop (EXTRACT_THREADS=0)', rs.inline), row(`in ${rs.threaded.threads} worker thread(s) (the default)`, rs.threaded)],
    )
  );
}

/** Ours beside the Flask stand-in of the original text service (bench/reference/flask_text.py). */
function flaskSection(results: Results): string[] {
  const ft = results.flaskText;
  if (ft === undefined) return [];
  const s = results.settings;
  if ('missing' in ft) return [section('Text service beside a Flask stand-in of the original', `Not measured: ${ft.missing}.`, '')];
  const row = (label: string, r: WrkResult) => [label, num(r.requestsPerSecond, 0), num(r.p50Ms, 2), num(r.p99Ms, 2), String(r.errors), num(r.cpuUsPerRequest, 0)];
  return [
    section(
      'Text service beside a Flask stand-in of the original',
      `POST /process/text with ${s.textBytes / 1024} KB of prose, ${s.connections} connections, ${s.durationS} s each in alternating slices, both loaded by wrk: Flask's\n` +
        'server closes the connection after every answer, which autocannon stalls on. The original Python service is not in this\n' +
        'repository: bench/reference/flask_text.py does what its spec describes (str.split() word count, len() character count) on\n' +
        "Flask's threaded server, with this machine's python3. It computes far less than ours (graphemes, sentences, paragraphs, top words).\n" +
        "p50/p99: medians of the slices' own percentiles.\n" +
        `ours / Flask = ${num(ft.ours.requestsPerSecond / ft.flask.requestsPerSecond, 2)}x (target >= ${TARGET.flaskTextRatio}).`,
      table(['service', 'req/s', 'p50 ms', 'p99 ms', 'err', 'CPU µs/req'], [row('ours (auxiliary service)', ft.ours), row('Flask stand-in', ft.flask)]),
    ),
  ];
}

function httpFootnotes(results: Results): string {
  const lines: string[] = [];
  const h = results.responseHeaders;
  if (h) {
    lines.push(`Response headers of GET /products/1: ours ${h.ours.count} headers, ${h.ours.bytes} bytes; ceiling ${h.ceiling.count}, ${h.ceiling.bytes} bytes.`);
  }
  for (const r of results.http) {
    for (const [who, load] of [
      ['ours', r.ours],
      ['ceiling', r.ceiling],
    ] as const) {
      const odd = Object.entries(load.statuses).filter(([code]) => !code.startsWith('2'));
      if (odd.length > 0 || load.errors > 0) {
        lines.push(
          `${r.backend} ${r.endpoint}, ${who}: ${odd.map(([code, n]) => `${n} x ${code}`).join(', ') || 'no bad statuses'}; ${load.errors} connection errors (${load.timeouts} timeouts).`,
        );
      }
    }
  }
  return lines.length === 0 ? '' : `\n\n${lines.join('\n')}`;
}

function render(results: Results): string {
  const out: string[] = [];
  const s = results.settings;
  out.push(
    `# Benchmarks ${results.startedAt}  (${results.machine.cpus} cores, node ${results.machine.node}, load average ${results.machine.loadavgStart[0]?.toFixed(2)} at start, ${results.machine.loadavgEnd?.[0]?.toFixed(2)} at the end)`,
  );
  out.push(...results.notes.map((n) => `- ${n}`));

  if (results.http.length > 0) {
    const rows: Array<string[] | string> = [];
    let backend = '';
    for (const r of results.http) {
      if (r.backend !== backend) {
        backend = r.backend;
        rows.push(backend === 'postgresql' ? '[main service on PostgreSQL]' : backend === 'pglite' ? '[main service on PGlite (no targets)]' : '[auxiliary service (no target)]');
      }
      const ratioPass = r.judged ? r.ratio >= TARGET.ratio : undefined;
      const p99Pass = r.judged ? p99Ratio(r) <= TARGET.p99Ratio : undefined;
      rows.push([
        r.endpoint,
        num(r.ours.requestsPerSecond, 0),
        num(r.ours.p50Ms, 2),
        num(r.ours.p99Ms, 2),
        String(r.ours.errors + r.ours.non2xx),
        num(r.ceiling.requestsPerSecond, 0),
        num(r.ceiling.p50Ms, 2),
        num(r.ceiling.p99Ms, 2),
        `${num(r.ratio, 2)} ${mark(ratioPass)}`,
        `${num(p99Ratio(r), 2)} ${mark(p99Pass)}`,
        `${num(r.ours.cpuUsPerRequest, 0)} / ${num(r.ceiling.cpuUsPerRequest, 0)}`,
        Number.isNaN(r.ours.databaseCpuUsPerRequest) ? '' : `${num(r.ours.databaseCpuUsPerRequest, 0)} / ${num(r.ceiling.databaseCpuUsPerRequest, 0)}`,
      ]);
    }
    out.push(
      section(
        'HTTP',
        `${s.connections} connections, ${s.durationS} s measured per server after ${s.warmupS} s warm-up, in ${s.slices} slice${s.slices === 1 ? '' : 's'} alternating ceiling/ours; services at LOG_LEVEL=${s.serviceLogLevel}.\n` +
          `Ceiling: bare node:http + the same query (pg Pool of 10 / PGlite), JSON.stringify; for text, the same textStats().\n` +
          `Targets (PostgreSQL rows): ratio (req/s ours / ceiling) >= ${TARGET.ratio}, p99 ours / ceiling <= ${TARGET.p99Ratio}, no errors. err = errors + non-2xx.\n` +
          'CPU µs/req: user+system time of the server process per answered request (the database not included); unlike req/s it\n' +
          "hardly moves with the machine's other load, so it is the steadier measure of what each request costs us. DB µs/req: the same\n" +
          "for the PostgreSQL backends of the bench's database (from /proc), which share the machine's cores with the server.",
        table(
          [
            'endpoint',
            'ours req/s',
            'p50 ms',
            'p99 ms',
            'err',
            'ceiling req/s',
            'p50 ms',
            'p99 ms',
            'ratio',
            'p99 ours / ceiling',
            'CPU µs/req ours / ceiling',
            'DB µs/req ours / ceiling',
          ],
          rows,
        ) + httpFootnotes(results),
      ),
    );
  }
  out.push(...flaskSection(results));

  const tx = results.text;
  if (tx) {
    const rows = [tx.ascii, tx.asciiBySegmenter, tx.accented].map((f) => [f.label, num(f.bytes / 1e6, 2), num(f.medianMs, 1), num(f.mbPerSecond, 0)]);
    const aux = results.http.find((r) => r.backend === 'auxiliary');
    const auxLine =
      aux === undefined
        ? ''
        : `\nOver HTTP (the auxiliary row above, ${s.textBytes / 1024} KB at ${s.connections} connections): ${num(aux.ours.requestsPerSecond, 0)} answers/s, ${num(aux.ours.cpuUsPerRequest, 0)} µs of CPU each.`;
    out.push(
      section(
        'Text statistics in this process',
        `textStats() on about ${num(s.textThroughputBytes / 1e6, 1)} MB of English-like prose (the bench's sample text), median of ${tx.ascii.runs} runs (${tx.accented.runs} for the general path).\n` +
          `Pure ASCII takes the fast path; the second row is the general path (Intl.Segmenter) on the same text, which is what every text took before; ` +
          `fast / general = ${num(tx.asciiBySegmenter.medianMs / tx.ascii.medianMs, 1)}x.`,
        table(['text', 'MB', 'median ms', 'MB/s'], rows) + auxLine,
      ),
    );
  }

  const crawls = results.scrape.crawls;
  const dyn = results.scrape.dynamic;
  if (crawls.length > 0 || dyn) {
    const rows: Array<string[] | string> = crawls.map((c, i) => {
      const target = i === 0 ? TARGET.crawlMs : TARGET.slowCrawlMs;
      return [
        c.label,
        num(c.medianMs, 0),
        num(c.minMs, 0),
        num(c.maxMs, 0),
        num(median(c.serviceMs), 0),
        num(c.booksPerSecond, 0),
        num(c.firstMs, 0),
        `<= ${target} ${mark(c.medianMs <= target)}`,
      ];
    });
    const crawlTable = table(['crawl (static, max_pages 50, 1000 books)', 'median ms', 'min', 'max', 'service ms', 'books/s', '1st run ms', 'target'], rows);
    const ex = results.scrape.extraction;
    const extraction =
      ex === undefined
        ? ''
        : `\nFloor: the service's extract() alone over the ${ex.pages} pages (${ex.books} books), in the bench process, no fetch/store/log: ` +
          `median ${num(ex.medianMs, 0)} ms, of which cheerio.load (htmlparser2) ${num(ex.parseMedianMs, 0)} ms.`;
    const pe = results.scrape.page;
    const pageRow =
      pe === undefined
        ? ''
        : `\nOne real-world-sized product page (${num(pe.bytes / 1024, 0)} KB: mega menu, inline app state, 80 reviews, carousels; ` +
          `classified ${pe.pageType}, ${pe.items} item): extraction median ${num(pe.medianMs, 1)} ms, p95 ${num(pe.p95Ms, 1)} ms over ${pe.runs} runs.`;
    const ae = results.scrape.article;
    const articleRow =
      ae === undefined
        ? ''
        : `\nOne real-world-sized news article page (${num(ae.bytes / 1024, 0)} KB: inline app state, mega menu, a ${ae.words}-word story with figures, 300 comments, ` +
          `40 teasers; classified ${ae.pageType}): article extraction (evidence, classification, Readability's DOM and body, merge, sanitized HTML) ` +
          `median ${num(ae.medianMs, 1)} ms, p95 ${num(ae.p95Ms, 1)} ms over ${ae.runs} runs.`;
    const dynTable =
      dyn === undefined
        ? ''
        : '\n\n' +
          table(
            ['dynamic (script-rendered page, wait_for .card)', 'ms', 'target'],
            [
              ['cold: first request, launches Chromium', num(dyn.coldMs, 0), ''],
              [
                `warm: median of ${dyn.warmMs.length} (min ${num(dyn.warmMinMs, 0)}, max ${num(dyn.warmMaxMs, 0)}; service ${num(dyn.warmServiceMedianMs, 0)})`,
                num(dyn.warmMedianMs, 0),
                `< ${TARGET.warmDynamicMs} ${mark(dyn.warmMedianMs < TARGET.warmDynamicMs)}`,
              ],
            ],
          );
    out.push(
      section(
        'Scraping',
        `Local catalogue served by the bench (${s.catalogue.pages} pages x ${s.catalogue.perPage} books); ${s.crawlRuns} counted runs after one uncounted first run\n` +
          '(which creates the rows; the counted runs update them). The page renders its cards 300 ms after load, a floor under every dynamic scrape.',
        crawlTable + extraction + pageRow + articleRow + dynTable + responsivenessTable(results.responsiveness),
      ),
    );
  }

  const jobs = results.jobs ?? [];
  const bound = (j: JobCrawlFigures) => (j.workers * j.concurrency) / (j.latencyMs / 1000);
  if (jobs.length > 0) {
    const sync = results.scrape.crawls[0];
    const syncPerPage = sync === undefined ? undefined : sync.medianMs / sync.pages;
    const syncRate = sync === undefined ? undefined : sync.pages / (sync.medianMs / 1000);
    const rows = jobs.map((j) => [
      j.label,
      String(j.pages),
      num(j.ms, 0),
      num(j.pagesPerSecond, 0),
      Number.isNaN(j.handlerMeanMs) ? '' : num(j.handlerMeanMs, 2),
      // With added latency the bound is the pages the workers hold at once, not the queue.
      j.latencyMs > 0 ? `${num(bound(j), 0)} (${num((j.pagesPerSecond / bound(j)) * 100, 0)} %)` : '',
      num(j.footprint.cpuSPer1000Pages, 2),
      j.footprint.backend === 'postgresql'
        ? `${num(j.footprint.serviceCpuS, 2)} + ${num(j.footprint.databaseCpuS, 2)}`
        : `${num(j.footprint.serviceCpuS, 2)} (${j.footprint.backend === 'pglite' ? 'in process' : 'no DB'})`,
      num(j.footprint.peakRssMb, 0),
      j.site === undefined || j.site.requests === 0 ? '' : `${num(j.site.answerMs / j.site.spanMs, 1)} / ${num(j.site.answerMs / j.site.requests, 0)}`,
    ]);
    const scrapyRow = results.scrapyMissing === undefined ? [] : [`Scrapy, ${jobs[0]!.concurrency} at once: not measured: ${results.scrapyMissing}.`];
    const q = results.queueCost;
    const queueLine =
      q === undefined || syncPerPage === undefined
        ? ''
        : `\nThe queue's own cost per page: ${num(q.msPerJob, 2)} ms (${q.jobs} no-op page jobs at ${q.concurrency} at once, one process), ` +
          `${num((q.msPerJob / syncPerPage) * 100, 0)} % of the synchronous crawl's ${num(syncPerPage, 2)} ms per page ` +
          `${mark(q.msPerJob / syncPerPage < 0.1)} (target under 10 %).`;
    out.push(
      section(
        'Jobs: whole-site crawl by worker processes',
        `The catalogue's listing and detail pages from its sitemap and links, as one crawl job; ${jobs[0]!.concurrency} pages at once per worker.\n` +
          `The synchronous crawl above (50 listing pages, 8 at a time per host): ${syncRate === undefined ? '—' : num(syncRate, 0)} pages/s.\n` +
          "CPU s / 1000 pages: the crawl's CPU from its submission to its end per 1,000 pages: the worker processes + the PostgreSQL\n" +
          "backends of the bench's database (every client's, read from /proc: workers, the API, the queue); on PGlite the one service\n" +
          "process, which holds the database. Peak RSS: the highest sum of the crawling processes' VmRSS, sampled every 100 ms\n" +
          '(the worker processes; on PGlite the service). PGlite rows count pages_done; PostgreSQL rows count frontier rows.\n' +
          "Scrapy rows: bench/reference/scrapy_crawl.py (Debian's python3-scrapy) crawls the same pages on the same site server, as many\n" +
          "requests at once, in one process that keeps no database; its pages, time and CPU from its engine's start to its close, its peak RSS ru_maxrss.\n" +
          'Warm (at the shortest latency): the worker processes (on PGlite the service) crawled the site without added latency first, not\n' +
          'measured, as ones that have been running meet their next crawl; every other row starts fresh processes, whose first seconds\n' +
          'run code not yet optimised, on new connections.\n' +
          'Site: what the site server saw, from the first request to the last answer: requests in flight on average, and ms to answer one\n' +
          '(arrival to close, the added latency included): pages/s is about the first over the second, so a row short of its bound shows\n' +
          'whether the crawler left slots idle or the answers came slower than the latency (the site shares the machine with the crawler).',
        table(
          [
            'crawl',
            'pages',
            'ms',
            'pages/s',
            'handler ms/page',
            'bound pages/s (reached)',
            'CPU s / 1000 pages',
            'CPU s: service + DB',
            'peak RSS MB',
            'site: in flight / answer ms',
          ],
          [...rows, ...scrapyRow],
        ) + queueLine,
      ),
    );
  }

  const tr = results.tracking;
  if (tr) {
    const r = tr.rescrape;
    const rows = tr.reads.map((read) => [
      read.endpoint,
      num(read.result.requestsPerSecond, 0),
      num(read.result.p50Ms, 2),
      num(read.result.p99Ms, 2),
      num(read.result.cpuUsPerRequest, 0),
    ]);
    out.push(
      section(
        'Tracking: history and change events',
        `A re-scrape of ${r.products} unchanged products (one batch, ${r.rounds} rounds each, alternating): the plain upsert ${num(r.plainMedianMs, 1)} ms, ` +
          `with history and events ${num(r.trackedMedianMs, 1)} ms = ${num(r.ratio, 2)}x ${mark(r.ratio <= TARGET.rescrapeRatio)} (target <= ${TARGET.rescrapeRatio}); ` +
          `rows added: ${r.observationsAdded} observations, ${r.eventsAdded} events ${mark(r.observationsAdded + r.eventsAdded === 0)}.\n` +
          `Reads at ${results.settings.connections} connections, one product with ${results.settings.historyPoints} history points and ${results.settings.events.toLocaleString('en-US')} events in the table:`,
        table(['endpoint', 'req/s', 'p50 ms', 'p99 ms', 'CPU µs/req'], rows),
      ),
    );
  }

  const m = results.memory;
  if (m.idle || m.afterDynamic) {
    const raw = (r: MemoryReading | undefined) => (r === undefined ? '—' : `${num(r.serviceRawMb, 0)}`);
    const b = (r: MemoryReading | undefined) => (r?.browser ? `${num(r.browser.pssMb, 0)} PSS / ${num(r.browser.rssMb, 0)} RSS (${r.browser.processes} procs)` : '—');
    const rows: Array<string[] | string> = [
      ['idle (after start)', raw(m.idle), num(m.idle?.serviceMb, 0), b(m.idle)],
      ['after the HTTP runs', raw(m.afterHttp), num(m.afterHttp?.serviceMb, 0), b(m.afterHttp)],
      ['before the first dynamic scrape', raw(m.beforeDynamic), num(m.beforeDynamic?.serviceMb, 0), b(m.beforeDynamic)],
      ['after the 1st (cold) dynamic scrape', raw(m.afterColdDynamic), num(m.afterColdDynamic?.serviceMb, 0), b(m.afterColdDynamic)],
      [`after ${s.dynamicScrapes} dynamic scrapes`, raw(m.afterDynamic), num(m.afterDynamic?.serviceMb, 0), b(m.afterDynamic)],
    ];
    if (results.pgliteMemory) {
      rows.push('[main service on PGlite]');
      rows.push(['idle (after start)', num(results.pgliteMemory.idle.serviceRawMb, 0), num(results.pgliteMemory.idle.serviceMb, 0), '']);
      rows.push(['after the HTTP runs', num(results.pgliteMemory.afterHttp.serviceRawMb, 0), num(results.pgliteMemory.afterHttp.serviceMb, 0), '']);
    }
    const checks = results.targets.filter((t) => t.section === 'memory').map((t) => `${mark(t.pass)} ${t.name}: ${num(t.value, 1)} MB (target ${t.target})`);
    if (m.beforeDynamic && m.afterColdDynamic && m.afterDynamic) {
      checks.unshift(
        `  the 1st dynamic scrape (loads playwright-core, starts Chromium; once): +${num(m.afterColdDynamic.serviceMb - m.beforeDynamic.serviceMb, 1)} MB; ` +
          `all ${s.dynamicScrapes} together: +${num(m.afterDynamic.serviceMb - m.beforeDynamic.serviceMb, 1)} MB`,
      );
    }
    out.push(
      section(
        'Memory (main service on PostgreSQL), MB',
        'VmRSS 1 s after the work stopped, then again after a full GC forced through the inspector (the targets use that one,\n' +
          'so the figures compare live memory, not GC timing). Browser: the processes the service started; PSS shares common pages fairly.',
        table(['when', 'service RSS', 'after GC', 'browser (PSS / RSS)'], rows) + (checks.length > 0 ? `\n\n${checks.join('\n')}` : ''),
      ),
    );
  }

  const g = results.growth;
  if (g) {
    const base = g.sizes[0];
    const rows = g.sizes.map((z) => [
      String(z.rows),
      num(z.http.p50Ms, 2),
      num(z.http.p90Ms, 2),
      num(z.http.p99Ms, 2),
      base === undefined ? '—' : num(z.http.p50Ms / base.http.p50Ms, 2),
      num(z.sql.pageWithTotalMs, 2),
      num(z.sql.pageMs, 2),
      num(z.sql.countMs, 2),
    ]);
    let text = table(['rows', 'p50 ms', 'p90 ms', 'p99 ms', 'p50 vs first', 'SQL ours ms', 'SQL page alone', 'SQL count(*)'], rows);
    const ratioCheck = results.targets.find((t) => t.section === 'growth' && t.name.startsWith('limit=100 p50'));
    if (ratioCheck) text += `\n\n${mark(ratioCheck.pass)} ${ratioCheck.name}: ${num(ratioCheck.value, 2)}x (target ${ratioCheck.target})`;
    if (g.fullList) {
      const f = g.fullList;
      text +=
        `\n${mark(f.chunked)} full list of ${f.rows} rows: median ${num(f.medianMs, 0)} ms (${f.runsMs.map((r) => num(r, 0)).join(', ')}), ` +
        `${num(f.bytes / 1024 / 1024, 2)} MB, ${f.chunked ? 'streamed (chunked)' : 'not streamed (Content-Length: built in memory)'}` +
        `\n${mark(f.rssDeltaMb < TARGET.fullListRssMb)} service RSS during it: ${num(f.rssBeforeMb, 0)} -> peak ${num(f.rssPeakMb, 0)} MB, +${num(f.rssDeltaMb, 1)} MB (stated bound < ${TARGET.fullListRssMb} MB)`;
    }
    text += `\n\n${searchTable(results)}`;
    out.push(
      section(
        `Growth: GET ${g.path} (PostgreSQL) and searches (PostgreSQL, PGlite), one client, 300 (searches: 100) sequential requests after 50 (10) warm-up`,
        "SQL columns, timed directly on the database (median of 30): the service's one statement (the page with the running total\n" +
          'behind X-Total-Count), the page alone, and the count(*) that the running total replaces.',
        text,
      ),
    );
  }

  if (results.articleSearch && results.articleSearch.length > 0) out.push(articleSearchSection(results.articleSearch));
  if (results.startup) out.push(startupSection(results.startup));
  if (results.logging) out.push(loggingSection(results.logging, { connections: s.connections, durationS: s.durationS, warmupS: s.warmupS, slices: s.slices }));
  const missed = results.targets.filter((t) => !t.pass);
  out.push(
    section(
      'Targets',
      undefined,
      `${results.targets.length - missed.length} of ${results.targets.length} met` +
        (missed.length > 0 ? `; missed:\n${missed.map((t) => `  ✗ [${t.section}] ${t.name}: ${num(t.value, 2)} ${t.unit} (target ${t.target})`).join('\n')}` : ''),
    ),
  );
  if (results.error) out.push(`\nThe run stopped early: ${results.error.split('\n')[0]}`);
  return out.join('\n');
}

/** Article search latency per backend, size and query. */
function articleSearchSection(figures: readonly ArticleSearchFigures[]): string {
  const rows: Array<string[] | string> = [];
  for (const f of figures) {
    rows.push(`${f.backend}, ${f.rows.toLocaleString('en-US')} articles (seeded in ${num(f.seedS, 0)} s)`);
    for (const q of f.queries) rows.push([`  ${q.label}`, q.matches.toLocaleString('en-US'), num(q.medianMs, 2), num(q.p95Ms, 2)]);
  }
  return section(
    'Articles: GET /articles?q=… over a news archive, one client',
    `limit=20; each query answered ${figures[0]?.queries[0]?.samples ?? 0} times after 10 warm-up requests. Every search ranks (or sorts) all its matches and counts them for X-Total-Count;\n` +
      'nine in ten articles are English, one in twenty German, one in twenty of unknown language (each searched in its own configuration).',
    table(['query', 'matches', 'median ms', 'p95 ms'], rows),
  );
}

/** Search latency at each size, PostgreSQL then PGlite, with the target at a million rows. */
function searchTable(results: Results): string {
  const rows: Array<string[] | string> = [];
  const add = (backend: string, sizes: Array<{ rows: number; search: SearchFigures[]; http?: LatencyFigures }>, note = '') => {
    if (sizes.length === 0) return;
    rows.push(`[${backend}${note}]`);
    for (const size of sizes) {
      const h = size.http;
      if (h !== undefined) rows.push([size.rows.toLocaleString('en-US'), 'GET /products?limit=100 (no search)', '', num(h.p50Ms, 2), num(h.p90Ms, 2), num(h.p99Ms, 2), '']);
      for (const f of size.search) {
        const judged = size.rows >= TARGET.searchTargetRows;
        rows.push([
          size.rows.toLocaleString('en-US'),
          `GET /products?${f.label}`,
          f.matches.toLocaleString('en-US'),
          num(f.http.p50Ms, 2),
          num(f.http.p90Ms, 2),
          num(f.http.p99Ms, 2),
          judged ? `< ${TARGET.searchP50Ms} ${mark(f.http.p50Ms < TARGET.searchP50Ms)}` : '',
        ]);
      }
    }
  };
  add(
    'PostgreSQL',
    (results.growth?.sizes ?? []).map((z) => ({ rows: z.rows, search: z.search })),
  );
  const pglite = results.pgliteSearch?.sizes ?? [];
  add('PGlite', pglite, pglite.length === 0 ? '' : `; seeded in ${pglite.map((z) => `${num(z.seedS, 0)} s`).join(', ')} by this process`);
  return (
    'Searches (limit=20; every one ranked or sorted over all its matches, and counted for X-Total-Count):\n' +
    table(['rows', 'search', 'matches', 'p50 ms', 'p90 ms', 'p99 ms', 'target p50'], rows)
  );
}

// ---- main -----------------------------------------------------------------------------------

async function main(): Promise<number> {
  const s = settings();
  const startedAt = new Date().toISOString();
  const results: Results = {
    startedAt,
    machine: { cpus: cpus().length, cpuModel: cpus()[0]?.model, totalMemMb: Math.round(totalmem() / 1024 / 1024), node: process.version, loadavgStart: loadavg() },
    settings: { ...s, parts: [...s.parts] },
    notes: [
      `Services run from dist/ at LOG_LEVEL=${s.serviceLogLevel}: at info every request writes a log line, which would dominate the load runs.`,
      `Parts: ${[...s.parts].join(', ')}. The machine is shared: compare ours and the ceiling within this run, not across runs.`,
    ],
    http: [],
    scrape: { crawls: [] },
    memory: {},
    targets: [],
  };
  const resultsDir = join(ROOT, 'bench', 'results');
  mkdirSync(resultsDir, { recursive: true });
  const file = join(resultsDir, `${startedAt.replace(/:/g, '-')}.json`);

  try {
    build(s.skipBuild);
    // First, while no other service of the bench runs.
    if (s.parts.has('startup')) {
      log('start-up: empty DATA_DIR, warm restart, PostgreSQL');
      results.startup = await measureStartup({ adminUrl: s.adminUrl });
    }

    const fixture = await startFixtureSite({ catalogue: s.catalogue });
    cleanups.push(() => fixture.close());
    const db = await createBenchDatabase(s.adminUrl);
    cleanups.push(() => db.drop());
    log(`database ${db.name}; fixture site ${fixture.url}`);

    log('PostgreSQL: starting the main service');
    const main = await startMain({
      label: 'PostgreSQL',
      databaseUrl: db.url,
      demoSiteUrl: `${fixture.url}books/`,
      ...(s.cpuProf ? { cpuProfDir: join(resultsDir, `cpu-${startedAt.replace(/:/g, '-')}`) } : {}),
    });
    const pid = main.child.pid;
    results.memory.idle = await readMemory(main);
    await db.seed(1, s.listRows);

    if (s.parts.has('logging')) {
      log('logging: GET /products/{id} on two main services, LOG_LEVEL=info vs warn, alternating slices');
      results.logging = await measureLogging(
        { databaseUrl: db.url, demoSiteUrl: `${fixture.url}books/`, rows: s.listRows },
        { connections: s.connections, durationS: s.durationS, warmupS: s.warmupS, slices: s.slices },
      );
    }

    if (s.parts.has('http')) {
      log('HTTP on PostgreSQL (and the auxiliary service)');
      await httpOnPostgres(main, db, s, results);
      results.memory.afterHttp = await readMemory(main, true);
      log(`text statistics in this process: ${s.textThroughputBytes} bytes, ${s.textThroughputRuns} runs`);
      results.text = measureTextThroughput(s.textThroughputBytes, s.textThroughputRuns);
    }

    // Right after the HTTP runs, so "after HTTP" -> "after 20 dynamic scrapes" is the browser's doing alone.
    if (s.parts.has('scrape') || s.parts.has('memory')) {
      results.memory.beforeDynamic = results.memory.afterHttp ?? (await readMemory(main, true));
      log(`dynamic: ${s.dynamicScrapes} scrapes of the script-rendered page (1 cold + ${s.dynamicScrapes - 1} warm)`);
      results.scrape.dynamic = await measureDynamic(main.url, `${fixture.url}pages/script-rendered.html`, s.dynamicScrapes - 1, async () => {
        results.memory.afterColdDynamic = await readMemory(main, true);
      });
      await settle();
      results.memory.afterDynamic = await readMemory(main, true);
      results.memory.health = (await expect<{ checks?: unknown }>(200, 'GET', `${main.url}/health`)).body.checks;
    }

    if (s.parts.has('scrape')) {
      log('extraction alone: the 50 catalogue pages parsed and extracted in this process');
      results.scrape.extraction = measureExtraction(s.catalogue, 5);
      log('extraction alone: one real-world-sized product page, 50 runs');
      results.scrape.page = measurePageExtraction(50);
      log('extraction alone: one real-world-sized news article page, 50 runs');
      results.scrape.article = measureArticleExtraction(50);
      log(`crawl: demo {max_pages: 50} on the local catalogue, ${s.crawlRuns} runs`);
      results.scrape.crawls.push(await measureCrawl(main.url, 'demo {max_pages: 50}, no added latency', { max_pages: 50 }, s.crawlRuns, 1000));
      const slow = await startFixtureSite({ catalogue: s.catalogue, latencyMs: s.slowPageLatencyMs });
      cleanups.push(() => slow.close());
      log(`crawl: {url, max_pages: 50} with ${s.slowPageLatencyMs} ms per response, ${s.crawlRuns} runs`);
      results.scrape.crawls.push(
        await measureCrawl(main.url, `{url, max_pages: 50}, ${s.slowPageLatencyMs} ms per response`, { url: `${slow.url}books/`, max_pages: 50 }, s.crawlRuns, 1000),
      );
      await slow.close();
      log('responsiveness: /health while four ~5 MiB pages are scraped at once, extraction inline vs in threads');
      results.responsiveness = await measureResponsiveness(
        { pageBytes: 4_800_000, scrapesAtOnce: 4, databaseUrl: db.url, demoSiteUrl: `${fixture.url}books/`, durationS: s.durationS, connections: 10 },
        log,
      );
    }

    if (s.parts.has('jobs')) {
      results.jobs = [];
      log('jobs: the queue alone, 1050 no-op page jobs');
      results.queueCost = await measureQueueCost(db.url, 1050, 8);
      // Listing pages (with their index.html and catalogue/page-1.html aliases) and detail pages.
      const pages = s.catalogue.pages * (s.catalogue.perPage + 1) + 2;
      // Scrapy beside the rows of each latency: the same site server, 8 requests at once, as one worker holds.
      const noScrapy = scrapyMissing();
      if (noScrapy !== undefined) results.scrapyMissing = noScrapy;
      // What the site saw of each crawl: the traffic counted since the call before it is dropped first.
      // BENCH_CPU_PROF=1: each crawl row's crawling processes write their CPU profiles into a folder of their own.
      const profiled = (label: string) => (s.cpuProf ? { cpuProfDir: join(resultsDir, `cpu-${startedAt.replace(/:/g, '-')}`, label.replace(/[^a-z0-9]+/gi, '-')) } : {});
      const seenBy = async (site: FixtureSite, measure: () => Promise<JobCrawlFigures>): Promise<JobCrawlFigures> => {
        site.traffic();
        const figures = await measure();
        return { ...figures, site: site.traffic() };
      };
      const scrapy = async (site: FixtureSite, latencyMs: number) => {
        if (noScrapy !== undefined) return;
        const label = latencyMs === 0 ? 'no added latency' : `${latencyMs} ms per response`;
        log(`jobs: Scrapy's crawl of the same pages (${label}), 8 requests at once`);
        results.jobs?.push(await seenBy(site, () => measureScrapyCrawl(site.url, { label: `Scrapy, ${label}, 8 at once`, concurrency: 8, expectedPages: pages - 2, latencyMs })));
      };
      for (const workers of [1, 2]) {
        log(`jobs: whole-site crawl of the catalogue (${pages} pages) by ${workers} worker process(es)`);
        results.jobs.push(
          await seenBy(fixture, () =>
            measureJobCrawl(main.url, db, fixture.url, {
              label: `no added latency, ${workers} worker${workers > 1 ? 's' : ''}`,
              workers,
              concurrency: 8,
              expectedPages: pages - 2,
              latencyMs: 0,
              ...profiled(`no added latency, ${workers} workers`),
            }),
          ),
        );
      }
      await scrapy(fixture, 0);
      // Real sites answer in 100-500 ms: there the bound is the pages in flight, workers x concurrency / latency.
      const slowSites = [];
      const warmLatencyMs = Math.min(...s.crawlLatenciesMs.filter((ms) => ms > 0));
      for (const latencyMs of s.crawlLatenciesMs) {
        const slow = await startFixtureSite({ catalogue: s.catalogue, latencyMs });
        cleanups.push(() => slow.close());
        slowSites.push({ site: slow, latencyMs });
        for (const workers of [1, 2]) {
          log(`jobs: the same crawl with ${latencyMs} ms per response, ${workers} worker process(es)`);
          results.jobs.push(
            await seenBy(slow, () =>
              measureJobCrawl(main.url, db, slow.url, {
                label: `${latencyMs} ms per response, ${workers} worker${workers > 1 ? 's' : ''}`,
                workers,
                concurrency: 8,
                expectedPages: pages - 2,
                latencyMs,
                ...profiled(`${latencyMs} ms, ${workers} workers`),
              }),
            ),
          );
        }
        // A worker process's first seconds run cold code on new connections; one that has crawled before
        // meets the same crawl warm. At the shortest latency, where those seconds weigh most, both are shown.
        // Two workers crawl the other site together first, so both are warm.
        for (const workers of latencyMs === warmLatencyMs ? [1, 2] : []) {
          log(`jobs: the same crawl with ${latencyMs} ms per response, ${workers} worker process(es) that crawled the other site first`);
          results.jobs.push(
            await seenBy(slow, () =>
              measureJobCrawl(main.url, db, slow.url, {
                label: `${latencyMs} ms per response, ${workers} worker${workers > 1 ? 's' : ''}, warm`,
                workers,
                concurrency: 8,
                expectedPages: pages - 2,
                latencyMs,
                warmUpSiteUrl: fixture.url,
                ...profiled(`${latencyMs} ms, ${workers} workers, warm`),
              }),
            ),
          );
        }
        await scrapy(slow, latencyMs);
      }
      // The embedded default: the service runs the crawl itself, its database in its process.
      for (const { site, latencyMs } of [{ site: fixture, latencyMs: 0 }, ...slowSites]) {
        const label = latencyMs === 0 ? 'no added latency' : `${latencyMs} ms per response`;
        log(`jobs: the same crawl on PGlite (${label}), by the main service's own worker`);
        const dir = mkdtempSync(join(tmpdir(), 'bench-pglite-crawl-'));
        cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
        results.jobs.push(
          await seenBy(site, () =>
            measurePgliteJobCrawl(dir, site.url, { label: `PGlite, ${label}, 1 worker`, concurrency: 8, expectedPages: pages - 2, latencyMs, ...profiled(`PGlite, ${label}`) }),
          ),
        );
        if (latencyMs === warmLatencyMs) {
          log(`jobs: the same crawl on PGlite (${label}), by a service that crawled the other site first`);
          const warmDir = mkdtempSync(join(tmpdir(), 'bench-pglite-crawl-'));
          cleanups.push(() => rmSync(warmDir, { recursive: true, force: true }));
          results.jobs.push(
            await seenBy(site, () =>
              measurePgliteJobCrawl(warmDir, site.url, {
                label: `PGlite, ${label}, 1 worker, warm`,
                concurrency: 8,
                expectedPages: pages - 2,
                latencyMs,
                warmUpSiteUrl: fixture.url,
                ...profiled(`PGlite, ${label}, warm`),
              }),
            ),
          );
        }
      }
      for (const { site } of slowSites) await site.close();
    }

    if (s.parts.has('tracking')) {
      log(`tracking: re-scrape of ${s.rescrapeProducts} unchanged products, plain upsert vs with history, ${s.rescrapeRounds} rounds each`);
      const rescrape = await measureRescrape(db.url, s.rescrapeProducts, s.rescrapeRounds);
      log(`tracking: seeding ${s.historyPoints} history points and ${s.events.toLocaleString('en-US')} events`);
      const { productId } = await seedTracking(db, s.historyPoints, s.events);
      const options: LoadOptions = { connections: s.connections, durationS: s.durationS, warmupS: s.warmupS, slices: s.slices };
      log('tracking: history and events reads at 50 connections');
      results.tracking = { rescrape, reads: await measureTrackingReads(main.url, pid, productId, s.events, options) };
    }

    if (s.parts.has('http')) {
      log('HTTP on PGlite');
      await httpOnPglite(fixture, s, results);
    }

    if (s.parts.has('growth')) {
      log(`growth: ${s.growthRows.join(', ')} rows`);
      results.growth = await measureGrowth(main.url, pid, db, s.growthRows, s.fullListRows, log);
      log(`growth: searches on PGlite at ${s.pgliteSearchRows.join(', ')} rows`);
      results.pgliteSearch = await measurePgliteSearch(s.pgliteSearchRows, `${fixture.url}books/`, log);
    }

    if (s.parts.has('articles')) {
      log(`articles: q over ${s.articleRows.join(', ')} articles on PostgreSQL, then ${s.pgliteArticleRows.join(', ')} on PGlite`);
      results.articleSearch = await measureArticleSearchPostgres(main.url, db, s.articleRows, log);
      results.articleSearch.push(...(await measureArticleSearchPglite(s.pgliteArticleRows, `${fixture.url}books/`, log)));
    }
  } catch (error) {
    results.error = (error as Error).stack ?? String(error);
    log(`failed: ${results.error}`);
  } finally {
    log('cleaning up');
    await cleanup();
  }

  results.finishedAt = new Date().toISOString();
  results.machine.loadavgEnd = loadavg();
  const busiest = Math.max(...results.machine.loadavgStart.slice(0, 1), ...results.machine.loadavgEnd.slice(0, 1));
  if (busiest > results.machine.cpus) {
    results.notes.push(
      `The 1-minute load average reached ${busiest.toFixed(1)} on ${results.machine.cpus} cores: other work competed with this run, so absolute figures are low; the side-by-side ratios are what to read.`,
    );
  }
  judge(results);
  writeFileSync(file, `${JSON.stringify(results, null, 2)}\n`);
  process.stdout.write(`${render(results)}\n\nRaw figures: ${file}\n`);
  return results.error === undefined ? 0 : 1;
}

// Exit explicitly: idle keep-alive sockets of the HTTP clients must not hold the process open.
process.exit(await main());
