// Alert deliveries in the relational database (alert_deliveries, alert_digests): one row per message and channel, with its last attempt.
import type { Database, Queryable } from '../../db/queryable.js';

export type DeliveryStatus = 'pending' | 'retrying' | 'succeeded' | 'failed' | 'skipped';

export interface NewDelivery {
  id: string;
  firing_id: number | null;
  digest_id: string | null;
  channel_id: string;
  channel_name: string;
  status: 'pending' | 'skipped';
  error: string | null;
}

export interface StoredDelivery {
  id: string;
  firing_id: number | null;
  digest_id: string | null;
  channel_id: string | null;
  channel_name: string;
  status: DeliveryStatus;
  attempts: number;
}

export interface AttemptRecord {
  status: Exclude<DeliveryStatus, 'pending' | 'skipped'> | 'skipped';
  response_status: number | null;
  error: string | null;
  /**
   * The wait before the next attempt, in ms from when this one is recorded (after its answer): the
   * database stamps the record and the next attempt's time from one clock, so the record shows the
   * wait exactly. Null: no next attempt.
   */
  retry_in_ms: number | null;
  /** Whether this was an attempt (counted), or a delivery given up without one (a channel gone or disabled). */
  attempted: boolean;
}

export interface DeliveryStore {
  create(deliveries: readonly NewDelivery[], tx: Queryable): Promise<void>;
  get(id: string): Promise<StoredDelivery | undefined>;
  /** Answers the next attempt's time as recorded (to the millisecond), or null when there is none. */
  record(id: string, attempt: AttemptRecord): Promise<string | null>;
  /** A digest as sent: the firings it groups point to it (see FiringStore.claimDigest). */
  createDigest(digest: { id: string; rule_id: string | null; period_key: string; label: string }, tx: Queryable): Promise<void>;
  deleteDigest(id: string, tx: Queryable): Promise<void>;
  digestLabel(id: string): Promise<string | undefined>;
}

export const FINAL_DELIVERY: ReadonlySet<DeliveryStatus> = new Set(['succeeded', 'failed', 'skipped']);

export function createDeliveryStore(db: Database): DeliveryStore {
  return {
    async create(deliveries, tx) {
      if (deliveries.length === 0) return;
      await tx.query(
        `INSERT INTO alert_deliveries (id, firing_id, digest_id, channel_id, channel_name, status, error)
         SELECT * FROM unnest($1::uuid[], $2::bigint[], $3::uuid[], $4::uuid[], $5::text[], $6::text[], $7::text[])`,
        [
          deliveries.map((d) => d.id),
          deliveries.map((d) => d.firing_id),
          deliveries.map((d) => d.digest_id),
          deliveries.map((d) => d.channel_id),
          deliveries.map((d) => d.channel_name),
          deliveries.map((d) => d.status),
          deliveries.map((d) => d.error),
        ],
      );
    },

    async get(id) {
      const [row] = await db.query<StoredDelivery>(
        'SELECT id, firing_id::float8 AS firing_id, digest_id, channel_id, channel_name, status, attempts FROM alert_deliveries WHERE id = $1',
        [id],
      );
      return row;
    },

    async record(id, a) {
      // The next attempt's time rounded up to the millisecond: the queue takes it as it is, and it is
      // never before the wait has passed.
      const [row] = await db.query<{ next_attempt_at: string | null }>(
        `UPDATE alert_deliveries SET status = $2, response_status = $3, error = $4,
                next_attempt_at = date_trunc('milliseconds', now() + ($5::float8 + 0.999) * interval '1 millisecond'),
                attempts = attempts + CASE WHEN $6 THEN 1 ELSE 0 END,
                delivered_at = CASE WHEN $2 = 'succeeded' THEN now() ELSE delivered_at END, updated_at = now()
          WHERE id = $1
          RETURNING to_char(next_attempt_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS next_attempt_at`,
        [id, a.status, a.response_status, a.error, a.retry_in_ms, a.attempted],
      );
      return row?.next_attempt_at ?? null;
    },

    async createDigest(d, tx) {
      await tx.query('INSERT INTO alert_digests (id, rule_id, period_key, label) VALUES ($1, $2, $3, $4)', [d.id, d.rule_id, d.period_key, d.label]);
    },

    async deleteDigest(id, tx) {
      await tx.query('DELETE FROM alert_digests WHERE id = $1', [id]);
    },

    async digestLabel(id) {
      const [row] = await db.query<{ label: string }>('SELECT label FROM alert_digests WHERE id = $1', [id]);
      return row?.label;
    },
  };
}
