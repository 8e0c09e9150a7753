// Migration 2, scrape_logs: frozen once released; a later change is a new migration.
import type { Migration } from '../migration.js';

export const migration: Migration = {
  version: 2,
  name: 'scrape_logs',
  sql: `
    -- The embedded document store: one JSONB document per scrape run.
    CREATE TABLE scrape_logs (
      id uuid PRIMARY KEY,
      started_at timestamptz NOT NULL,
      status text NOT NULL,
      source_url text,
      document jsonb NOT NULL
    );
    CREATE INDEX scrape_logs_started_at_idx ON scrape_logs (started_at DESC, id DESC);
    CREATE INDEX scrape_logs_status_idx ON scrape_logs (status, started_at DESC);
    CREATE INDEX scrape_logs_source_url_idx ON scrape_logs (source_url, started_at DESC);
  `,
};
