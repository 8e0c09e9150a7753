// Migration 14, schedule_next_run: frozen once released; a later change is a new migration.
import type { Migration } from '../migration.js';

export const migration: Migration = {
  version: 14,
  name: 'schedule_next_run',
  sql: `
    -- Each schedule's next due time, worked out once per run instead of every schedule on every pass
    -- of the queue's calendar: one queued message waits for it (start_after), and the firing that
    -- still finds its time here is the one that runs. NULL: paused, or not planned yet (done at start).
    ALTER TABLE schedules ADD COLUMN next_run_at timestamptz;
    CREATE INDEX schedules_unplanned_idx ON schedules (created_at) WHERE next_run_at IS NULL AND NOT paused;
  `,
};
