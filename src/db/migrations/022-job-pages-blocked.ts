// Migration 22, job_pages_blocked: frozen once released; a later change is a new migration.
import type { Migration } from '../migration.js';

export const migration: Migration = {
  version: 22,
  name: 'job_pages_blocked',
  sql: `
    -- The pages of a crawl that met a wall (a CAPTCHA, a bot check, a login, a rate limit) instead of
    -- their content: counted among pages_failed too, and shown apart so a blocked crawl says so.
    ALTER TABLE jobs ADD COLUMN pages_blocked integer NOT NULL DEFAULT 0;
  `,
};
