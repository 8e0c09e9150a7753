// A crawled page's bookkeeping as one statement under its crawl's job row lock: the page settled, its new links admitted within the crawl's budget, the progress counted.
import type { Queryable } from '../db/queryable.js';
import { WORKER, type FrontierEntry, type PageOutcome, type ProgressDelta } from './job-store.js';

export interface StoredCrawlPage {
  /** The crawl had ended (cancelled, finished) when the page came to be stored: nothing was. */
  ended: boolean;
  /** False when the page was settled already (another delivery of it got there first): nothing was stored. */
  settled: boolean;
  /** The links that became frontier rows, to be queued. */
  added: FrontierEntry[];
  /** Pages the crawl still has pending after this one. */
  pending: number;
}

export interface CrawlPageWrite {
  jobId: string;
  pageId: string;
  outcome: Omit<PageOutcome, 'status' | 'error'>;
  /** The page's links as frontier entries, the most wanted first (its "next" link). */
  links: readonly FrontierEntry[];
  maxPages: number;
  /** The page is at max_depth: its links are only counted (links_over_max_depth), none admitted. */
  tooDeep: boolean;
  /** What the page adds to the counters besides pages done and discovered. */
  progress: Pick<ProgressDelta, 'productsFound' | 'created' | 'updated' | 'articlesFound' | 'articlesCreated' | 'articlesUpdated'>;
}

/**
 * The job row is locked first, within the statement: it orders this page against a cancel and
 * against the crawl's other pages, and says how much room the crawl's budget has. Links past that
 * room (or past max_depth) that the frontier does not know are counted, so a crawl that stops early
 * says why. One round trip, for a lock held until the caller's commit.
 */
const STATEMENT = `
WITH j AS (
  SELECT status, pages_discovered FROM jobs WHERE id = $1 FOR UPDATE
), s AS (
  UPDATE crawl_frontier SET status = 'done', page_type = $3, products = $4, items = $5, worker = $6, duration_ms = $7, articles = $8,
         site_rule_warning = $9, finished_at = now()
   WHERE id = $2 AND status = 'pending' AND (SELECT status FROM j) IN ('queued', 'running')
  RETURNING id
), room AS (
  SELECT CASE WHEN $10::boolean THEN 0 ELSE greatest(0, $11::int - (SELECT pages_discovered FROM j)) END AS n
), links AS (
  SELECT * FROM unnest($12::uuid[], $13::text[], $14::text[], $15::int[]) WITH ORDINALITY AS e (id, url_key, url, depth, n)
), added AS (
  INSERT INTO crawl_frontier (id, job_id, url_key, url, depth, status)
  SELECT id, $1, url_key, url, depth, 'pending' FROM links WHERE EXISTS (SELECT 1 FROM s) AND n <= (SELECT n FROM room)
  ON CONFLICT (job_id, url_key) DO NOTHING
  RETURNING id, url_key, url, depth
), cut AS (
  SELECT count(*)::int AS n FROM links
   WHERE n > (SELECT n FROM room) AND NOT EXISTS (SELECT 1 FROM crawl_frontier f WHERE f.job_id = $1 AND f.url_key = links.url_key)
), progress AS (
  UPDATE jobs SET pages_done = pages_done + 1, pages_discovered = pages_discovered + (SELECT count(*) FROM added),
         products_found = products_found + $16, products_created = products_created + $17, products_updated = products_updated + $18,
         articles_found = articles_found + $19, articles_created = articles_created + $20, articles_updated = articles_updated + $21,
         links_over_max_pages = links_over_max_pages + CASE WHEN $10::boolean THEN 0 ELSE (SELECT n FROM cut) END,
         links_over_max_depth = links_over_max_depth + CASE WHEN $10::boolean THEN (SELECT n FROM cut) ELSE 0 END,
         updated_at = now()
   WHERE id = $1 AND EXISTS (SELECT 1 FROM s)
  RETURNING pages_discovered - pages_done - pages_failed AS pending
)
SELECT (SELECT status FROM j) AS status, EXISTS (SELECT 1 FROM s) AS settled, (SELECT pending FROM progress) AS pending,
       coalesce((SELECT json_agg(added) FROM added), '[]'::json) AS added`;

export async function storeCrawlPage(write: CrawlPageWrite, tx: Queryable): Promise<StoredCrawlPage> {
  const { outcome, links, progress } = write;
  const [row] = await tx.query<{ status: string | null; settled: boolean; pending: number | null; added: FrontierEntry[] | string }>(STATEMENT, [
    write.jobId,
    write.pageId,
    outcome.pageType ?? null,
    outcome.products ?? 0,
    outcome.items === undefined ? null : JSON.stringify(outcome.items),
    WORKER,
    outcome.durationMs ?? null,
    outcome.articles === undefined ? null : JSON.stringify(outcome.articles),
    outcome.siteRuleWarning ?? null,
    write.tooDeep,
    write.maxPages,
    links.map((e) => e.id),
    links.map((e) => e.url_key),
    links.map((e) => e.url),
    links.map((e) => e.depth),
    progress.productsFound ?? 0,
    progress.created ?? 0,
    progress.updated ?? 0,
    progress.articlesFound ?? 0,
    progress.articlesCreated ?? 0,
    progress.articlesUpdated ?? 0,
  ]);
  const ended = row?.status !== 'queued' && row?.status !== 'running';
  // PGlite may hand json back as text.
  const added = typeof row?.added === 'string' ? (JSON.parse(row.added) as FrontierEntry[]) : (row?.added ?? []);
  return { ended, settled: row?.settled === true, added, pending: row?.pending ?? 0 };
}
