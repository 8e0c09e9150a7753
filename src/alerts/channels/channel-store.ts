// Notification channels in the relational database (alert_channels): their configs with the secrets, served only through publicView.
import { pagedList } from '../../db/paged-list.js';
import type { Database, Queryable } from '../../db/queryable.js';
import { LimitReached } from '../../problems.js';
import type { ChannelConfig } from './channel-schema.js';
import { channelTarget, type ChannelTarget } from './channel-target.js';

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

/** What a firing's deliveries need of a channel, read in the firing's transaction: its state, and where its messages go. */
export type ChannelState = Pick<StoredChannel, 'id' | 'name' | 'enabled' | 'disabled_reason'> & { target: ChannelTarget };

export interface ChannelStore {
  /** Refuses (LimitReached, nothing stored) a channel to a destination that `perTarget` channels reach already. */
  create(id: string, fields: { name: string; enabled: boolean; config: ChannelConfig }, perTarget: number): Promise<StoredChannel>;
  get(id: string): Promise<StoredChannel | undefined>;
  list(query: { limit: number; offset: number }): Promise<{ items: StoredChannel[]; total: number }>;
  /** As create, a new config is refused where `perTarget` other channels reach its destination. */
  update(id: string, fields: { name?: string; enabled?: boolean; config?: ChannelConfig }, perTarget: number): Promise<StoredChannel | undefined>;
  delete(id: string, tx: Queryable): Promise<boolean>;
  /** Which of `ids` exist, oldest first; in `tx` when given. */
  states(ids: readonly string[], tx?: Queryable): Promise<ChannelState[]>;
  /** Disables an enabled channel with the reason; false when it was not enabled (or is gone). */
  disable(id: string, reason: string): Promise<boolean>;
}

const isoTime = (column: string) => `to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;
const COLUMNS = `id, name, kind, config, enabled, disabled_reason, ${isoTime('disabled_at')} AS disabled_at,
  ${isoTime('created_at')} AS created_at, ${isoTime('updated_at')} AS updated_at`;

export function createChannelStore(db: Database): ChannelStore {
  return {
    create: (id, f, perTarget) =>
      db.transaction(async (tx) => {
        await assertRoomAt(tx, f.config, id, perTarget);
        const [row] = await tx.query<StoredChannel>(`INSERT INTO alert_channels (id, name, kind, config, enabled) VALUES ($1, $2, $3, $4, $5) RETURNING ${COLUMNS}`, [
          id,
          f.name,
          f.config.kind,
          JSON.stringify(f.config),
          f.enabled,
        ]);
        return row!;
      }),

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

    update: (id, f, perTarget) =>
      db.transaction(async (tx) => {
        if (f.config !== undefined) await assertRoomAt(tx, f.config, id, perTarget);
        return update(tx, id, f);
      }),

    async delete(id, tx) {
      return (await tx.query('DELETE FROM alert_channels WHERE id = $1 RETURNING id', [id])).length > 0;
    },

    async states(ids, tx = db) {
      if (ids.length === 0) return [];
      const rows = await tx.query<Omit<ChannelState, 'target'> & { config: ChannelConfig }>(
        'SELECT id, name, enabled, disabled_reason, config FROM alert_channels WHERE id = ANY ($1::uuid[]) ORDER BY created_at, id',
        [ids],
      );
      return rows.map(({ config, ...state }) => ({ ...state, target: channelTarget(config) }));
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

/** Changes the given fields of a channel. */
async function update(tx: Queryable, id: string, f: { name?: string; enabled?: boolean; config?: ChannelConfig }): Promise<StoredChannel | undefined> {
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
  const [row] = await tx.query<StoredChannel>(`UPDATE alert_channels SET ${[...sets, 'updated_at = now()'].join(', ')} WHERE id = $1 RETURNING ${COLUMNS}`, values);
  return row;
}

/**
 * Refuses a channel to a destination `perTarget` other channels reach already; the table locked
 * against other writers until the caller's transaction ends, so two requests cannot both take the last place.
 */
async function assertRoomAt(tx: Queryable, config: ChannelConfig, id: string, perTarget: number): Promise<void> {
  await tx.exec('LOCK TABLE alert_channels IN SHARE ROW EXCLUSIVE MODE');
  const { key } = channelTarget(config);
  const others = (await tx.query<{ id: string; config: ChannelConfig }>('SELECT id, config FROM alert_channels WHERE id <> $1', [id])).filter(
    (channel) => channelTarget(channel.config).key === key,
  );
  if (others.length >= perTarget) {
    throw new LimitReached(
      `${others.length} channels send to this destination already, the most ALERT_CHANNELS_PER_TARGET allows (${perTarget}); it gets each alert once whatever their number: use one of them.`,
    );
  }
}
