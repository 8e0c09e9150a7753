// Migration 6, tracking: frozen once released; a later change is a new migration.
import type { Migration } from '../migration.js';

export const migration: Migration = {
  version: 6,
  name: 'tracking',
  sql: `
    -- When each product was last seen, by which run of which source, and whether that source lost it.
    ALTER TABLE products
      ADD COLUMN last_seen_at timestamptz,
      ADD COLUMN last_run text,
      ADD COLUMN source_key text,
      ADD COLUMN missed_runs integer NOT NULL DEFAULT 0,
      ADD COLUMN gone_at timestamptz,
      -- Set by a write that changed price, currency, list price or availability: the values before
      -- it and their last sighting, which that write's history and events compare against.
      ADD COLUMN prior_state jsonb;
    -- Neither last_seen_at nor last_run is indexed, and pages keep a fifth free: a re-scrape that
    -- changes nothing else then updates its rows in place (HOT), without a new entry in every index
    -- of the table (a 1000-product re-scrape took half the time). Pages written before keep theirs.
    ALTER TABLE products SET (fillfactor = 80);
    CREATE INDEX products_source_key_idx ON products (source_key) WHERE source_key IS NOT NULL AND gone_at IS NULL;
    CREATE INDEX products_availability_idx ON products (availability, id);

    -- Price history that grows with change, not with repetition: a row per distinct state. The
    -- current state's last sighting is the product's last_seen_at (last_seen_at here stays NULL);
    -- a state is closed, with its last sighting, when the next one begins.
    CREATE TABLE price_observations (
      id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
      product_id integer NOT NULL REFERENCES products (id) ON DELETE CASCADE,
      price numeric,
      currency text,
      list_price numeric,
      availability text,
      first_seen_at timestamptz NOT NULL,
      first_run text,
      last_seen_at timestamptz,
      last_run text,
      source text NOT NULL CHECK (source IN ('scrape', 'api'))
    );
    CREATE INDEX price_observations_product_idx ON price_observations (product_id, first_seen_at DESC);
    CREATE UNIQUE INDEX price_observations_current_idx ON price_observations (product_id) WHERE last_seen_at IS NULL;

    -- Change events, in the order they happened: their id is the consumers' cursor.
    CREATE TABLE events (
      id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
      type text NOT NULL,
      product_id integer REFERENCES products (id) ON DELETE SET NULL,
      source text,
      run_id text,
      data jsonb NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now()
    );
    CREATE INDEX events_product_idx ON events (product_id, id);
    CREATE INDEX events_type_idx ON events (type, id);
    CREATE INDEX events_created_idx ON events (created_at);

    CREATE TABLE webhooks (
      id uuid PRIMARY KEY,
      url text NOT NULL,
      events text[] NOT NULL,
      secret text NOT NULL,
      filter jsonb,
      enabled boolean NOT NULL DEFAULT true,
      disabled_reason text,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now()
    );
    CREATE TABLE webhook_deliveries (
      id uuid PRIMARY KEY,
      webhook_id uuid NOT NULL REFERENCES webhooks (id) ON DELETE CASCADE,
      event_id bigint NOT NULL,
      attempt integer NOT NULL,
      status text NOT NULL CHECK (status IN ('succeeded', 'failed')),
      response_status integer,
      error text,
      duration_ms real,
      next_attempt_at timestamptz,
      created_at timestamptz NOT NULL DEFAULT now()
    );
    CREATE INDEX webhook_deliveries_webhook_idx ON webhook_deliveries (webhook_id, created_at DESC);

    -- What existed before tracking starts its history with what it is now.
    INSERT INTO price_observations (product_id, price, currency, list_price, availability, first_seen_at, source)
      SELECT id, price, currency, list_price, availability, updated_at, CASE WHEN scrape_key IS NULL THEN 'api' ELSE 'scrape' END FROM products;
    UPDATE products SET last_seen_at = updated_at WHERE scrape_key IS NOT NULL;
  `,
};
