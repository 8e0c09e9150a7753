// Alert firings in the relational database (alert_firings): written once each by dedupe key, read for cool-downs, history and digests.
import type { Database, Queryable } from '../../db/queryable.js';
import type { DigestPeriod } from '../delivery/digest-schedule.js';
import type { Firing } from './firing.js';

/** A firing to store, with its digest period when it waits for one. */
export interface PendingFiring {
  firing: Firing;
  period: DigestPeriod | null;
}

export interface DeliveryView {
  id: string;
  channel_id: string | null;
  channel_name: string;
  status: 'pending' | 'retrying' | 'succeeded' | 'failed' | 'skipped';
  attempts: number;
  response_status: number | null;
  error: string | null;
  next_attempt_at: string | null;
  delivered_at: string | null;
  updated_at: string;
  digest: boolean;
}

/** A stored firing as history shows it. */
export interface StoredFiring {
  id: number;
  rule_id: string | null;
  product_id: number | null;
  fired_at: string;
  digest_id: string | null;
  firing: Firing;
  deliveries: DeliveryView[];
}

export interface FiringQuery {
  limit: number;
  /** The cursor: firings older than this one (its id), newest first. */
  before?: number | undefined;
  rule_id?: string | undefined;
  product_id?: number | undefined;
  condition?: string | undefined;
}

export interface FiringStore {
  /** Inserts in `tx`; a dedupe key already stored is skipped. Answers the firings written now, with their ids. */
  insert(pending: readonly PendingFiring[], tx: Queryable): Promise<Array<{ id: number; firing: Firing }>>;
  /** The last firing time of each (rule, product) pair, keyed `rule:product`, in `tx`. */
  lastFirings(pairs: ReadonlyArray<{ rule_id: string; product_id: number }>, tx: Queryable): Promise<Map<string, string>>;
  list(query: FiringQuery): Promise<{ items: StoredFiring[]; total: number }>;
  get(id: number): Promise<StoredFiring | undefined>;
  /** The firing as evaluated (for rendering), or undefined when deleted. */
  firing(id: number, tx?: Queryable): Promise<Firing | undefined>;
  /** Rules and periods with firings whose digest is due at `now` and not sent. */
  dueDigests(now: Date): Promise<Array<{ rule_id: string | null; digest_key: string }>>;
  /**
   * In `tx`: takes the undelivered due firings of one rule's period that no other transaction holds
   * (SKIP LOCKED: two workers never both take one) and marks them as `digestId`'s.
   */
  claimDigest(group: { rule_id: string | null; digest_key: string }, digestId: string, now: Date, tx: Queryable): Promise<Firing[]>;
  digestFirings(digestId: string, tx?: Queryable): Promise<Firing[]>;
  /**
   * In `tx`: the periods of the firings waiting for a digest (of one mode, of one rule, or all) end
   * now: their digests are due. Answers the database's time of it, the alerts waiting and the
   * digests (rule and period) they make.
   */
  endPeriods(filter: { digest?: 'daily' | 'weekly' | undefined; rule_id?: string | undefined }, tx: Queryable): Promise<{ until: string; alerts: number; digests: number }>;
}

const isoTime = (column: string) => `to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;

const DELIVERIES = `COALESCE((SELECT jsonb_agg(jsonb_build_object(
    'id', d.id, 'channel_id', d.channel_id, 'channel_name', d.channel_name, 'status', d.status, 'attempts', d.attempts,
    'response_status', d.response_status, 'error', d.error, 'next_attempt_at', ${isoTime('d.next_attempt_at')},
    'delivered_at', ${isoTime('d.delivered_at')}, 'updated_at', ${isoTime('d.updated_at')}, 'digest', d.digest_id IS NOT NULL) ORDER BY d.created_at, d.id)
  FROM alert_deliveries d WHERE d.firing_id = f.id OR (f.digest_id IS NOT NULL AND d.digest_id = f.digest_id)), '[]'::jsonb)`;

const COLUMNS = `f.id::float8 AS id, f.rule_id, f.product_id, ${isoTime('f.fired_at')} AS fired_at, f.digest_id, f.firing, ${DELIVERIES} AS deliveries`;

export function createFiringStore(db: Database): FiringStore {
  return {
    async insert(pending, tx) {
      if (pending.length === 0) return [];
      const rows = pending.map(({ firing, period }) => ({
        dedupe_key: firing.dedupe_key,
        rule_id: firing.rule_id,
        product_id: firing.product.id,
        event_id: firing.event_id,
        condition: firing.condition,
        fired_at: firing.fired_at,
        digest: firing.digest,
        digest_key: period?.key ?? null,
        digest_due_at: period?.due_at ?? null,
        channel_ids: firing.channel_ids,
        firing,
      }));
      const written = await tx.query<{ id: number; dedupe_key: string }>(
        `INSERT INTO alert_firings (dedupe_key, rule_id, product_id, event_id, condition, fired_at, digest, digest_key, digest_due_at, channel_ids, firing)
         SELECT f.dedupe_key, f.rule_id, f.product_id, f.event_id, f.condition, f.fired_at, f.digest, f.digest_key, f.digest_due_at,
                ARRAY(SELECT jsonb_array_elements_text(f.channel_ids))::uuid[], f.firing
           FROM jsonb_to_recordset($1::jsonb) AS f (dedupe_key text, rule_id uuid, product_id integer, event_id bigint, condition text,
                fired_at timestamptz, digest text, digest_key text, digest_due_at timestamptz, channel_ids jsonb, firing jsonb)
         ON CONFLICT (dedupe_key) DO NOTHING
         RETURNING id::float8 AS id, dedupe_key`,
        [JSON.stringify(rows)],
      );
      const byKey = new Map(pending.map((p) => [p.firing.dedupe_key, p.firing]));
      return written.map((row) => ({ id: row.id, firing: byKey.get(row.dedupe_key)! }));
    },

    async lastFirings(pairs, tx) {
      if (pairs.length === 0) return new Map();
      const rows = await tx.query<{ rule_id: string; product_id: number; fired_at: string }>(
        `SELECT p.rule_id, p.product_id, ${isoTime('last.fired_at')} AS fired_at
           FROM unnest($1::uuid[], $2::int[]) AS p (rule_id, product_id),
                LATERAL (SELECT f.fired_at FROM alert_firings f WHERE f.rule_id = p.rule_id AND f.product_id = p.product_id ORDER BY f.fired_at DESC LIMIT 1) last`,
        [pairs.map((p) => p.rule_id), pairs.map((p) => p.product_id)],
      );
      return new Map(rows.map((row) => [`${row.rule_id}:${row.product_id}`, row.fired_at]));
    },

    async list(query) {
      const conditions: string[] = [];
      const values: unknown[] = [];
      const add = (sql: (p: string) => string, value: unknown) => {
        values.push(value);
        conditions.push(sql(`$${values.length}`));
      };
      if (query.rule_id !== undefined) add((p) => `f.rule_id = ${p}::uuid`, query.rule_id);
      if (query.product_id !== undefined) add((p) => `f.product_id = ${p}`, query.product_id);
      if (query.condition !== undefined) add((p) => `f.condition = ${p}`, query.condition);
      const filter = conditions.length === 0 ? '' : `WHERE ${conditions.join(' AND ')}`;
      const [count] = await db.query<{ total: number }>(`SELECT count(*)::int AS total FROM alert_firings f ${filter}`, values);
      if (query.before !== undefined) add((p) => `f.id < ${p}`, query.before);
      values.push(query.limit);
      const items = await db.query<StoredFiring>(
        `SELECT ${COLUMNS} FROM alert_firings f ${conditions.length === 0 ? '' : `WHERE ${conditions.join(' AND ')}`} ORDER BY f.id DESC LIMIT $${values.length}`,
        values,
      );
      return { items, total: count?.total ?? 0 };
    },

    async get(id) {
      const [row] = await db.query<StoredFiring>(`SELECT ${COLUMNS} FROM alert_firings f WHERE f.id = $1`, [id]);
      return row;
    },

    async firing(id, tx = db) {
      const [row] = await tx.query<{ firing: Firing }>('SELECT firing FROM alert_firings WHERE id = $1', [id]);
      return row?.firing;
    },

    dueDigests: (now) =>
      db.query<{ rule_id: string | null; digest_key: string }>(
        `SELECT DISTINCT rule_id, digest_key FROM alert_firings WHERE digest_id IS NULL AND digest_due_at IS NOT NULL AND digest_due_at <= $1`,
        [now.toISOString()],
      ),

    async claimDigest(group, digestId, now, tx) {
      const rows = await tx.query<{ firing: Firing }>(
        `WITH taken AS (
           SELECT id FROM alert_firings
            WHERE digest_id IS NULL AND digest_due_at <= $1 AND digest_key = $2 AND rule_id IS NOT DISTINCT FROM $3::uuid
            ORDER BY id FOR UPDATE SKIP LOCKED)
         UPDATE alert_firings f SET digest_id = $4 FROM taken WHERE f.id = taken.id RETURNING f.firing`,
        [now.toISOString(), group.digest_key, group.rule_id, digestId],
      );
      return rows.map((row) => row.firing);
    },

    async endPeriods(filter, tx) {
      // To the millisecond, as the time handed on is written: the firings are due at exactly that time.
      const [row] = await tx.query<{ until: string; alerts: number; digests: number }>(
        `WITH ended AS (
           UPDATE alert_firings SET digest_due_at = LEAST(digest_due_at, date_trunc('milliseconds', now()))
            WHERE digest_id IS NULL AND digest_due_at IS NOT NULL AND ($1::text IS NULL OR digest = $1) AND ($2::uuid IS NULL OR rule_id = $2)
            RETURNING rule_id, digest_key)
         SELECT ${isoTime("date_trunc('milliseconds', now())")} AS until, count(*)::int AS alerts,
                count(DISTINCT COALESCE(rule_id::text, '') || ' ' || digest_key)::int AS digests
           FROM ended`,
        [filter.digest ?? null, filter.rule_id ?? null],
      );
      return row!;
    },

    async digestFirings(digestId, tx = db) {
      const rows = await tx.query<{ firing: Firing }>('SELECT firing FROM alert_firings WHERE digest_id = $1 ORDER BY id', [digestId]);
      return rows.map((row) => row.firing);
    },
  };
}
