// Migration 17, article_tags: frozen once released; a later change is a new migration.
import type { Migration } from '../migration.js';

export const migration: Migration = {
  version: 17,
  name: 'article_tags',
  sql: `
    -- Watch-list tags on articles, the same shape as product_tags: a tag (migration 13) lists,
    -- renames and deletes in one place whatever it is on. Not to be confused with articles.tags,
    -- the keywords the page itself states.
    CREATE TABLE article_tags (
      tag_id integer NOT NULL REFERENCES tags (id) ON DELETE CASCADE,
      article_id integer NOT NULL REFERENCES articles (id) ON DELETE CASCADE,
      created_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (tag_id, article_id)
    );
    CREATE INDEX article_tags_article_idx ON article_tags (article_id);
  `,
};
