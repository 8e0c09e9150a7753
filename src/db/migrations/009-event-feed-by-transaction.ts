// Migration 9, event_feed_by_transaction: frozen once released; a later change is a new migration.
import type { Migration } from '../migration.js';

export const migration: Migration = {
  version: 9,
  name: 'event_feed_by_transaction',
  sql: `
    -- The feed's order without a lock: each event carries the id of the transaction that wrote it,
    -- and readers stop below the oldest transaction still running (tracking-store.ts, FEED_HORIZON).
    -- Events written before this migration are all committed: they come first, in id order.
    ALTER TABLE events ADD COLUMN tx xid8 NOT NULL DEFAULT '0';
    ALTER TABLE events ALTER COLUMN tx SET DEFAULT pg_current_xact_id();
    CREATE INDEX events_feed_idx ON events (tx, id);
    DROP INDEX events_product_idx;
    DROP INDEX events_type_idx;
    CREATE INDEX events_product_idx ON events (product_id, tx, id);
    CREATE INDEX events_type_idx ON events (type, tx, id);
  `,
};
