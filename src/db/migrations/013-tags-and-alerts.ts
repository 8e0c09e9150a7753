// Migration 13, tags_and_alerts: frozen once released; a later change is a new migration.
import type { Migration } from '../migration.js';

export const migration: Migration = {
  version: 13,
  name: 'tags_and_alerts',
  sql: `
    -- Tags (watch lists): one row per name, shared by everything that can carry one. Each kind of
    -- thing tagged has a join table of the same shape (product_tags here; articles get article_tags),
    -- so a tag lists, renames and deletes in one place whatever it is on.
    CREATE TABLE tags (
      id integer GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
      name text NOT NULL UNIQUE CHECK (char_length(name) BETWEEN 1 AND 64),
      created_at timestamptz NOT NULL DEFAULT now()
    );
    CREATE TABLE product_tags (
      tag_id integer NOT NULL REFERENCES tags (id) ON DELETE CASCADE,
      product_id integer NOT NULL REFERENCES products (id) ON DELETE CASCADE,
      created_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (tag_id, product_id)
    );
    CREATE INDEX product_tags_product_idx ON product_tags (product_id);
    -- Tags of a source (the canonical URL runs start from): everything its runs collect gets them.
    CREATE TABLE source_tags (
      source_key text NOT NULL,
      tag_id integer NOT NULL REFERENCES tags (id) ON DELETE CASCADE,
      created_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (source_key, tag_id)
    );

    -- Notification channels. config holds the secrets (passwords, tokens, webhook URLs): served
    -- only masked, never logged.
    CREATE TABLE alert_channels (
      id uuid PRIMARY KEY,
      name text NOT NULL,
      kind text NOT NULL,
      config jsonb NOT NULL,
      enabled boolean NOT NULL DEFAULT true,
      disabled_reason text,
      disabled_at timestamptz,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now()
    );

    CREATE TABLE alert_rules (
      id uuid PRIMARY KEY,
      name text NOT NULL,
      scope jsonb NOT NULL,
      condition jsonb NOT NULL,
      cooldown_minutes integer NOT NULL CHECK (cooldown_minutes >= 0),
      digest text NOT NULL CHECK (digest IN ('immediate', 'daily', 'weekly')),
      channel_ids uuid[] NOT NULL DEFAULT '{}',
      enabled boolean NOT NULL DEFAULT true,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now()
    );

    -- A daily or weekly digest as sent: the firings it grouped point to it.
    -- Rules and channels are referenced without foreign keys: deleting one while a scrape records a
    -- firing for it must not fail that scrape; the history keeps their names.
    CREATE TABLE alert_digests (
      id uuid PRIMARY KEY,
      rule_id uuid,
      period_key text NOT NULL,
      label text NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now()
    );

    -- Every firing, written in the transaction that appended its event. The unique dedupe_key
    -- (rule:product:event) keeps a firing once however often, and by whom, its event is evaluated.
    CREATE TABLE alert_firings (
      id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
      dedupe_key text NOT NULL UNIQUE,
      rule_id uuid,
      product_id integer REFERENCES products (id) ON DELETE SET NULL,
      event_id bigint NOT NULL,
      condition text NOT NULL,
      fired_at timestamptz NOT NULL,
      digest text NOT NULL,
      digest_key text,
      digest_due_at timestamptz,
      digest_id uuid REFERENCES alert_digests (id) ON DELETE SET NULL,
      channel_ids uuid[] NOT NULL DEFAULT '{}',
      firing jsonb NOT NULL
    );
    CREATE INDEX alert_firings_cooldown_idx ON alert_firings (rule_id, product_id, fired_at DESC);
    CREATE INDEX alert_firings_product_idx ON alert_firings (product_id, id);
    CREATE INDEX alert_firings_digest_due_idx ON alert_firings (digest_due_at) WHERE digest_id IS NULL AND digest_due_at IS NOT NULL;

    -- One message to one channel (a firing's, or a digest's), with its last attempt's outcome.
    CREATE TABLE alert_deliveries (
      id uuid PRIMARY KEY,
      firing_id bigint REFERENCES alert_firings (id) ON DELETE CASCADE,
      digest_id uuid REFERENCES alert_digests (id) ON DELETE CASCADE,
      channel_id uuid,
      channel_name text NOT NULL,
      status text NOT NULL CHECK (status IN ('pending', 'retrying', 'succeeded', 'failed', 'skipped')),
      attempts integer NOT NULL DEFAULT 0,
      response_status integer,
      error text,
      next_attempt_at timestamptz,
      delivered_at timestamptz,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now(),
      CHECK ((firing_id IS NULL) <> (digest_id IS NULL))
    );
    CREATE INDEX alert_deliveries_firing_idx ON alert_deliveries (firing_id) WHERE firing_id IS NOT NULL;
    CREATE INDEX alert_deliveries_digest_idx ON alert_deliveries (digest_id) WHERE digest_id IS NOT NULL;
    CREATE INDEX alert_deliveries_channel_idx ON alert_deliveries (channel_id, created_at DESC);
  `,
};
