// The article feeds under hostile text, through validators: control characters, CDATA ends, unpaired surrogates, non-characters and bidi controls in titles, bodies, authors and the feed's own title leave every Atom and RSS feed well-formed XML 1.0 (saxes, a conforming parser) with the elements their specifications require, and every JSON Feed valid 1.1 with only well-formed strings; readers read the text back, its allowed characters whole.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { parseFeed as readFeed } from '@rowanmanning/feed-parser';
import { XMLParser } from 'fast-xml-parser';
import { SaxesParser } from 'saxes';
import { buildFeed, type FeedContext, type FeedFormat } from '../../src/articles/article-feeds.js';
import type { Article } from '../../src/articles/article-schema.js';
import type { App } from '../../src/http/base-app.js';
import type { Database } from '../../src/db/database.js';
import { backends, warnIfNoPostgres, openService, type OpenService } from '../helpers.js';
import { startNewsSite, storyText } from './news-site.js';

warnIfNoPostgres();

/**
 * Text a page or a bad write could hold. Right-to-left marks and overrides, isolates, an emoji and
 * markup are text a feed must carry as it is; C0 controls, U+FFFE/U+FFFF and unpaired surrogates are
 * characters XML 1.0 cannot carry at all, and the high surrogate before a whole pair must go without
 * breaking the pair.
 */
const HOSTILE =
  'Talks \u202Eelbat\u202C \u200F\u05E9\u05DC\u05D5\u05DD\u200F \u2067isolated\u2069 ]]> ]]]]> <b>&amp;</b> \u0000\u0001\u0008\u000B\u000C\u001Fbells \uFFFE\uFFFF lone \uD800 high \uDC00 low, 🙂 and \uD83D🙂';
/** The same with what XML cannot carry taken out, and nothing else changed. */
const CARRIED = 'Talks \u202Eelbat\u202C \u200F\u05E9\u05DC\u05D5\u05DD\u200F \u2067isolated\u2069 ]]> ]]]]> <b>&amp;</b> bells  lone  high  low, 🙂 and 🙂';
const HOSTILE_HTML = `<p>${HOSTILE.replaceAll('<b>&amp;</b>', '&lt;b&gt;&amp;amp;&lt;/b&gt;')}</p>`;

/** saxes' complaints about `text` as XML 1.0: characters it may not hold, bad CDATA, anything not well-formed. */
function xmlProblems(text: string): string[] {
  const problems: string[] = [];
  const parser = new SaxesParser({ xmlns: true, position: true });
  parser.on('error', (error) => problems.push(error.message));
  parser.write(text).close();
  return problems;
}

const xml = new XMLParser({ ignoreAttributes: false, attributeNamePrefix: '@', isArray: (name) => ['entry', 'item', 'link', 'author'].includes(name) });
const textOf = (node: unknown): string => {
  const one = Array.isArray(node) ? (node.length === 1 ? node[0] : undefined) : node;
  return typeof one === 'string' ? one : String((one as { '#text'?: unknown } | undefined)?.['#text'] ?? '');
};
const filled = (node: unknown) => node !== undefined && textOf(node).trim() !== '';

/** RFC 4287: a feed has one id, title and updated, an author unless every entry has one; an entry an id, title, updated, and a link or content. */
function atomProblems(body: string): string[] {
  const feed = xml.parse(body).feed;
  if (feed?.['@xmlns'] !== 'http://www.w3.org/2005/Atom') return ['not an Atom feed'];
  const problems = ['id', 'title', 'updated'].filter((name) => !filled(feed[name])).map((name) => `feed without ${name}`);
  const entries: Array<Record<string, unknown>> = feed.entry ?? [];
  if (feed.author === undefined && entries.some((e) => e.author === undefined)) problems.push('an entry without an author in a feed without one');
  for (const [i, entry] of entries.entries()) {
    for (const name of ['id', 'title', 'updated']) if (!filled(entry[name])) problems.push(`entry ${i} without ${name}`);
    const links = (entry.link as Array<Record<string, string>> | undefined) ?? [];
    if (entry.content === undefined && !links.some((l) => (l['@rel'] ?? 'alternate') === 'alternate')) problems.push(`entry ${i} without content or an alternate link`);
  }
  return problems;
}

/** RSS 2.0: a channel has a title, link and description; an item a title or a description. */
function rssProblems(body: string): string[] {
  const rss = xml.parse(body).rss;
  if (rss?.['@version'] !== '2.0') return ['not RSS 2.0'];
  const problems = ['title', 'link', 'description'].filter((name) => !filled(rss.channel?.[name])).map((name) => `channel without ${name}`);
  for (const [i, item] of ((rss.channel?.item as Array<Record<string, unknown>> | undefined) ?? []).entries()) {
    if (!filled(item.title) && !filled(item.description)) problems.push(`item ${i} without a title or description`);
  }
  return problems;
}

const UNPAIRED = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** JSON Feed 1.1: version, title and items; an item an id and content_html or content_text; and, JSON being UTF-8 text, no unpaired surrogate in any string. */
function jsonFeedProblems(body: string): string[] {
  const feed = JSON.parse(body);
  const problems: string[] = [];
  if (feed.version !== 'https://jsonfeed.org/version/1.1') problems.push('not JSON Feed 1.1');
  if (typeof feed.title !== 'string') problems.push('no title');
  if (!Array.isArray(feed.items)) return [...problems, 'no items'];
  for (const [i, item] of feed.items.entries()) {
    if (typeof item.id !== 'string' || item.id === '') problems.push(`item ${i} without an id`);
    if (typeof item.content_html !== 'string' && typeof item.content_text !== 'string') problems.push(`item ${i} without content`);
  }
  const walk = (value: unknown, path: string): void => {
    if (typeof value === 'string' && UNPAIRED.test(value)) problems.push(`${path} has an unpaired surrogate`);
    else if (value !== null && typeof value === 'object') for (const [key, inner] of Object.entries(value)) walk(inner, `${path}/${key}`);
  };
  walk(feed, '');
  return problems;
}

/**
 * Every check of `format` on `body`; answers the feed's title and its entries' titles as the
 * document states them (the XML's text, entities and CDATA read; a feed reader's own reading may
 * decode HTML in them too). A feed reader reads every entry.
 */
function validated(format: FeedFormat, body: string): { title: string; entries: string[] } {
  if (format === 'json') {
    assert.deepEqual(jsonFeedProblems(body), []);
    const feed = JSON.parse(body);
    return { title: feed.title, entries: feed.items.map((item: { title: string }) => item.title) };
  }
  assert.deepEqual(xmlProblems(body), [], 'well-formed XML 1.0');
  assert.deepEqual(format === 'atom' ? atomProblems(body) : rssProblems(body), []);
  const read = readFeed(body);
  assert.equal(read.meta.type, format);
  const doc = xml.parse(body);
  const { title, entries } = format === 'atom' ? { title: doc.feed.title, entries: doc.feed.entry ?? [] } : { title: doc.rss.channel.title, entries: doc.rss.channel.item ?? [] };
  assert.equal(read.items.length, entries.length, 'the reader reads every entry');
  return { title: textOf(title), entries: entries.map((entry: { title: unknown }) => textOf(entry.title)) };
}

const FORMATS: FeedFormat[] = ['atom', 'rss', 'json'];

const article = (id: number, text: string): Article => ({
  id,
  url: `https://news.example/story-${id}`,
  title: text,
  body: text,
  body_html: `<p>${text}</p>`,
  description: text,
  authors: [text],
  published_at: '2024-03-05T09:30:00+01:00',
  modified_at: null,
  language: 'he',
  site_name: text,
  image_url: null,
  section: text,
  tags: [text],
  word_count: 3,
  source_url: null,
  created_at: '2024-03-05T09:31:00.000Z',
  updated_at: '2024-03-05T09:31:00.000Z',
});

const CONTEXT: FeedContext = {
  selfUrl: 'https://aggregator.example/articles/feed.xml',
  alternates: { atom: 'https://aggregator.example/articles/feed.xml', rss: 'https://aggregator.example/articles/feed.rss', json: 'https://aggregator.example/articles/feed.json' },
  homeUrl: 'https://aggregator.example/ui/articles',
  title: `Articles matching “${HOSTILE}”`,
  description: HOSTILE,
  now: new Date('2024-03-06T00:00:00Z'),
};

for (const format of FORMATS) {
  test(`${format}: hostile text in every field of an entry and in the feed's title stays a valid feed; the reader gets the text minus what the format cannot carry`, async () => {
    const body = await buildFeed(format, [article(1, HOSTILE), article(2, 'A plain story')], CONTEXT);
    assert.deepEqual(validated(format, body), { title: `Articles matching “${CARRIED}”`, entries: [CARRIED, 'A plain story'] });
  });
}

for (const backend of backends()) {
  describe(`article feeds with hostile stored text on ${backend.name}`, () => {
    let app: App;
    let db: Database;
    let opened: OpenService;
    let id: number;

    before(async () => {
      const site = await startNewsSite([
        {
          slug: 'talks',
          title: 'Talks resume',
          paragraphs: storyText('the talks'),
          summary: 'They met.',
          authors: ['Dana Levi'],
          published: '2024-03-05T09:30:00+01:00',
          language: 'he',
          section: 'World',
          tags: [],
        },
      ]);
      ({ app } = opened = await openService(backend, { SCRAPE_ALLOW_PRIVATE_NETWORKS: 'true' }));
      opened.own(site);
      db = opened.db;
      const res = await app.inject({ method: 'POST', url: '/scrape', payload: { url: site.storyUrl('talks') } });
      assert.equal(res.statusCode, 200, res.body);
      id = res.json().articles[0].id;
      // Past the scraper's own cleaning, straight into the store: the feed writer must hold on its own.
      await db.query('UPDATE articles SET title = $2, body = $3, body_html = $4, description = $2, authors = $5, section = $2 WHERE id = $1', [
        id,
        HOSTILE.replace('\u0000', ''),
        HOSTILE.replace('\u0000', ''),
        HOSTILE_HTML.replace('\u0000', ''),
        [HOSTILE.replace('\u0000', '')],
      ]);
    });
    after(() => opened.close());

    for (const [format, path] of [
      ['atom', '/articles/feed.xml'],
      ['rss', '/articles/feed.rss'],
      ['json', '/articles/feed.json'],
    ] as const) {
      test(`${path}: the stored hostile article and a hostile search in the feed's title give a valid ${format} feed`, async () => {
        const stored = (await app.inject({ url: `/articles/${id}` })).json().title as string;
        const plain = await app.inject({ url: path });
        assert.equal(plain.statusCode, 200);
        // What the database keeps of an unpaired surrogate (U+FFFD, or nothing) the feed carries as it is.
        assert.deepEqual(validated(format, plain.body).entries, [stored.replace(/[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]/g, '')]);
        const searched = await app.inject({ url: `${path}?q=${encodeURIComponent('talks \u202E\u0001]]> \uFFFF')}` });
        assert.equal(searched.statusCode, 200, searched.body);
        assert.equal(validated(format, searched.body).title, 'Articles matching “talks \u202E]]> ”');
      });
    }
  });
}
