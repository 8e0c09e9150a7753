// What a site rule is to the page pipeline: the fields it may pin, the page types it may set, and a rule as extraction receives it.

/** The fields a site rule can pin (the API's names; `image` is the item's `image_url`). */
export const SITE_RULE_FIELDS = ['title', 'price', 'list_price', 'sku', 'availability', 'image'] as const;
export type SiteRuleField = (typeof SITE_RULE_FIELDS)[number];

/**
 * What a page is, decided before extracting for it; a rule may set it for its site's pages. A listing is a
 * grid of products, an article-list an index of articles or posts; a forum is a thread of posts; service
 * pages are landing, pricing and feature pages.
 */
export const PAGE_TYPES = ['product', 'listing', 'article', 'article-list', 'forum', 'documentation', 'service', 'none'] as const;
export type PageType = (typeof PAGE_TYPES)[number];

/** A rule a user pinned for the page's site, as extraction receives it. */
export interface SiteRuleSpec {
  id: number;
  host_pattern: string;
  fields: Partial<Record<SiteRuleField, { selector?: string; json_path?: string }>>;
  page_type: PageType | null;
}
