// What a page's head says of its own article: Open Graph with its article:* tags, and (less trusted) Dublin Core, Twitter cards, plain meta, <html lang>, the canonical link.
import { absoluteUrl, cleanText, visibleText } from '../dom-helpers.js';
import type { MetaTag, Page } from '../page.js';
import type { ArticleCandidate, ArticleCandidateFields, ArticleFieldName, Located } from '../types.js';
import type { ArticleExtractor } from '../extractor.js';

type TextField = Exclude<ArticleFieldName, 'authors' | 'tags' | 'body' | 'body_html' | 'image_url' | 'url'>;

/** Tags read for each field, most specific first; the first present wins. Lists (authors, tags) read every tag. */
interface TagTable {
  text: Partial<Record<TextField, readonly string[]>>;
  authors: readonly string[];
  tags: readonly string[];
  image_url: readonly string[];
  url: readonly string[];
}

const OPEN_GRAPH: TagTable = {
  text: {
    title: ['og:title'],
    description: ['og:description'],
    published_at: ['article:published_time', 'og:article:published_time', 'article:published', 'og:published_time'],
    modified_at: ['article:modified_time', 'og:article:modified_time', 'og:updated_time', 'article:updated_time'],
    language: ['og:locale'],
    site_name: ['og:site_name'],
    section: ['article:section', 'og:article:section'],
  },
  authors: ['article:author', 'og:article:author'],
  tags: ['article:tag', 'og:article:tag'],
  image_url: ['og:image', 'og:image:url', 'og:image:secure_url'],
  url: ['og:url'],
};

/** Dublin Core (dc., dcterms.), Twitter cards, and the names news CMSs and analytics tags use. */
const PLAIN: TagTable = {
  text: {
    title: ['twitter:title', 'dc.title', 'dcterms.title', 'title'],
    description: ['description', 'twitter:description', 'dc.description', 'dcterms.description', 'dcterms.abstract'],
    published_at: [
      'dcterms.issued',
      'dcterms.created',
      'dc.date.issued',
      'dc.date.created',
      'dc.date',
      'dcterms.date',
      'date',
      'pubdate',
      'publishdate',
      'publish-date',
      'publish_date',
      'article.published',
      'article_date_original',
      'parsely-pub-date',
      'sailthru.date',
      'datepublished',
      'citation_publication_date',
      'citation_date',
      'originalpublicationdate',
    ],
    modified_at: ['dcterms.modified', 'dc.date.modified', 'last-modified', 'lastmod', 'article.updated', 'datemodified', 'revised'],
    language: ['dc.language', 'dcterms.language', 'language', 'content-language'],
    site_name: ['application-name', 'dc.publisher', 'dcterms.publisher', 'publisher', 'apple-mobile-web-app-title'],
    section: ['parsely-section', 'section', 'article.section', 'category'],
  },
  authors: ['author', 'dc.creator', 'dcterms.creator', 'article.author', 'parsely-author', 'sailthru.author', 'byl', 'citation_author'],
  tags: ['news_keywords', 'parsely-tags', 'sailthru.tags', 'keywords', 'dc.subject', 'dcterms.subject'],
  image_url: ['twitter:image', 'twitter:image:src', 'thumbnail', 'thumbnailurl'],
  url: [],
};

export const openGraphArticleExtractor: ArticleExtractor = {
  source: 'opengraph',
  extract(page: Page): ArticleCandidate[] {
    const fields = readTags(page, OPEN_GRAPH);
    return Object.keys(fields).length === 0 ? [] : [{ source: 'opengraph', locator: 'head > meta[property^="og:"], meta[property^="article:"]', scope: 'page', fields }];
  },
};

export const metaArticleExtractor: ArticleExtractor = {
  source: 'meta',
  extract(page: Page): ArticleCandidate[] {
    const fields = readTags(page, PLAIN);
    if (fields.title === undefined) {
      const title = page.elements.find((el) => el.name === 'title');
      const text = title === undefined ? '' : cleanText(visibleText(title) || title.children.map((c) => ('data' in c ? c.data : '')).join(''));
      if (text !== '') fields.title = { value: text, locator: 'title' };
    }
    const lang = page.elements.find((el) => el.name === 'html')?.attribs['lang'];
    const equiv = page.elements.find((el) => el.name === 'meta' && /^content-language$/i.test(el.attribs['http-equiv'] ?? ''))?.attribs['content'];
    // The document's own language is stated on <html>; a meta tag only when that says nothing.
    if (lang !== undefined && cleanText(lang) !== '') fields.language = { value: cleanText(lang), locator: 'html[lang]' };
    else if (fields.language === undefined && equiv !== undefined && cleanText(equiv) !== '')
      fields.language = { value: cleanText(equiv), locator: 'meta[http-equiv="content-language"]' };
    // The article lives at its canonical URL; without one, og:url (Open Graph's candidate) names it, and
    // only a page that states neither is known by the address it was read from.
    const own = page.canonical ?? (page.metaContent('og:url') === undefined ? absoluteUrl(page.url, page.url) : null);
    if (own !== null) fields.url = { value: own, locator: page.canonical === null ? 'the page URL' : 'link[rel="canonical"]' };
    return [{ source: 'meta', locator: 'head', scope: 'page', fields }];
  },
};

function readTags(page: Page, table: TagTable): ArticleCandidateFields {
  const fields: ArticleCandidateFields = {};
  const all = (key: string): MetaTag[] => page.meta.filter((m) => m.key === key);
  const firstOf = (keys: readonly string[]): MetaTag | undefined => {
    for (const key of keys) {
      const found = page.meta.find((m) => m.key === key);
      if (found !== undefined) return found;
    }
    return undefined;
  };
  for (const [field, keys] of Object.entries(table.text) as Array<[TextField, readonly string[]]>) {
    const found = firstOf(keys);
    if (found !== undefined) fields[field] = located(found, found.content);
  }
  for (const field of ['authors', 'tags'] as const) {
    for (const key of table[field]) {
      const tags = all(key);
      if (tags.length === 0) continue;
      // One tag of comma-separated words ("keywords"), or one tag per value (article:tag).
      const values = tags
        .flatMap((t) => (field === 'tags' ? t.content.split(',') : [t.content]))
        .map(cleanText)
        .filter((v) => v !== '');
      if (values.length > 0) fields[field] = located(tags[0]!, values);
      break;
    }
  }
  for (const field of ['image_url', 'url'] as const) {
    const found = firstOf(table[field]);
    const url = found === undefined ? null : absoluteUrl(found.content, page.url);
    if (found !== undefined && url !== null) fields[field] = located(found, url);
  }
  return fields;
}

function located<T>(found: MetaTag, value: T): Located<T> {
  return { value, locator: `meta[${found.el.attribs['property'] !== undefined ? 'property' : 'name'}="${found.key}"]` };
}
