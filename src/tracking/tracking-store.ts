// Price history and change events in the relational database: written with the products they describe, read by the API.
import type { Database, Queryable } from '../db/database.js';
import { detectChanges, isChange, type Snapshot } from './change-detection.js';

/** One product as a run (or an API write) saw it, with what it was before. */
export interface Sighting {
  product_id: number;
  source_url: string | null;
  /** Null for a product the write created. */
  before: (Snapshot & { last_seen_at: string | null; last_run: string | null }) | null;
  seen: Snapshot;
}

/** Who saw it: a scrape run (its log id), a crawl (its job id), or the API. */
export interface RunRef {
  id: string | null;
  /** The canonical URL the run started from; a product's source for "gone" detection. */
  source: string | null;
  kind: 'scrape' | 'api';
  /** Tags its request gives everything it collects (normalised; see tags/). */
  tags?: readonly string[];
}

export interface StoredEvent {
  id: number;
  type: string;
  product_id: number | null;
  /** Set on article events (article.created, article.updated) instead of product_id. */
  article_id: number | null;
  source: string | null;
  run_id: string | null;
  data: Record<string, unknown>;
  created_at: string;
}

export interface HistoryPoint {
  price: number | null;
  currency: string | null;
  list_price: number | null;
  availability: string | null;
  first_seen_at: string;
  last_seen_at: string;
  first_run: string | null;
  last_run: string | null;
  source: 'scrape' | 'api';
}

export interface HistorySummary {
  points: number;
  lowest: number | null;
  highest: number | null;
  first_seen_at: string | null;
  last_change_at: string | null;
}

export interface EventQuery {
  type?: string[];
  product_id?: number;
  article_id?: number;
  source?: string;
  since?: string;
  /** Events after this one in the feed (the cursor: an event id). */
  after?: number;
  /** Events before this one in the feed (the cursor when reading newest first). */
  before?: number;
  /** Oldest first (consumers), or newest first (a feed showing the latest). */
  order?: 'asc' | 'desc';
  limit: number;
}

/** An event not yet written. */
export type PendingEvent = Pick<StoredEvent, 'type' | 'product_id' | 'source' | 'run_id' | 'data'> & { article_id?: number | null };

export interface Tracker {
  /**
   * Records what `sightings` show, inside `tx`: a new observation where a value changed (the
   * previous one closed with its last sighting), nothing new where none did. Answers the events
   * the differences make, for `append`.
   */
  observe(sightings: readonly Sighting[], run: RunRef, tx: Queryable): Promise<PendingEvent[]>;
  /**
   * After a successful run of `run.source`: each product of that source this run did not see has
   * missed one more run; at `goneAfterRuns` it is gone (one product.gone event, answered for `append`).
   */
  missed(run: RunRef, tx: Queryable): Promise<PendingEvent[]>;
  /** Writes events inside `tx`; readers see them in the feed once it has ended (see FEED_HORIZON). */
  append(events: readonly PendingEvent[], tx: Queryable): Promise<StoredEvent[]>;
  /** A product's states, oldest first, and their summary; undefined when the product does not exist. */
  history(
    productId: number,
    query: { from?: string; to?: string; limit: number; offset: number },
  ): Promise<{ points: HistoryPoint[]; total: number; summary: HistorySummary } | undefined>;
  /**
   * The feed: events in the order their transactions began (then by id), up to FEED_HORIZON, so
   * that a consumer that remembers the last event it read misses none.
   */
  events(query: EventQuery): Promise<StoredEvent[]>;
  /** The last event of the feed, where a live stream without a cursor starts (0 when none). */
  lastEventId(): Promise<number>;
}

const isoTime = (column: string) => `to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;
/** An event as every reader answers it (the feed, a write's RETURNING). */
export const EVENT_COLUMNS = `id::float8 AS id, type, product_id, article_id, source, run_id, data, ${isoTime('created_at')} AS created_at`;

/**
 * How far the feed may be read: events of transactions older than every transaction still running.
 * Ids are taken at insert, not at commit, so two writers may commit in the other order than their
 * ids; and a transaction's id (xid8) is taken at its first write, so it may commit after a younger
 * one too. But a transaction below this horizon has ended, and every transaction still to commit is
 * at or above it: a reader that reads in (tx, id) order up to the horizon never later finds an
 * event before one it has read. Writers take no lock for it; a long-running writer in this database
 * only holds newer events back (they arrive when it ends).
 *
 * The horizon is the oldest transaction of the statement's snapshot still running, leaving out those
 * that provably belong to another database of the server (their sessions are connected elsewhere, so
 * they cannot write these events): a long transaction of another application on a shared server
 * must not stall the feed. A transaction that has ended by the time pg_stat_activity is read is not
 * left out, which only keeps the horizon lower, never too high.
 */
const FEED_HORIZON = `COALESCE(
  (SELECT min(running) FROM pg_snapshot_xip(pg_current_snapshot()) AS running
    WHERE running::xid NOT IN (SELECT backend_xid FROM pg_stat_activity
      WHERE backend_xid IS NOT NULL AND datid IS DISTINCT FROM (SELECT oid FROM pg_database WHERE datname = current_database()))),
  pg_snapshot_xmax(pg_current_snapshot()))`;

/**
 * The feed position of the cursor event `placeholder` (an event id): `after` reads from the event
 * itself or, for an id that is none, the last event below it; `before` from the event or the first
 * above it. No such event: the start (after) or the end (before) of the feed.
 */
function cursorPosition(placeholder: string, side: 'after' | 'before'): string {
  const [compare, order, [noTx, noId]] = side === 'after' ? ['<=', 'DESC', [`'0'`, '0']] : ['>=', 'ASC', [`'18446744073709551615'`, '9223372036854775807']];
  const cursor = (column: string) => `(SELECT ${column} FROM events WHERE id ${compare} ${placeholder} ORDER BY id ${order} LIMIT 1)`;
  return `(COALESCE(${cursor('tx')}, ${noTx}::xid8), COALESCE(${cursor('id')}, ${noId}::bigint))`;
}

export function createTracker(db: Database, options: { goneAfterRuns: number }): Tracker {
  return {
    async append(rows, tx) {
      if (rows.length === 0) return [];
      return tx.query<StoredEvent>(
        `INSERT INTO events (type, product_id, article_id, source, run_id, data)
         SELECT * FROM unnest($1::text[], $2::int[], $3::int[], $4::text[], $5::text[], $6::jsonb[])
         RETURNING ${EVENT_COLUMNS}`,
        [
          rows.map((r) => r.type),
          rows.map((r) => r.product_id),
          rows.map((r) => r.article_id ?? null),
          rows.map((r) => r.source),
          rows.map((r) => r.run_id),
          rows.map((r) => JSON.stringify(r.data)),
        ],
      );
    },

    async observe(sightings, run, tx) {
      const changed = sightings.filter((s) => isChange(s.before, s.seen));
      if (changed.length === 0) return [];
      // Close each changed product's current state with its last sighting before this one.
      const closing = changed.filter((s) => s.before !== null);
      if (closing.length > 0) {
        await tx.query(
          // Its last sighting, or its own start when nothing saw it since (a value set through the API).
          `UPDATE price_observations o
              SET last_seen_at = GREATEST(c.seen, o.first_seen_at),
                  last_run = CASE WHEN c.seen >= o.first_seen_at THEN c.run ELSE o.first_run END
             FROM unnest($1::int[], $2::timestamptz[], $3::text[]) AS c (product_id, seen, run)
            WHERE o.product_id = c.product_id AND o.last_seen_at IS NULL`,
          [closing.map((s) => s.product_id), closing.map((s) => s.before!.last_seen_at), closing.map((s) => s.before!.last_run)],
        );
      }
      await tx.query(
        `INSERT INTO price_observations (product_id, price, currency, list_price, availability, first_seen_at, first_run, source)
         SELECT o.product_id, o.price, o.currency, o.list_price, o.availability, now(), $6, $7
           FROM unnest($1::int[], $2::numeric[], $3::text[], $4::numeric[], $5::text[]) AS o (product_id, price, currency, list_price, availability)`,
        [
          changed.map((s) => s.product_id),
          changed.map((s) => (s.seen.price === null ? null : String(s.seen.price))),
          changed.map((s) => s.seen.currency),
          changed.map((s) => (s.seen.list_price === null ? null : String(s.seen.list_price))),
          changed.map((s) => s.seen.availability),
          run.id,
          run.kind,
        ],
      );
      return changed.flatMap((s) =>
        detectChanges(s.before, s.seen).map((event) => ({
          type: event.type,
          product_id: s.product_id,
          source: run.source ?? s.source_url,
          run_id: run.id,
          data: { ...event.data, via: run.kind },
        })),
      );
    },

    async missed(run, tx) {
      if (run.source === null || run.id === null) return [];
      // gone_at IS NULL before, so `gone` in the answer means it went now: one event per disappearance.
      const missed = await tx.query<{ id: number; source_url: string | null; missed_runs: number; gone: boolean }>(
        `UPDATE products SET missed_runs = missed_runs + 1,
                gone_at = CASE WHEN missed_runs + 1 >= $3 THEN now() ELSE gone_at END
          WHERE source_key = $1 AND last_run IS DISTINCT FROM $2 AND gone_at IS NULL
          RETURNING id, source_url, missed_runs, gone_at IS NOT NULL AS gone`,
        [run.source, run.id, options.goneAfterRuns],
      );
      return missed
        .filter((p) => p.gone)
        .map((p) => ({ type: 'product.gone', product_id: p.id, source: run.source, run_id: run.id, data: { missed_runs: p.missed_runs, source_url: p.source_url } }));
    },

    async history(productId, query) {
      const conditions = ['o.product_id = $1'];
      const params: unknown[] = [productId];
      if (query.from !== undefined) {
        params.push(query.from);
        // The current state (last_seen_at NULL) lasts until now.
        conditions.push(`COALESCE(o.last_seen_at, 'infinity') >= $${params.length}::timestamptz`);
      }
      if (query.to !== undefined) {
        params.push(query.to);
        conditions.push(`o.first_seen_at <= $${params.length}::timestamptz`);
      }
      const where = conditions.join(' AND ');
      // Independent reads, sent together: the page, and the summary with the product's own last sighting.
      const [rows, [head]] = await Promise.all([
        db.query<Omit<HistoryPoint, 'last_seen_at'> & { last_seen_at: string | null }>(
          `SELECT o.price::float8 AS price, o.currency, o.list_price::float8 AS list_price, o.availability,
                  ${isoTime('o.first_seen_at')} AS first_seen_at, ${isoTime('o.last_seen_at')} AS last_seen_at,
                  o.first_run, o.last_run, o.source
             FROM price_observations o
            WHERE ${where} ORDER BY o.first_seen_at ASC, o.id ASC LIMIT $${params.length + 1} OFFSET $${params.length + 2}`,
          [...params, query.limit, query.offset],
        ),
        db.query<HistorySummary & { total: number; product_seen_at: string | null; product_run: string | null }>(
          `SELECT s.*, ${isoTime('p.last_seen_at')} AS product_seen_at, p.last_run AS product_run
             FROM products p,
                  LATERAL (SELECT count(*)::int AS total, count(*)::int AS points, min(o.price)::float8 AS lowest, max(o.price)::float8 AS highest,
                                  ${isoTime('min(o.first_seen_at)')} AS first_seen_at,
                                  ${isoTime('CASE WHEN count(*) > 1 THEN max(o.first_seen_at) END')} AS last_change_at
                             FROM price_observations o WHERE ${where}) s
            WHERE p.id = $1`,
          params,
        ),
      ]);
      if (head === undefined) return undefined;
      const { total, product_seen_at: seenAt, product_run: run, ...summary } = head;
      // The current state (last_seen_at NULL in the table) was last seen when the product was; a
      // hand-made product's, when it began.
      // (A state set through the API after the last scrape began after that sighting: it was last seen when it began.)
      const points = rows.map((point): HistoryPoint => {
        if (point.last_seen_at !== null) return point as HistoryPoint;
        const seen = seenAt !== null && seenAt > point.first_seen_at;
        return { ...point, last_seen_at: seen ? seenAt : point.first_seen_at, last_run: seen ? run : point.first_run };
      });
      return { points, total, summary };
    },

    events(query) {
      const conditions: string[] = [`tx < ${FEED_HORIZON}`];
      const params: unknown[] = [];
      const add = (sql: (p: string) => string, value: unknown) => {
        params.push(value);
        conditions.push(sql(`$${params.length}`));
      };
      if (query.after !== undefined) add((p) => `(tx, id) > ${cursorPosition(p, 'after')}`, query.after);
      if (query.before !== undefined) add((p) => `(tx, id) < ${cursorPosition(p, 'before')}`, query.before);
      // One type reads the (type, tx, id) index in feed order; `= ANY` cannot keep that order.
      if (query.type?.length === 1) add((p) => `type = ${p}`, query.type[0]);
      else if (query.type !== undefined && query.type.length > 0) add((p) => `type = ANY (${p}::text[])`, query.type);
      if (query.product_id !== undefined) add((p) => `product_id = ${p}`, query.product_id);
      if (query.article_id !== undefined) add((p) => `article_id = ${p}`, query.article_id);
      if (query.source !== undefined) add((p) => `source = ${p}`, query.source);
      if (query.since !== undefined) add((p) => `created_at >= ${p}::timestamptz`, query.since);
      params.push(query.limit);
      const direction = query.order === 'desc' ? 'DESC' : 'ASC';
      return db.query<StoredEvent>(
        `SELECT ${EVENT_COLUMNS} FROM events WHERE ${conditions.join(' AND ')} ORDER BY events.tx ${direction}, events.id ${direction} LIMIT $${params.length}`,
        params,
      );
    },

    async lastEventId() {
      const [row] = await db.query<{ id: number }>(`SELECT id::float8 AS id FROM events WHERE tx < ${FEED_HORIZON} ORDER BY events.tx DESC, events.id DESC LIMIT 1`);
      return row?.id ?? 0;
    },
  };
}
