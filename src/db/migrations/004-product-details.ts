// Migration 4, product_details: frozen once released; a later change is a new migration.
import type { Migration } from '../migration.js';

export const migration: Migration = {
  version: 4,
  name: 'product_details',
  sql: `
    -- What richer extraction reads from a product page, and where each value came from. All
    -- nullable: products created before, or by hand, simply lack them.
    ALTER TABLE products
      ADD COLUMN list_price numeric CHECK (list_price >= 0),
      ADD COLUMN availability text CHECK (availability IN ('in_stock', 'out_of_stock', 'preorder', 'backorder', 'limited', 'discontinued')),
      ADD COLUMN sku text CHECK (char_length(sku) <= 200),
      ADD COLUMN gtin text CHECK (gtin ~ '^([0-9]{8}|[0-9]{12,14})$'),
      ADD COLUMN brand text CHECK (char_length(brand) <= 200),
      ADD COLUMN image_url text,
      -- {page_url, page_type, fields: {title: {source, locator}, price: ...}}; null for products made by hand.
      ADD COLUMN provenance jsonb;
  `,
};
