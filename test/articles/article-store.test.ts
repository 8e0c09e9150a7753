// The article store and its write path, run against every relational backend: identity, the merge of a listing's entries with the article's own page, filters, order, search, revisions and events.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Article } from '../../src/articles/article-schema.js';
import { createArticleStore, type ArticleStore } from '../../src/articles/article-store.js';
import type { Database } from '../../src/db/database.js';
import { createPgBossQueue } from '../../src/queue/pgboss-queue.js';
import { createArticleRecorder, type ArticleRecorder, type RecordedArticles } from '../../src/recording/article-recorder.js';
import type { ExtractedArticle } from '../../src/scraping/extract/types.js';
import { toScrapedArticle } from '../../src/scraping/store-page.js';
import { createTagStore } from '../../src/tags/tag-store.js';
import { createArticleRevisions, type ArticleRevisions } from '../../src/tracking/article-revisions.js';
import { createTracker, type RunRef } from '../../src/tracking/tracking-store.js';
import { createWebhookDeliveries } from '../../src/tracking/webhook-deliveries.js';
import { createWebhookStore } from '../../src/tracking/webhook-store.js';
import { backends, warnIfNoPostgres } from '../helpers.js';

warnIfNoPostgres();

/** An article as extraction answers it, with what a test says. */
function extracted(fields: Partial<ExtractedArticle> & { title: string }): ExtractedArticle {
  return {
    url: null,
    body: null,
    body_html: null,
    description: null,
    authors: [],
    published_at: null,
    modified_at: null,
    language: null,
    site_name: null,
    image_url: null,
    section: null,
    tags: [],
    word_count: fields.body === undefined || fields.body === null ? null : fields.body.split(/\s+/).length,
    provenance: { title: { source: 'json-ld', locator: '$.headline' } },
    ...fields,
  };
}

const story = (url: string, title: string, body: string, more: Partial<ExtractedArticle> = {}) =>
  extracted({
    url,
    title,
    body,
    body_html: `<p>${body}</p>`,
    ...more,
    provenance: { title: { source: 'json-ld', locator: '$.headline' }, body: { source: 'article-body', locator: 'article' } },
  });
const entry = (url: string, title: string, more: Partial<ExtractedArticle> = {}) =>
  extracted({ url, title, ...more, provenance: { title: { source: 'article-list', locator: 'h3 a' }, description: { source: 'article-list', locator: 'p' } } });

for (const backend of backends()) {
  describe(`article store on ${backend.name}`, () => {
    let db: Database;
    let store: ArticleStore;
    let revisions: ArticleRevisions;
    let recorder: ArticleRecorder;
    let runs = 0;

    /** Stores what one run saw on one page (`page`: its own article, or a listing's entries), as the pipeline does. */
    const record = (page: { url: string; type: 'article' | 'article-list' }, articles: ExtractedArticle[], source = page.url): Promise<RecordedArticles> => {
      const run: RunRef = { id: `run-${++runs}`, source, kind: 'scrape' };
      const items = articles.flatMap((a) => toScrapedArticle(a, { url: page.url, page_type: page.type }) ?? []);
      return db.transaction((tx) => recorder.recordArticles(items, run, tx));
    };
    const list = async (query: Record<string, unknown>) => (await store.list(query)).items.map((a) => a.title);

    before(async () => {
      db = await backend.open();
      store = createArticleStore(db);
      revisions = createArticleRevisions(db);
      const tracker = createTracker(db, { goneAfterRuns: 3 });
      // No webhook listens in these tests: the fan-out finds none and queues nothing.
      const deliveries = createWebhookDeliveries({ webhooks: createWebhookStore(db), queue: createPgBossQueue({ db, schema: 'pgboss' }) });
      recorder = createArticleRecorder({ articles: store, revisions, tracker, deliveries, tags: createTagStore(db) });
    });
    after(async () => {
      await db.close();
    });

    test('an article is stored once per canonical URL: a re-scrape under another spelling of its URL updates it', async () => {
      const first = await record({ url: 'https://gazette.example/news/pier?utm_source=x', type: 'article' }, [
        story('https://Gazette.example/news/pier/?utm_source=feed#top', 'Pier reopens', 'The pier reopened on Monday.'),
      ]);
      assert.deepEqual([first.created, first.updated], [1, 0]);
      const again = await record({ url: 'https://gazette.example/news/pier', type: 'article' }, [
        story('https://gazette.example/news/pier', 'Pier reopens', 'The pier reopened on Monday.'),
      ]);
      assert.deepEqual([again.created, again.updated, again.articles[0]!.id], [0, 1, first.articles[0]!.id]);
      const stored = await store.get(first.articles[0]!.id);
      assert.equal(stored?.url, 'https://gazette.example/news/pier');
      assert.equal(stored?.provenance?.page_type, 'article');
      assert.ok(stored?.last_seen_at);
    });

    test("a listing's entry never takes a body away, only fills what is unknown; the article's own page wins", async () => {
      const url = 'https://gazette.example/news/tide';
      const listing = { url: 'https://gazette.example/', type: 'article-list' as const };
      const [made] = (await record(listing, [entry(url, 'Tide record', { description: 'Teaser text', image_url: 'https://gazette.example/tide.jpg' })])).articles;
      assert.equal(made!.body, null);
      // Its page read: title, body and metadata from the page; the teaser's image kept as the page states none.
      await record({ url, type: 'article' }, [
        story(url, 'Highest tide in forty years', 'The tide reached 6.1 metres.', { authors: ['Jane Doe'], published_at: '2024-03-05T09:30:00+01:00' }),
      ]);
      // The listing again, with a shortened headline and no body: it changes nothing that is known.
      await record(listing, [entry(url, 'Tide record', { description: 'Another teaser', published_at: '2024-03-01' })]);
      const stored = await store.get(made!.id);
      assert.equal(stored?.title, 'Highest tide in forty years');
      assert.equal(stored?.body, 'The tide reached 6.1 metres.');
      assert.equal(stored?.body_html, '<p>The tide reached 6.1 metres.</p>');
      assert.equal(stored?.description, 'Teaser text');
      assert.equal(stored?.image_url, 'https://gazette.example/tide.jpg');
      assert.deepEqual(stored?.authors, ['Jane Doe']);
      assert.equal(stored?.published_at, '2024-03-05T09:30:00+01:00');
      // Provenance follows the values kept: the body from the page, the image from the listing.
      assert.equal(stored?.provenance?.fields.body?.source, 'article-body');
      assert.equal(stored?.provenance?.fields.title?.source, 'json-ld');
      assert.equal(stored?.provenance?.page_type, 'article');
    });

    test('revisions are kept per change of title or body only, with article.created and article.updated events saying what changed', async () => {
      const url = 'https://gazette.example/news/ferry';
      const listing = { url: 'https://gazette.example/', type: 'article-list' as const };
      const created = await record(listing, [entry(url, 'Ferry delayed')]);
      assert.deepEqual(
        created.events.map((e) => [e.type, e.article_id, e.product_id, e.data.has_body]),
        [['article.created', created.articles[0]!.id, null, false]],
      );
      const id = created.articles[0]!.id;
      const filled = await record({ url, type: 'article' }, [story(url, 'Ferry delayed', 'The morning ferry left two hours late.')]);
      assert.deepEqual(
        filled.events.map((e) => [e.type, e.data.changed, e.data.body_filled]),
        [['article.updated', ['body'], true]],
      );
      // Seen as it was: no revision, no event.
      assert.deepEqual((await record({ url, type: 'article' }, [story(url, 'Ferry delayed', 'The morning ferry left two hours late.')])).events, []);
      const edited = await record({ url, type: 'article' }, [story(url, 'Ferry cancelled', 'The morning ferry did not sail.')]);
      assert.deepEqual(
        edited.events.map((e) => [e.type, e.data.changed, e.data.old_title, e.data.title]),
        [['article.updated', ['title', 'body'], 'Ferry delayed', 'Ferry cancelled']],
      );
      const page = await revisions.list(id, { limit: 10, offset: 0 });
      assert.deepEqual(
        page?.revisions.map((r) => [r.number, r.title, r.body, r.changed]),
        [
          [1, 'Ferry delayed', null, []],
          [2, 'Ferry delayed', 'The morning ferry left two hours late.', ['body']],
          [3, 'Ferry cancelled', 'The morning ferry did not sail.', ['title', 'body']],
        ],
      );
      // A later page carries the revision before it, for its diff.
      const second = await revisions.list(id, { limit: 1, offset: 2 });
      assert.deepEqual([second?.before?.number, second?.revisions.map((r) => r.number), second?.total], [2, [3], 3]);
      assert.equal(await revisions.list(999_999, { limit: 10, offset: 0 }), undefined);
    });

    test('an article in a language without a stemmer on this server (Estonian before PostgreSQL 16), or none known, is stored and found by its words', async () => {
      const url = 'https://uudised.example/tallinn';
      const stored = await record({ url, type: 'article' }, [story(url, 'Tallinna sadam avati taas', 'Sadam avati pärast tormi uuesti.', { language: 'et' })]);
      assert.equal(stored.created, 1);
      assert.deepEqual(
        (await store.list({ q: 'sadam' })).items.map((a) => a.url),
        [url],
      );
      const odd = await record({ url: `${url}-2`, type: 'article' }, [story(`${url}-2`, 'Tokipona', 'toki pona li pona', { language: 'tok' })]);
      assert.equal(odd.created, 1);
      assert.equal((await store.list({ q: 'pona', language: 'tok' })).total, 1);
    });

    describe('lists', () => {
      let ids: Record<string, number>;
      before(async () => {
        await db.exec('TRUNCATE articles RESTART IDENTITY CASCADE');
        const sites = { gazette: 'https://news.gazette.example', courier: 'https://www.courier.example' };
        // One after another: the ids follow this order.
        const runsInOrder = [
          () =>
            record({ url: `${sites.gazette}/a`, type: 'article' }, [
              story(`${sites.gazette}/a`, 'Flooding closes the coast road', 'Heavy rain flooded three villages overnight.', {
                language: 'en-GB',
                site_name: 'Harbour Gazette',
                authors: ['Jane Doe'],
                published_at: '2024-03-05T09:30:00+01:00',
              }),
            ]),
          () =>
            record({ url: `${sites.gazette}/b`, type: 'article' }, [
              story(`${sites.gazette}/b`, 'Council budget approved', 'The council voted on the budget; a flood defence fund was added.', {
                language: 'en',
                site_name: 'Harbour Gazette',
                authors: ['Ali Khan', 'JANE DOE'],
                published_at: '2024-03-06',
              }),
            ]),
          () =>
            record({ url: `${sites.courier}/c`, type: 'article' }, [
              story(`${sites.courier}/c`, 'Der Deich hält dem Sturm stand', 'Die Deiche an der Küste haben dem Hochwasser standgehalten.', {
                language: 'de',
                site_name: 'Küstenkurier',
                published_at: '2024-03-04T18:00:00',
              }),
            ]),
          () => record({ url: `${sites.courier}/d`, type: 'article' }, [story(`${sites.courier}/d`, 'Undated notice', 'Floods are expected on Sunday.', { site_name: 'Courier' })]),
          () => record({ url: `${sites.courier}/`, type: 'article-list' }, [entry(`${sites.courier}/e`, 'A teaser about floods', { published_at: '2024-03-01', language: 'en' })]),
        ];
        const stored: RecordedArticles[] = [];
        for (const run of runsInOrder) stored.push(await run());
        ids = Object.fromEntries(stored.map((r) => [r.articles[0]!.title, r.articles[0]!.id]));
      });

      test('newest first by default, undated last; published_at ascending keeps undated last; id both ways', async () => {
        const dated = ['Council budget approved', 'Flooding closes the coast road', 'Der Deich hält dem Sturm stand', 'A teaser about floods'];
        assert.deepEqual(await list({}), [...dated, 'Undated notice']);
        assert.deepEqual(await list({ sort: 'published_at' }), [...dated.reverse(), 'Undated notice']);
        const byId = Object.entries(ids)
          .sort((a, b) => a[1] - b[1])
          .map(([title]) => title);
        assert.deepEqual(await list({ sort: 'id' }), byId);
        assert.deepEqual(await list({ sort: '-id' }), [...byId].reverse());
      });

      test('paged with a total; the total counts every match, the page holds at most limit', async () => {
        const page = await store.list({ limit: 2, offset: 1 });
        assert.deepEqual([page.total, page.items.map((a) => a.title)], [5, ['Flooding closes the coast road', 'Der Deich hält dem Sturm stand']]);
        assert.equal((await store.list({ limit: 2, offset: 4 })).total, 5);
        assert.equal((await store.list({ limit: 2, offset: 1, has_body: true })).total, 4);
      });

      test('filters: site by host, parent domain or name; author in any case; language by base or exact tag; dates; body; source', async () => {
        assert.deepEqual(await list({ site: 'gazette.example', sort: 'id' }), ['Flooding closes the coast road', 'Council budget approved']);
        assert.deepEqual(await list({ site: 'https://www.news.gazette.example/anything', sort: 'id' }), ['Flooding closes the coast road', 'Council budget approved']);
        assert.deepEqual(await list({ site: 'küstenkurier' }), ['Der Deich hält dem Sturm stand']);
        assert.deepEqual(await list({ site: 'gazette' }), []);
        assert.deepEqual(await list({ author: 'jane doe', sort: 'id' }), ['Flooding closes the coast road', 'Council budget approved']);
        assert.deepEqual(await list({ language: 'en', sort: 'id' }), ['Flooding closes the coast road', 'Council budget approved', 'A teaser about floods']);
        assert.deepEqual(await list({ language: 'EN-gb' }), ['Flooding closes the coast road']);
        // A stated offset as stated; a local time and a bare date read as UTC.
        assert.deepEqual(await list({ published_since: '2024-03-05T08:30:00Z' }), ['Council budget approved', 'Flooding closes the coast road']);
        assert.deepEqual(await list({ published_since: '2024-03-05T08:30:01Z' }), ['Council budget approved']);
        assert.deepEqual(await list({ published_before: '2024-03-04T18:00:01Z' }), ['Der Deich hält dem Sturm stand', 'A teaser about floods']);
        assert.deepEqual(await list({ has_body: false }), ['A teaser about floods']);
        assert.deepEqual(await list({ source_url: 'https://www.courier.example' }), ['A teaser about floods']);
      });

      test("q is full-text search in each article's own language: stemmed English and German, words as written where the language is unknown", async () => {
        // "flood" finds flooding, flooded and floods in the English articles (stemmed), and the teaser's "floods".
        assert.deepEqual(new Set(await list({ q: 'flood' })), new Set(['Flooding closes the coast road', 'Council budget approved', 'A teaser about floods']));
        // The undated notice has no language: its words match only as written.
        assert.ok((await list({ q: 'Floods' })).includes('Undated notice'));
        assert.ok((await list({ q: 'flooding' })).includes('Flooding closes the coast road'));
        // German: "Deich" finds "Deiche" (the German stemmer), and the English stemmer's reading does not leak into German text.
        assert.deepEqual(await list({ q: 'Deich' }), ['Der Deich hält dem Sturm stand']);
        assert.deepEqual(await list({ q: 'hochwassers' }), ['Der Deich hält dem Sturm stand']);
        // Web-search syntax: a phrase, an excluded word.
        assert.deepEqual(await list({ q: '"coast road"' }), ['Flooding closes the coast road']);
        assert.deepEqual(await list({ q: 'flood -council' }).then((t) => t.sort()), ['A teaser about floods', 'Flooding closes the coast road']);
        assert.deepEqual(await list({ q: 'nothing-like-this' }), []);
        // Stop words alone and punctuation find nothing rather than fail.
        assert.deepEqual(await list({ q: '"""' }), []);
      });

      test('with q and no sort, best matches first: in the title before the body; with a sort, that order; the total counts the matches', async () => {
        const ranked = await store.list({ q: 'flood', limit: 1 });
        assert.equal(ranked.total, 3);
        assert.deepEqual(
          (await list({ q: 'flood' })).slice(0, 2).sort(),
          ['A teaser about floods', 'Flooding closes the coast road'],
          'title matches first, the body-only match last',
        );
        assert.equal((await list({ q: 'flood' }))[2], 'Council budget approved');
        assert.deepEqual(await list({ q: 'flood', sort: 'id' }), ['Flooding closes the coast road', 'Council budget approved', 'A teaser about floods']);
      });

      test('listAll reads every match batch by batch in the order of the pages, ranked searches included', async () => {
        for (const query of [{}, { sort: 'id' as const }, { sort: 'published_at' as const }, { q: 'flood' }, { q: 'flood', sort: '-id' as const }]) {
          const { total, first, rest } = await store.listAll(query, 2);
          const all: Article[] = [...first];
          for await (const batch of rest ?? []) all.push(...batch);
          const pages = (await store.list(query)).items;
          assert.deepEqual(
            all.map((a) => a.id),
            pages.map((a) => a.id),
            JSON.stringify(query),
          );
          assert.equal(total, pages.length);
        }
      });

      test('delete removes the article and its revisions; its events stay, no longer pointing at it', async () => {
        const id = ids['Undated notice']!;
        assert.equal(await store.delete(id), true);
        assert.equal(await store.get(id), undefined);
        assert.equal(await store.delete(id), false);
        assert.equal(await revisions.list(id, { limit: 10, offset: 0 }), undefined);
        const [count] = await db.query<{ n: number }>('SELECT count(*)::int AS n FROM article_revisions WHERE article_id = $1', [id]);
        assert.equal(count?.n, 0);
        const [orphans] = await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM events WHERE type = 'article.created' AND article_id IS NULL`);
        assert.equal(orphans?.n, 1);
      });
    });
  });
}
