// Migration 18, host_autothrottle: frozen once released; a later change is a new migration.
import type { Migration } from '../migration.js';

export const migration: Migration = {
  version: 18,
  name: 'host_autothrottle',
  sql: `
    -- AutoThrottle's pace of a host, ms between requests, adapted to how it answers and shared by every
    -- worker; NULL while AutoThrottle never paced it (then robots.txt's Crawl-delay alone is its pace).
    ALTER TABLE host_politeness ADD COLUMN delay_ms double precision;
  `,
};
