// Migration 21, job_cancel_requests: frozen once released; a later change is a new migration.
import type { Migration } from '../migration.js';

export const migration: Migration = {
  version: 21,
  name: 'job_cancel_requests',
  sql: `
    -- A cancel is written here before it ends the job: a crawl's page reads it before opening, so a cancel
    -- is seen at once, while its update of the job row still waits for the pages committing under that
    -- row's lock. No foreign key on purpose: its check would wait for the same lock.
    CREATE TABLE job_cancel_requests (
      job_id uuid PRIMARY KEY,
      requested_at timestamptz NOT NULL DEFAULT now()
    );
  `,
};
