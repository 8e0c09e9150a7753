// Article search at scale: `q` over a news archive of 100k and 1M articles, on PostgreSQL and on PGlite, one client, median and p95 per query.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createPgliteDatabase } from '../src/db/database.js';
import { migrate } from '../src/db/migrate.js';
import { ARTICLE_SEED_SQL, ARTICLE_WORDS } from './article-seed.js';
import { expect, median, percentile } from './client.js';
import type { BenchDatabase } from './database.js';
import { startMain } from './services.js';

export interface ArticleQueryFigures {
  label: string;
  path: string;
  /** X-Total-Count: the matches ranked (or sorted) and counted. */
  matches: number;
  samples: number;
  medianMs: number;
  p95Ms: number;
}

export interface ArticleSearchFigures {
  backend: 'PostgreSQL' | 'PGlite';
  rows: number;
  /** Seconds to seed this size (from the size before), in the bench process. */
  seedS: number;
  queries: ArticleQueryFigures[];
}

const { topic, town } = ARTICLE_WORDS;
const pct = (share: number) => `${Number((share * 100).toPrecision(2))} %`;

/** What a reader of an archive types: a common topic, a rare place, a phrase, and a topic on one site by date. */
const QUERIES: ReadonlyArray<{ label: string; path: string }> = [
  { label: `q=${topic.word} (a topic, ${pct(topic.share)} of articles), best matches first`, path: `/articles?q=${topic.word}&limit=20` },
  { label: `q=${town.word} (a town, ${pct(town.share)}), best matches first`, path: `/articles?q=${town.word}&limit=20` },
  { label: `q="${topic.word} reopens" (a phrase)`, path: `/articles?q=${encodeURIComponent(`"${topic.word} reopens"`)}&limit=20` },
  { label: `q=${topic.word}&site=site7.example&sort=-published_at`, path: `/articles?q=${topic.word}&site=site7.example&sort=-published_at&limit=20` },
  { label: 'no q: the newest 20 (for reference)', path: '/articles?limit=20' },
];

/** The search index, dropped while a size is seeded and built once after: far faster than growing it row by row. */
const DROP_SEARCH_INDEX = 'DROP INDEX IF EXISTS articles_search_idx';
const BUILD_SEARCH_INDEX = 'CREATE INDEX IF NOT EXISTS articles_search_idx ON articles USING gin (search_vector)';

const WARMUP = 10;
const SAMPLES = 100;

async function measureQueries(mainUrl: string): Promise<ArticleQueryFigures[]> {
  const figures: ArticleQueryFigures[] = [];
  for (const { label, path } of QUERIES) {
    const first = await expect(200, 'GET', `${mainUrl}${path}`);
    for (let i = 0; i < WARMUP; i++) await expect(200, 'GET', `${mainUrl}${path}`);
    const times: number[] = [];
    for (let i = 0; i < SAMPLES; i++) times.push((await expect(200, 'GET', `${mainUrl}${path}`)).ms);
    figures.push({ label, path, matches: Number(first.headers['x-total-count']), samples: SAMPLES, medianMs: median(times), p95Ms: percentile(times, 95) });
  }
  return figures;
}

/** On the bench's PostgreSQL database, with the main service already running on it. */
export async function measureArticleSearchPostgres(mainUrl: string, db: BenchDatabase, sizes: readonly number[], log: (line: string) => void): Promise<ArticleSearchFigures[]> {
  await db.query('TRUNCATE articles RESTART IDENTITY CASCADE');
  const figures: ArticleSearchFigures[] = [];
  let seeded = 0;
  for (const rows of [...sizes].sort((a, b) => a - b)) {
    log(`  articles, PostgreSQL, ${rows} rows: seeding`);
    const started = performance.now();
    await db.query(DROP_SEARCH_INDEX);
    for (let from = seeded + 1; from <= rows; from += 50_000) await db.query(ARTICLE_SEED_SQL, [from, Math.min(rows, from + 49_999)]);
    await db.query(BUILD_SEARCH_INDEX);
    await db.query('VACUUM ANALYZE articles');
    await db.query('CHECKPOINT').catch(() => undefined);
    const seedS = (performance.now() - started) / 1000;
    seeded = rows;
    log(`  articles, PostgreSQL, ${rows} rows: searches`);
    figures.push({ backend: 'PostgreSQL', rows, seedS, queries: await measureQueries(mainUrl) });
  }
  await db.query('TRUNCATE articles RESTART IDENTITY CASCADE');
  return figures;
}

/** On PGlite: seeded into a data directory by this process, then the main service starts on it, size after size. */
export async function measureArticleSearchPglite(sizes: readonly number[], demoSiteUrl: string, log: (line: string) => void): Promise<ArticleSearchFigures[]> {
  const dir = mkdtempSync(join(tmpdir(), 'bench-pglite-articles-'));
  const figures: ArticleSearchFigures[] = [];
  try {
    let seeded = 0;
    for (const rows of [...sizes].sort((a, b) => a - b)) {
      log(`  articles, PGlite, ${rows} rows: seeding`);
      const started = performance.now();
      const db = await createPgliteDatabase(dir);
      try {
        await migrate(db);
        await db.exec(DROP_SEARCH_INDEX);
        for (let from = seeded + 1; from <= rows; from += 10_000) await db.query(ARTICLE_SEED_SQL, [from, Math.min(rows, from + 9_999)]);
        await db.exec(BUILD_SEARCH_INDEX);
        await db.exec('VACUUM ANALYZE articles');
      } finally {
        await db.close();
      }
      const seedS = (performance.now() - started) / 1000;
      seeded = rows;
      log(`  articles, PGlite, ${rows} rows: searches`);
      const main = await startMain({ label: `PGlite, ${rows} articles`, dataDir: dir, demoSiteUrl });
      try {
        figures.push({ backend: 'PGlite', rows, seedS, queries: await measureQueries(main.url) });
      } finally {
        await main.child.stop();
      }
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  return figures;
}
