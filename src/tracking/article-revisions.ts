// Article revisions in the relational database: a row per change of title or body, written with the articles they describe, read by the API.
import type { Database, Queryable } from '../db/database.js';
import { changedFields, detectArticleChange } from './article-changes.js';
import type { PendingEvent, RunRef } from './tracking-store.js';

export interface StoredRevision {
  id: number;
  /** 1 for the first, counting up. */
  number: number;
  title: string;
  body: string | null;
  changed: string[];
  seen_at: string;
  run_id: string | null;
}

export interface ArticleRevisions {
  /**
   * After articles were written in `tx`: a revision for each whose title or body differs from its
   * latest revision (or that has none yet), and the events that makes (article.created, article.updated).
   */
  record(articleIds: readonly number[], run: RunRef, tx: Queryable): Promise<PendingEvent[]>;
  /**
   * A page of an article's revisions, oldest first, with the revision before the page (for a diff of
   * its first); undefined when the article does not exist.
   */
  list(articleId: number, page: { limit: number; offset: number }): Promise<{ revisions: StoredRevision[]; before: StoredRevision | null; total: number } | undefined>;
}

const isoTime = (column: string) => `to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;

interface Current {
  id: number;
  url: string;
  title: string;
  word_count: number | null;
  has_body: boolean;
  first: boolean;
  old_title: string | null;
  old_has_body: boolean;
  /** Digests of the bodies: the texts themselves need not leave the database to be compared. */
  old_digest: string | null;
  digest: string | null;
}

export function createArticleRevisions(db: Database): ArticleRevisions {
  return {
    async record(articleIds, run, tx) {
      if (articleIds.length === 0) return [];
      const rows = await tx.query<Current>(
        `SELECT a.id, a.url, a.title, a.word_count, a.body IS NOT NULL AS has_body, r.id IS NULL AS first, r.title AS old_title,
                r.body IS NOT NULL AS old_has_body, md5(r.body) AS old_digest, md5(a.body) AS digest
           FROM articles a
           LEFT JOIN LATERAL (SELECT id, title, body FROM article_revisions WHERE article_id = a.id ORDER BY id DESC LIMIT 1) r ON true
          WHERE a.id = ANY($1::int[])
          ORDER BY a.id`,
        [articleIds],
      );
      const revisions: Array<{ id: number; changed: string[] }> = [];
      const events: PendingEvent[] = [];
      for (const row of rows) {
        // The digest stands for the body: equal digests, equal bodies.
        const sighting = {
          article_id: row.id,
          url: row.url,
          before: row.first ? null : { title: row.old_title!, body: row.old_has_body ? row.old_digest : null },
          seen: { title: row.title, body: row.has_body ? row.digest : null, word_count: row.word_count },
        };
        const change = detectArticleChange(sighting);
        if (change === null) continue;
        revisions.push({ id: row.id, changed: changedFields(sighting.before, sighting.seen) });
        events.push({ type: change.type, product_id: null, article_id: row.id, source: run.source ?? row.url, run_id: run.id, data: { ...change.data, via: run.kind } });
      }
      if (revisions.length > 0) {
        await tx.query(
          `INSERT INTO article_revisions (article_id, title, body, changed, run_id)
           SELECT a.id, a.title, a.body, c.changed, $2 FROM jsonb_to_recordset($1::jsonb) AS c (id integer, changed text[]) JOIN articles a ON a.id = c.id ORDER BY a.id`,
          [JSON.stringify(revisions), run.id],
        );
      }
      return events;
    },

    async list(articleId, page) {
      // One more than asked, from the one before the page: its first revision's diff needs it.
      const from = Math.max(0, page.offset - 1);
      const [rows, [head]] = await Promise.all([
        db.query<StoredRevision>(
          `SELECT id::float8 AS id, (row_number() OVER (ORDER BY id))::int AS number, title, body, changed, ${isoTime('seen_at')} AS seen_at, run_id
             FROM article_revisions WHERE article_id = $1 ORDER BY id LIMIT $2 OFFSET $3`,
          [articleId, page.limit + (page.offset - from), from],
        ),
        db.query<{ exists: boolean; total: number }>(
          'SELECT EXISTS (SELECT 1 FROM articles WHERE id = $1) AS exists, (SELECT count(*)::int FROM article_revisions WHERE article_id = $1) AS total',
          [articleId],
        ),
      ]);
      if (head === undefined || !head.exists) return undefined;
      // Numbered over all the article's revisions: the window is computed before LIMIT and OFFSET.
      const before = page.offset > 0 ? (rows.shift() ?? null) : null;
      return { revisions: rows, before, total: head.total };
    },
  };
}
