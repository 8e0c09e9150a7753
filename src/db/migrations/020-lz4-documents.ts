// Migration 20, lz4_documents: frozen once released; a later change is a new migration.
import type { Migration } from '../migration.js';

export const migration: Migration = {
  version: 20,
  name: 'lz4_documents',
  sql: `
    -- The big documents a crawl writes (its log, 2-3 MB for a thousand pages; each page's items) are
    -- compressed with lz4 instead of pglz where the server has it: a third smaller and several times
    -- faster to compress, so a crawl's end waits less for its log. Values already stored keep pglz
    -- (both read back alike). PGlite is built without lz4 and keeps pglz.
    DO $$
    BEGIN
      ALTER TABLE scrape_logs ALTER COLUMN document SET COMPRESSION lz4;
      ALTER TABLE crawl_frontier ALTER COLUMN items SET COMPRESSION lz4, ALTER COLUMN articles SET COMPRESSION lz4;
    EXCEPTION WHEN feature_not_supported THEN
      NULL;
    END
    $$;
  `,
};
