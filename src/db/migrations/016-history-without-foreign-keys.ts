// Migration 16, history_without_foreign_keys: frozen once released; a later change is a new migration.
import type { Migration } from '../migration.js';

export const migration: Migration = {
  version: 16,
  name: 'history_without_foreign_keys',
  sql: `
    -- A product's history and events are written only by the service, in the transaction that
    -- creates the product or holds its row locked (the upsert of a run, the API's create and update).
    -- Their foreign keys checked each new row against products all the same: a locking lookup and a
    -- WAL record per row, about a fifth of the database's work for POST /products. What the keys did
    -- on a delete is done here instead, once per statement: a deleted product's history goes with
    -- it, its events stay with no product, and TRUNCATE products CASCADE empties both as it did.
    -- What is given up: the database no longer refuses a history or event row naming a product
    -- that does not exist (written by hand, or by code that does not lock the product first).
    ALTER TABLE price_observations DROP CONSTRAINT price_observations_product_id_fkey;
    ALTER TABLE events DROP CONSTRAINT events_product_id_fkey;

    CREATE FUNCTION products_forget_deleted() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      DELETE FROM price_observations WHERE product_id IN (SELECT id FROM deleted);
      UPDATE events SET product_id = NULL WHERE product_id IN (SELECT id FROM deleted);
      RETURN NULL;
    END $$;
    CREATE FUNCTION products_forget_all() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      TRUNCATE price_observations, events;
      RETURN NULL;
    END $$;
    CREATE TRIGGER products_forget_deleted AFTER DELETE ON products
      REFERENCING OLD TABLE AS deleted FOR EACH STATEMENT EXECUTE FUNCTION products_forget_deleted();
    CREATE TRIGGER products_forget_all AFTER TRUNCATE ON products
      FOR EACH STATEMENT EXECUTE FUNCTION products_forget_all();
  `,
};
