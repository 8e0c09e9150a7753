// Notification channels in the relational database (alert_channels): their configs with the secrets, served only through publicView.
import { pagedList } from '../db/paged-list.js';
import type { Database, Queryable } from '../db/queryable.js';
import type { ChannelConfig } from './channel-schema.js';

/** A stored channel, secrets included: never serialised as it is (channel-secrets.ts publicView). */
export interface StoredChannel {
  id: string;
  name: string;
  kind: ChannelConfig['kind'];
  config: ChannelConfig;
  enabled: boolean;
  disabled_reason: string | null;
  disabled_at: string | null;
  created_at: string;
  updated_at: string;
}

/** What a firing's deliveries need of a channel, read in the firing's transaction. */
export type ChannelState = Pick<StoredChannel, 'id' | 'name' | 'enabled' | 'disabled_reason'>;

export interface ChannelStore {
  create(id: string, fields: { name: string; enabled: boolean; config: ChannelConfig }): Promise<StoredChannel>;
  get(id: string): Promise<StoredChannel | undefined>;
  list(query: { limit: number; offset: number }): Promise<{ items: StoredChannel[]; total: number }>;
  update(id: string, fields: { name?: string; enabled?: boolean; config?: ChannelConfig }): Promise<StoredChannel | undefined>;
  delete(id: string, tx: Queryable): Promise<boolean>;
  /** Which of `ids` exist; in `tx` when given. */
  states(ids: readonly string[], tx?: Queryable): Promise<ChannelState[]>;
  /** Disables an enabled channel with the reason; false when it was not enabled (or is gone). */
  disable(id: string, reason: string): Promise<boolean>;
}

const isoTime = (column: string) => `to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;
const COLUMNS = `id, name, kind, config, enabled, disabled_reason, ${isoTime('disabled_at')} AS disabled_at,
  ${isoTime('created_at')} AS created_at, ${isoTime('updated_at')} AS updated_at`;

export function createChannelStore(db: Database): ChannelStore {
  return {
    async create(id, f) {
      const [row] = await db.query<StoredChannel>(`INSERT INTO alert_channels (id, name, kind, config, enabled) VALUES ($1, $2, $3, $4, $5) RETURNING ${COLUMNS}`, [
        id,
        f.name,
        f.config.kind,
        JSON.stringify(f.config),
        f.enabled,
      ]);
      return row!;
    },

    async get(id) {
      const [row] = await db.query<StoredChannel>(`SELECT ${COLUMNS} FROM alert_channels WHERE id = $1`, [id]);
      return row;
    },

    async list(query) {
      return pagedList<StoredChannel>(db, {
        columns: COLUMNS,
        from: 'FROM alert_channels',
        orderBy: 'alert_channels.created_at DESC, id DESC',
        limit: query.limit,
        offset: query.offset,
      });
    },

    async update(id, f) {
      const sets: string[] = [];
      const values: unknown[] = [id];
      const set = (column: string, value: unknown) => {
        values.push(value);
        sets.push(`${column} = $${values.length}`);
      };
      if (f.name !== undefined) set('name', f.name);
      if (f.config !== undefined) {
        set('config', JSON.stringify(f.config));
        set('kind', f.config.kind);
      }
      if (f.enabled !== undefined) {
        set('enabled', f.enabled);
        // Enabled again by a person: the old failure is history (each delivery keeps its own).
        if (f.enabled) sets.push('disabled_reason = NULL', 'disabled_at = NULL');
      }
      const [row] = await db.query<StoredChannel>(`UPDATE alert_channels SET ${[...sets, 'updated_at = now()'].join(', ')} WHERE id = $1 RETURNING ${COLUMNS}`, values);
      return row;
    },

    async delete(id, tx) {
      return (await tx.query('DELETE FROM alert_channels WHERE id = $1 RETURNING id', [id])).length > 0;
    },

    async states(ids, tx = db) {
      if (ids.length === 0) return [];
      return tx.query<ChannelState>('SELECT id, name, enabled, disabled_reason FROM alert_channels WHERE id = ANY ($1::uuid[])', [ids]);
    },

    async disable(id, reason) {
      const rows = await db.query(
        'UPDATE alert_channels SET enabled = false, disabled_reason = $2, disabled_at = now(), updated_at = now() WHERE id = $1 AND enabled RETURNING id',
        [id, reason],
      );
      return rows.length > 0;
    },
  };
}
