// Migration 15, crawl_links_not_followed: frozen once released; a later change is a new migration.
import type { Migration } from '../migration.js';

export const migration: Migration = {
  version: 15,
  name: 'crawl_links_not_followed',
  sql: `
    -- A crawl that stops early says why: links it found and did not follow because its page budget
    -- (max_pages) was spent, or because they lay deeper than max_depth.
    ALTER TABLE jobs ADD COLUMN links_over_max_pages integer NOT NULL DEFAULT 0;
    ALTER TABLE jobs ADD COLUMN links_over_max_depth integer NOT NULL DEFAULT 0;
  `,
};
