// The article feeds as a feed reader meets them: Atom 1.0, RSS 2.0 and JSON Feed 1.1, well-formed, valid by their specifications, read back by maintained parsers, filterable like the list.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { parseFeed as readFeed } from '@rowanmanning/feed-parser';
import { Ajv } from 'ajv';
import addFormats from 'ajv-formats';
import { XMLParser, XMLValidator } from 'fast-xml-parser';
import { parseAtomFeed, parseJsonFeed, parseRssFeed } from 'feedsmith';
import type { App } from '../../src/http/base-app.js';
import { backends, assertProblem, warnIfNoPostgres, openService, type OpenService } from '../helpers.js';
import { startNewsSite, storyText, type NewsSite, type Story } from './news-site.js';

warnIfNoPostgres();

const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:\d{2})$/;
const RFC822 = /^(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun), \d{2} (?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) \d{4} \d{2}:\d{2}:\d{2} (?:GMT|[+-]\d{4})$/;

/** JSON Feed 1.1 (https://jsonfeed.org/version/1.1) as a JSON Schema: what the specification requires and the types it gives. */
const JSON_FEED_1_1 = {
  type: 'object',
  required: ['version', 'title', 'items'],
  properties: {
    version: { const: 'https://jsonfeed.org/version/1.1' },
    title: { type: 'string' },
    home_page_url: { type: 'string', format: 'uri' },
    feed_url: { type: 'string', format: 'uri' },
    description: { type: 'string' },
    authors: { $ref: '#/$defs/authors' },
    language: { type: 'string' },
    items: {
      type: 'array',
      items: {
        type: 'object',
        required: ['id'],
        anyOf: [{ required: ['content_html'] }, { required: ['content_text'] }],
        properties: {
          id: { type: 'string', minLength: 1 },
          url: { type: 'string', format: 'uri' },
          title: { type: 'string' },
          content_html: { type: 'string' },
          content_text: { type: 'string' },
          summary: { type: 'string' },
          image: { type: 'string', format: 'uri' },
          date_published: { type: 'string', format: 'date-time' },
          date_modified: { type: 'string', format: 'date-time' },
          authors: { $ref: '#/$defs/authors' },
          tags: { type: 'array', items: { type: 'string' } },
          language: { type: 'string' },
        },
      },
    },
  },
  $defs: {
    authors: {
      type: 'array',
      items: { type: 'object', anyOf: [{ required: ['name'] }, { required: ['url'] }, { required: ['avatar'] }], properties: { name: { type: 'string' } } },
    },
  },
};
const ajv = new Ajv({ allErrors: true, strict: false });
addFormats.default(ajv);
const validJsonFeed = ajv.compile(JSON_FEED_1_1);

/** The XML as written, values untrimmed: whitespace inside an Atom id or an RSS link would be part of the value. */
const xml = new XMLParser({
  ignoreAttributes: false,
  attributeNamePrefix: '@',
  trimValues: false,
  isArray: (name) => ['entry', 'item', 'link', 'author', 'category', 'dc:creator'].includes(name),
});
const textOf = (node: unknown): string => {
  const one = Array.isArray(node) ? (node.length === 1 ? node[0] : undefined) : node;
  return typeof one === 'string' ? one : String((one as { '#text'?: unknown } | undefined)?.['#text'] ?? '');
};

const STORY: Story = {
  slug: 'storm',
  title: 'Storm closes the harbour road',
  paragraphs: storyText('the harbour road'),
  summary: 'Waves broke over the road overnight.',
  authors: ['Jane Doe', 'Ali Khan'],
  published: '2024-03-05T09:30:00+01:00',
  modified: '2024-03-05T11:00:00+01:00',
  language: 'en-GB',
  section: 'Local',
  tags: ['storm', 'roads'],
};

for (const backend of backends()) {
  describe(`article feeds on ${backend.name}`, () => {
    let site: NewsSite;
    let app: App;
    let opened: OpenService;
    const feed = (path: string) => app.inject({ url: path, headers: { host: 'aggregator.example:8000' } });

    before(async () => {
      site = await startNewsSite([
        STORY,
        {
          ...STORY,
          slug: 'hostile',
          // Characters XML cannot carry, a CDATA end, markup and an ampersand, in the title and the text.
          title: 'Tom & Jerry <script>alert(1)</script> ]]> \u0001bell\u0008',
          paragraphs: [...storyText('odd characters'), 'A line with ]]> and \u000b a vertical tab & <b>tags</b>.'],
          authors: ['Zoë O’Brien'],
          published: '2024-03-04',
        },
        { ...STORY, slug: 'listed-only', title: 'Ferry timetable changes next week', published: '2024-03-01T12:00:00', listed: true },
      ]);
      ({ app } = opened = await openService(backend, { SCRAPE_ALLOW_PRIVATE_NETWORKS: 'true', ALLOWED_HOSTS: 'aggregator.example' }));
      opened.own(site);
      // The front page stores all three as entries; two stories are read, the third stays an entry without a body.
      for (const url of [site.url, site.storyUrl('storm'), site.storyUrl('hostile')]) {
        const res = await app.inject({ method: 'POST', url: '/scrape', payload: { url } });
        assert.equal(res.statusCode, 200, res.body);
      }
    });
    after(() => opened.close());

    test('Atom 1.0: well-formed, the elements RFC 4287 requires, exact ids and links, RFC 3339 dates; read back by two parsers', async () => {
      const res = await feed('/articles/feed.xml?site=127.0.0.1&limit=50');
      assert.equal(res.statusCode, 200);
      assert.equal(res.headers['content-type'], 'application/atom+xml; charset=utf-8');
      assert.equal(XMLValidator.validate(res.body), true);
      const doc = xml.parse(res.body).feed;
      assert.equal(doc['@xmlns'], 'http://www.w3.org/2005/Atom');
      assert.equal(textOf(doc.id), 'http://aggregator.example:8000/articles/feed.xml?site=127.0.0.1&limit=50');
      assert.match(textOf(doc.updated), RFC3339);
      assert.ok(textOf(doc.title).length > 0);
      assert.ok(doc.author.length > 0, 'a feed author, as entries may lack one');
      const self = doc.link.find((l: Record<string, string>) => l['@rel'] === 'self');
      assert.equal(self['@href'], 'http://aggregator.example:8000/articles/feed.xml?site=127.0.0.1&limit=50');
      assert.equal(doc.entry.length, 3);
      const articles = (await app.inject({ url: '/articles?site=127.0.0.1' })).json() as Array<{ url: string; title: string; body: string | null }>;
      for (const [i, entry] of doc.entry.entries()) {
        assert.equal(textOf(entry.id), articles[i]!.url, 'the id is the article URL, no whitespace around it');
        assert.match(textOf(entry.updated), RFC3339);
        if (entry.published !== undefined) assert.match(textOf(entry.published), RFC3339);
        assert.equal(entry.link.filter((l: Record<string, string>) => l['@rel'] === 'alternate').length, 1);
        assert.equal(entry.link[0]['@href'], articles[i]!.url);
      }
      // A feed reader's view (@rowanmanning/feed-parser), and feedsmith's.
      const read = readFeed(res.body);
      assert.equal(read.meta.type, 'atom');
      assert.deepEqual(
        read.items.map((item) => item.title),
        articles.map((a) => a.title.replace(/[\u0001\u0008]/g, '')),
      );
      assert.deepEqual(
        read.items[0]!.authors.map((a) => a.name),
        ['Jane Doe', 'Ali Khan'],
      );
      assert.equal(read.items[0]!.published?.toISOString(), '2024-03-05T08:30:00.000Z');
      assert.equal(read.items[0]!.updated?.toISOString(), '2024-03-05T10:00:00.000Z');
      assert.deepEqual(
        read.items[0]!.categories.map((c) => c.term),
        ['Local', 'storm', 'roads'],
      );
      assert.match(read.items[0]!.content ?? '', /<p>Paragraph 1 about the harbour road/);
      const parsed = parseAtomFeed(res.body);
      assert.equal(parsed.entries?.length, 3);
      // The hostile story: its markup is text in the title, its forbidden characters gone, its CDATA end kept.
      const hostile = read.items.find((item) => item.title?.startsWith('Tom & Jerry'));
      assert.equal(hostile?.title, 'Tom & Jerry <script>alert(1)</script> ]]> bell');
      assert.match(hostile?.content ?? '', /A line with \]\]> and {2}a vertical tab/);
      // The text's markup stays text: escaped in the sanitized HTML the feed carries.
      assert.ok(res.body.includes('vertical tab &amp; &lt;b&gt;tags&lt;/b&gt;.'));
      assert.doesNotMatch(res.body, /[\u0001\u0008\u000b]/);
    });

    test('RSS 2.0: well-formed, channel title, link and description, a guid and RFC 822 date per item, authors as dc:creator, atom:link self', async () => {
      const res = await feed('/articles/feed.rss');
      assert.equal(res.statusCode, 200);
      assert.equal(res.headers['content-type'], 'application/rss+xml; charset=utf-8');
      assert.equal(XMLValidator.validate(res.body), true);
      const rss = xml.parse(res.body).rss;
      assert.equal(rss['@version'], '2.0');
      const channel = rss.channel;
      for (const field of ['title', 'link', 'description']) assert.ok(textOf(channel[field]).length > 0, field);
      assert.equal(textOf(channel.link), 'http://aggregator.example:8000/ui/articles');
      assert.match(textOf(channel.lastBuildDate), RFC822);
      assert.equal([channel['atom:link']].flat()[0]['@rel'], 'self');
      assert.equal(channel.item.length, 3);
      for (const item of channel.item) {
        assert.equal(textOf(item.guid), textOf(item.link), 'the guid is the permalink, exactly');
        assert.equal(item.guid['@isPermaLink'], 'true');
        assert.doesNotMatch(textOf(item.link), /\s/);
        if (item.pubDate !== undefined) assert.match(textOf(item.pubDate), RFC822);
        assert.equal(item.author, undefined, 'RSS <author> is an email address: names go in dc:creator');
      }
      const read = readFeed(res.body);
      assert.equal(read.meta.type, 'rss');
      const storm = read.items.find((item) => item.title === 'Storm closes the harbour road')!;
      assert.deepEqual(
        storm.authors.map((a) => a.name),
        ['Jane Doe', 'Ali Khan'],
      );
      assert.equal(storm.published?.toISOString(), '2024-03-05T08:30:00.000Z');
      assert.equal(storm.url, site.storyUrl('storm'));
      const parsed = parseRssFeed(res.body);
      assert.equal(parsed.items?.length, 3);
      assert.match(parsed.items?.find((i) => i.title === 'Storm closes the harbour road')?.content?.encoded ?? '', /<p>Paragraph 1/);
    });

    test('JSON Feed 1.1: valid against the specification, content for every item (its text, else what is known), RFC 3339 dates', async () => {
      const res = await feed('/articles/feed.json');
      assert.equal(res.statusCode, 200);
      assert.equal(res.headers['content-type'], 'application/feed+json; charset=utf-8');
      const body = res.json() as { feed_url: string; items: Array<Record<string, unknown>> };
      assert.ok(validJsonFeed(body), JSON.stringify(validJsonFeed.errors));
      assert.equal(body.feed_url, 'http://aggregator.example:8000/articles/feed.json');
      const storm = body.items.find((i) => i.title === 'Storm closes the harbour road')!;
      assert.deepEqual(storm.authors, [{ name: 'Jane Doe' }, { name: 'Ali Khan' }]);
      assert.equal(storm.date_published, '2024-03-05T08:30:00.000Z');
      assert.equal(storm.language, 'en-GB');
      assert.match(String(storm.content_html), /<p>Paragraph 1/);
      const entryOnly = body.items.find((i) => i.title === 'Ferry timetable changes next week')!;
      assert.equal(entryOnly.content_html, undefined);
      assert.equal(entryOnly.content_text, 'Waves broke over the road overnight.', "the teaser's summary stands for its text");
      assert.equal(entryOnly.date_published, '2024-03-01T12:00:00.000Z', 'a local time without an offset reads as UTC');
      assert.equal(parseJsonFeed(res.body).items?.length, 3);
    });

    test('feeds filter like the list: one site, one search, a few entries; newest first; bad filters are 422', async () => {
      const searched = (await feed('/articles/feed.json?q=harbour%20road')).json();
      assert.deepEqual(
        searched.items.map((i: { title: string }) => i.title),
        ['Storm closes the harbour road'],
      );
      assert.match(searched.title, /matching “harbour road”/);
      const elsewhere = readFeed((await feed('/articles/feed.xml?site=elsewhere.example')).body);
      assert.deepEqual(elsewhere.items, []);
      const two = (await feed('/articles/feed.json?limit=2')).json();
      assert.deepEqual(
        two.items.map((i: { title: string }) => i.title.slice(0, 11)),
        ['Storm close', 'Tom & Jerry'],
      );
      const nobody = (await feed('/articles/feed.rss?has_body=false')).body;
      assert.deepEqual(
        readFeed(nobody).items.map((i) => i.title),
        ['Ferry timetable changes next week'],
      );
      assertProblem(await feed('/articles/feed.json?limit=0'), 422);
      assertProblem(await feed('/articles/feed.rss?sort=id'), 422);
      assertProblem(await feed('/articles/feed.xml?published_since=soon'), 422);
    });
  });
}
