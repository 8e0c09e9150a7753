// Scrape logs as JSONB documents in the relational database (the embedded default).
import type { Database } from '../db/database.js';
import { mapStrings, redactUrlsIn } from '../redact.js';
import type { LogListQuery, ScrapeLog } from './log-schema.js';
import type { LogStore } from './log-store.js';

/**
 * JSONB refuses two things a JS string may hold, U+0000 and unpaired surrogates, and one such character
 * in a POST /scrape body or a scraped title would lose the whole document; they become U+FFFD instead.
 */
const UNSTORABLE = /\u0000|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;

/**
 * What a document is stored as: URL passwords masked and unstorable characters replaced, in one walk
 * that copies only what changes; then a plain JSON.stringify (a replacer function cost as much again).
 */
const storable = <T>(document: T): T => mapStrings(document, storableText);
/** A quick scan first: the full pattern, with its lookarounds, cost more than the rest of the walk. */
const MAYBE_UNSTORABLE = /[\u0000\ud800-\udfff]/;
const storableText = (text: string): string => {
  const masked = redactUrlsIn(text);
  return MAYBE_UNSTORABLE.test(masked) ? masked.replace(UNSTORABLE, '\ufffd') : masked;
};

/** `db` must have been migrated (migration 2 creates the table). */
export function createJsonbLogStore(db: Database): LogStore {
  return {
    backend: `${db.backend}-jsonb`,
    async init() {
      await db.query('SELECT 1 FROM scrape_logs LIMIT 1');
      return 'scrape_logs table present (created by the migrations)';
    },
    async insert(document) {
      const log = storable(document);
      // One INSERT: the document is either wholly there or not at all.
      await db.query('INSERT INTO scrape_logs (id, started_at, status, source_url, document) VALUES ($1, $2, $3, $4, $5)', [
        log.id,
        log.started_at,
        log.status,
        log.source_url ?? null,
        JSON.stringify(log),
      ]);
    },
    async finish(id, document) {
      const fields = storable(document);
      await db.query(`UPDATE scrape_logs SET status = COALESCE($2, status), document = document || $3::jsonb WHERE id = $1`, [id, fields.status ?? null, JSON.stringify(fields)]);
    },
    async interruptRunning(startedBefore, error) {
      const rows = await db.query(
        `UPDATE scrape_logs SET status = 'failed',
                document = document || jsonb_build_object('status', 'failed', 'error', $2::jsonb, 'finished_at', to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'))
          WHERE status = 'running' AND started_at < $1 RETURNING id`,
        [startedBefore, JSON.stringify(error)],
      );
      return rows.length;
    },
    async list(query: LogListQuery) {
      const conditions: string[] = [];
      const params: unknown[] = [];
      if (query.status !== undefined) {
        params.push(query.status);
        conditions.push(`status = $${params.length}`);
      }
      if (query.source_url !== undefined) {
        params.push(query.source_url);
        conditions.push(`source_url = $${params.length}`);
      }
      const where = conditions.length === 0 ? '' : `WHERE ${conditions.join(' AND ')}`;
      const [rows, counted] = await Promise.all([
        db.query<{ document: ScrapeLog }>(
          `SELECT document FROM scrape_logs ${where} ORDER BY started_at DESC, id DESC
           LIMIT $${params.length + 1} OFFSET $${params.length + 2}`,
          [...params, query.limit, query.offset],
        ),
        db.query<{ total: number }>(`SELECT count(*)::int AS total FROM scrape_logs ${where}`, params),
      ]);
      return { items: rows.map((r) => r.document), total: counted[0]?.total ?? 0 };
    },
    async get(id) {
      const rows = await db.query<{ document: ScrapeLog }>('SELECT document FROM scrape_logs WHERE id = $1', [id]);
      return rows[0]?.document;
    },
    async ping() {
      await db.query('SELECT 1 FROM scrape_logs LIMIT 0');
    },
    // The database belongs to the caller, who closes it.
    async close() {},
  };
}
