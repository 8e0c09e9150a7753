// Articles as feeds any reader can follow: Atom 1.0, RSS 2.0 and JSON Feed 1.1, written by feedsmith from the same entries. Pure (its writer is loaded on first use).
import type { Article } from './article-schema.js';
import { publishedInstant } from './article-store.js';

export type FeedFormat = 'atom' | 'rss' | 'json';

export const FEED_MEDIA: Record<FeedFormat, string> = {
  atom: 'application/atom+xml; charset=utf-8',
  rss: 'application/rss+xml; charset=utf-8',
  json: 'application/feed+json; charset=utf-8',
};

export interface FeedContext {
  /** The feed's own URL as requested (its query kept): its identity and rel="self". */
  selfUrl: string;
  /** The same feed in the other formats, by format. */
  alternates: Record<FeedFormat, string>;
  /** A page for people: the dashboard's list of these articles. */
  homeUrl: string;
  title: string;
  description: string;
  /** When the newest entry was stored: a feed's own updated time. */
  now: Date;
}

/**
 * XML 1.0 allows neither most control characters nor lone surrogates, and a page's text may hold
 * them: left in, one article would make the whole feed unreadable.
 */
const NOT_XML = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;
const xmlText = (text: string): string => text.replace(NOT_XML, '');
const xmlOptional = (text: string | null): string | undefined => (text === null || text === '' ? undefined : xmlText(text));

/** What every format says of one article, its times as instants (a stated local time or bare date read as UTC). */
interface Entry {
  id: string;
  url: string;
  title: string;
  summary: string | undefined;
  html: string | undefined;
  text: string | undefined;
  image: string | undefined;
  authors: string[];
  categories: string[];
  language: string | undefined;
  published: Date | undefined;
  updated: Date;
}

const latest = (a: string | null, b: string | null): string | null => (a === null ? b : b === null ? a : a > b ? a : b);

function entryOf(article: Article): Entry {
  const published = publishedInstant(article.published_at);
  const modified = publishedInstant(article.modified_at);
  return {
    id: article.url,
    url: article.url,
    title: xmlText(article.title),
    summary: xmlOptional(article.description),
    html: xmlOptional(article.body_html),
    text: xmlOptional(article.body),
    image: article.image_url ?? undefined,
    authors: article.authors.map(xmlText),
    categories: [...new Set([...(article.section === null ? [] : [article.section]), ...article.tags])].map(xmlText),
    language: article.language ?? undefined,
    published: published === null ? undefined : new Date(published),
    // When it last changed as the page says (never before it was published: a bare date reads as
    // midnight), else when it was published, else when it was stored.
    updated: new Date(latest(modified, published) ?? article.updated_at),
  };
}

/**
 * feedsmith pretty-prints, and puts a value holding & < or > in CDATA on a line of its own: XML keeps
 * that whitespace as part of the value (an Atom id or an RSS link with spaces around it). The value
 * is put back against its tags; nothing else changes.
 */
const tidy = (xml: string): string => xml.replace(/>\n[ \t]*<!\[CDATA\[/g, '><![CDATA[').replace(/\]\]>\n[ \t]*<\//g, ']]></');

export async function buildFeed(format: FeedFormat, articles: readonly Article[], context: FeedContext): Promise<string> {
  // Loaded on the first feed asked for, not at start (about 0.15 s and 19 MB).
  const { generateAtomFeed, generateJsonFeed, generateRssFeed } = await import('feedsmith');
  const entries = articles.map(entryOf);
  const updated = entries.length === 0 ? context.now : new Date(entries.reduce((latest, e) => Math.max(latest, e.updated.getTime()), -Infinity));
  switch (format) {
    case 'atom':
      return tidy(
        generateAtomFeed({
          id: context.selfUrl,
          title: { value: xmlText(context.title) },
          subtitle: { value: xmlText(context.description) },
          updated,
          // An Atom feed needs an author where its entries lack one: the aggregator that collected them.
          authors: [{ name: 'data-aggregator' }],
          generator: { text: 'data-aggregator' },
          links: [
            { href: context.selfUrl, rel: 'self', type: 'application/atom+xml' },
            { href: context.homeUrl, rel: 'alternate', type: 'text/html' },
            { href: context.alternates.rss, rel: 'alternate', type: 'application/rss+xml' },
            { href: context.alternates.json, rel: 'alternate', type: 'application/feed+json' },
          ],
          entries: entries.map((e) => ({
            id: e.id,
            title: { value: e.title },
            updated: e.updated,
            ...(e.published === undefined ? {} : { published: e.published }),
            links: [{ href: e.url, rel: 'alternate', type: 'text/html' }],
            ...(e.authors.length === 0 ? {} : { authors: e.authors.map((name) => ({ name })) }),
            ...(e.categories.length === 0 ? {} : { categories: e.categories.map((term) => ({ term })) }),
            ...(e.summary === undefined ? {} : { summary: { value: e.summary, type: 'text' } }),
            ...(e.html === undefined ? {} : { content: { value: e.html, type: 'html' } }),
          })),
        }),
      );
    case 'rss':
      return tidy(
        generateRssFeed({
          title: xmlText(context.title),
          link: context.homeUrl,
          description: xmlText(context.description),
          lastBuildDate: updated,
          generator: 'data-aggregator',
          docs: 'https://www.rssboard.org/rss-specification',
          atom: { links: [{ href: context.selfUrl, rel: 'self', type: 'application/rss+xml' }] },
          items: entries.map((e) => ({
            title: e.title,
            link: e.url,
            guid: { value: e.id, isPermaLink: true },
            ...(e.published === undefined ? {} : { pubDate: e.published }),
            ...(e.summary === undefined ? {} : { description: e.summary }),
            // RSS's <author> is an email address; names go in Dublin Core's creator, as feeds do.
            ...(e.authors.length === 0 ? {} : { dc: { creators: e.authors } }),
            ...(e.categories.length === 0 ? {} : { categories: e.categories.map((name) => ({ name })) }),
            ...(e.html === undefined ? {} : { content: { encoded: e.html } }),
          })),
        }),
      );
    case 'json':
      return JSON.stringify(
        generateJsonFeed({
          // The same text as the XML feeds and the entries carry: JSON could escape the controls, but
          // an unpaired surrogate has no UTF-8 form, and strict readers refuse the feed for it.
          title: xmlText(context.title),
          description: xmlText(context.description),
          home_page_url: context.homeUrl,
          feed_url: context.selfUrl,
          items: entries.map((e) => ({
            id: e.id,
            url: e.url,
            title: e.title,
            // An item needs content: the text when it was read, else what is known of it.
            ...(e.html === undefined ? { content_text: e.text ?? e.summary ?? e.title } : { content_html: e.html }),
            ...(e.summary === undefined ? {} : { summary: e.summary }),
            ...(e.image === undefined ? {} : { image: e.image }),
            ...(e.published === undefined ? {} : { date_published: e.published }),
            date_modified: e.updated,
            ...(e.authors.length === 0 ? {} : { authors: e.authors.map((name) => ({ name })) }),
            ...(e.categories.length === 0 ? {} : { tags: e.categories }),
            ...(e.language === undefined ? {} : { language: e.language }),
          })),
        }),
      );
  }
}
