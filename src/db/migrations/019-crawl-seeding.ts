// Migration 19, crawl_seeding: frozen once released; a later change is a new migration.
import type { Migration } from '../migration.js';

export const migration: Migration = {
  version: 19,
  name: 'crawl_seeding',
  sql: `
    -- A crawl's start page is crawled while its seed still reads the sitemaps: until their pages are in
    -- the frontier the crawl is not over, even with no page pending.
    ALTER TABLE jobs ADD COLUMN seeding boolean NOT NULL DEFAULT false;
  `,
};
