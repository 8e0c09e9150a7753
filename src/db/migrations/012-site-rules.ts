// Migration 12, site rules: frozen once released; a later change is a new migration.
import type { Migration } from '../migration.js';

export const migration: Migration = {
  version: 12,
  name: 'site-rules',
  sql: `
    -- What a user pinned for a site: per field a CSS selector or a JSON path, and a page type. A host
    -- pattern is a host ("shop.example") or a wildcard over its subdomains ("*.shop.example"), stored
    -- lower-cased; one rule per pattern.
    CREATE TABLE site_rules (
      id serial PRIMARY KEY,
      host_pattern text NOT NULL UNIQUE,
      fields jsonb NOT NULL DEFAULT '{}'::jsonb,
      page_type text,
      note text,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now()
    );
    -- What a crawl page's site rule found nothing for, for the crawl's log.
    ALTER TABLE crawl_frontier ADD COLUMN site_rule_warning text;
  `,
};
