// Migration 7, product_search: frozen once released; a later change is a new migration.
import type { Migration } from '../migration.js';

export const migration: Migration = {
  version: 7,
  name: 'product_search',
  sql: `
    -- q is a case-insensitive substring match (ILIKE '%q%'), which a B-tree cannot serve: without
    -- these, every search read the whole table. A trigram GIN index gives the rows whose text holds
    -- every trigram of q (rechecked against the ILIKE), for title and description alike.
    -- pg_trgm ships with PostgreSQL (its contrib package) and with PGlite. It goes to schema public
    -- rather than the first schema on the search path, so that schemas of one database share one copy
    -- (dropping a schema must not take the extension, and other schemas' indexes, with it).
    CREATE EXTENSION IF NOT EXISTS pg_trgm WITH SCHEMA public;
    DO $$
    DECLARE
      -- Wherever the extension lives (an existing installation may have put it elsewhere).
      ops text := (SELECT quote_ident(n.nspname) || '.gin_trgm_ops' FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace WHERE e.extname = 'pg_trgm');
    BEGIN
      EXECUTE format('CREATE INDEX products_title_trgm_idx ON products USING gin (title %s)', ops);
      EXECUTE format('CREATE INDEX products_description_trgm_idx ON products USING gin (description %s)', ops);
    END $$;
  `,
};
