// Migration 5, jobs: frozen once released; a later change is a new migration.
import type { Migration } from '../migration.js';

export const migration: Migration = {
  version: 5,
  name: 'jobs',
  sql: `
    -- Scrape jobs as the API shows them. The queue itself (pg-boss, its own schema) runs them;
    -- these rows are the user's view: status, progress, timings, the logs written.
    CREATE TABLE jobs (
      id uuid PRIMARY KEY,
      kind text NOT NULL CHECK (kind IN ('scrape', 'crawl')),
      status text NOT NULL CHECK (status IN ('queued', 'running', 'succeeded', 'failed', 'cancelled')),
      source_url text NOT NULL,
      request jsonb NOT NULL,
      schedule_id uuid,
      attempts integer NOT NULL DEFAULT 0,
      pages_done integer NOT NULL DEFAULT 0,
      pages_discovered integer NOT NULL DEFAULT 0,
      pages_failed integer NOT NULL DEFAULT 0,
      products_found integer NOT NULL DEFAULT 0,
      products_created integer NOT NULL DEFAULT 0,
      products_updated integer NOT NULL DEFAULT 0,
      log_ids uuid[] NOT NULL DEFAULT '{}',
      error jsonb,
      created_at timestamptz NOT NULL DEFAULT now(),
      started_at timestamptz,
      finished_at timestamptz,
      updated_at timestamptz NOT NULL DEFAULT now()
    );
    CREATE INDEX jobs_created_idx ON jobs (created_at DESC, id DESC);
    CREATE INDEX jobs_status_idx ON jobs (status, created_at DESC);
    CREATE INDEX jobs_schedule_idx ON jobs (schedule_id, created_at DESC) WHERE schedule_id IS NOT NULL;

    -- A crawl's frontier: every URL it will fetch, once, keyed by the URL's canonical form. Each
    -- row is also one queued page job (same id), so a crawl resumes where it stopped.
    CREATE TABLE crawl_frontier (
      id uuid PRIMARY KEY,
      job_id uuid NOT NULL REFERENCES jobs (id) ON DELETE CASCADE,
      url_key text NOT NULL,
      url text NOT NULL,
      depth integer NOT NULL,
      status text NOT NULL CHECK (status IN ('pending', 'done', 'failed')),
      page_type text,
      products integer NOT NULL DEFAULT 0,
      items jsonb,
      error jsonb,
      -- The worker process that settled the page ("host:pid") and the time it spent on it.
      worker text,
      duration_ms real,
      finished_at timestamptz,
      UNIQUE (job_id, url_key)
    );
    CREATE INDEX crawl_frontier_pending_idx ON crawl_frontier (job_id) WHERE status = 'pending';

    CREATE TABLE schedules (
      id uuid PRIMARY KEY,
      name text,
      cron text,
      every_minutes integer CHECK (every_minutes >= 1),
      timezone text NOT NULL,
      job jsonb NOT NULL,
      paused boolean NOT NULL DEFAULT false,
      allow_overlap boolean NOT NULL DEFAULT false,
      runs integer NOT NULL DEFAULT 0,
      skipped integer NOT NULL DEFAULT 0,
      last_run_at timestamptz,
      last_job_id uuid,
      last_skipped_at timestamptz,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now(),
      CHECK ((cron IS NULL) <> (every_minutes IS NULL))
    );

    -- robots.txt Crawl-delay across every worker process: the next moment a host may be fetched.
    CREATE TABLE host_politeness (
      host text PRIMARY KEY,
      next_at timestamptz NOT NULL
    );
  `,
};
