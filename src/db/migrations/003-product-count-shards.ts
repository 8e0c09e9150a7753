// Migration 3, product_count_shards: frozen once released; a later change is a new migration.
import type { Migration } from '../migration.js';

export const migration: Migration = {
  version: 3,
  name: 'product_count_shards',
  sql: `
    -- The exact number of products without count(*), which reads every row: triggers keep a running
    -- count, and the total is the sum of these few rows. Each database connection adds to its own
    -- shard, so concurrent writers almost never wait on one another; the count commits (or rolls
    -- back) with the write that changed it, so every snapshot sees a total that matches its rows.
    CREATE TABLE product_count_shards (
      shard smallint PRIMARY KEY,
      n bigint NOT NULL
    );
    -- No write may land between the count below and the triggers taking over.
    LOCK TABLE products IN SHARE MODE;
    INSERT INTO product_count_shards (shard, n)
      SELECT s, CASE WHEN s = 0 THEN (SELECT count(*) FROM products) ELSE 0 END
      FROM generate_series(0, 15) AS s;

    CREATE FUNCTION product_count_track() RETURNS trigger LANGUAGE plpgsql AS $$
    DECLARE
      delta bigint;
    BEGIN
      -- "changed" holds the rows this statement inserted (or deleted); an upsert that only
      -- updated leaves it empty and touches no shard.
      SELECT count(*) INTO delta FROM changed;
      IF delta > 0 THEN
        UPDATE product_count_shards
           SET n = n + CASE WHEN TG_OP = 'DELETE' THEN -delta ELSE delta END
         WHERE shard = pg_backend_pid() % 16;
      END IF;
      RETURN NULL;
    END $$;
    CREATE FUNCTION product_count_reset() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      UPDATE product_count_shards SET n = 0;
      RETURN NULL;
    END $$;

    CREATE TRIGGER products_count_insert AFTER INSERT ON products
      REFERENCING NEW TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION product_count_track();
    CREATE TRIGGER products_count_delete AFTER DELETE ON products
      REFERENCING OLD TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION product_count_track();
    CREATE TRIGGER products_count_truncate AFTER TRUNCATE ON products
      FOR EACH STATEMENT EXECUTE FUNCTION product_count_reset();
  `,
};
