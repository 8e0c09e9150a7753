// Articles end to end on a news site of our own: a front page's teasers stored, a crawl filling their text in, revisions with diffs, the list, exports, errors, events and the write path's one transaction.
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { Webhook as Verifier } from 'standardwebhooks';
import type { Database } from '../../src/db/database.js';
import type { App } from '../../src/http/base-app.js';
import { assertProblem, backends, warnIfNoPostgres, openService, type OpenService } from '../helpers.js';
import { until } from '../wait.js';
import { startNewsSite, storyText, type NewsSite, type Story } from './news-site.js';

warnIfNoPostgres();

const ENV = { SCRAPE_ALLOW_PRIVATE_NETWORKS: 'true', WEBHOOK_RETRY_DELAYS_MS: '200', WEBHOOK_TIMEOUT_MS: '2000', WORKER_CONCURRENCY: '4' };

const STORIES: Story[] = [
  {
    slug: 'sea-wall',
    title: 'Sea wall cracks after the storm',
    paragraphs: storyText('the sea wall'),
    summary: 'Engineers inspect the damage along the front.',
    authors: ['Jane Doe', 'Ali Khan'],
    published: '2024-03-05T09:30:00+01:00',
    language: 'en-GB',
    section: 'Local',
    tags: ['storm', 'coast'],
  },
  {
    slug: 'bridge',
    title: 'Old bridge reopens after eleven weeks',
    paragraphs: storyText('the old bridge'),
    summary: 'Traffic is back on the single-lane bridge.',
    authors: ['Sam Roe'],
    published: '2024-03-04T08:00:00+01:00',
    language: 'en-GB',
    section: 'Transport',
    tags: ['roads'],
  },
  {
    slug: 'rowing',
    title: 'Rowing club wins the regional title',
    paragraphs: storyText('the rowing club'),
    summary: 'A late surge in the final race sealed it.',
    authors: ['Jane Doe'],
    published: '2024-03-03T18:00:00+01:00',
    language: 'en-GB',
    section: 'Sport',
    tags: ['rowing'],
  },
];

/** A product page whose "next" link is a story: one run that stores a product and an article together. */
const SHOP_PAGE = (next: string) => `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Storm kettle</title>
<link rel="next" href="${next}">
<script type="application/ld+json">{"@context":"https://schema.org","@type":"Product","name":"Storm kettle","sku":"SK-1","offers":{"@type":"Offer","price":"24.50","priceCurrency":"GBP","availability":"https://schema.org/InStock"}}</script>
</head><body><h1>Storm kettle</h1><p class="price">£24.50</p><button>Add to basket</button></body></html>`;

/**
 * Reads a text stream until what was read satisfies `enough`, and answers it; fails naming `what`,
 * with the text read, if the stream ends first or the hang guard runs out: an event that never comes
 * fails the test instead of holding the suite.
 */
async function readUntil(reader: ReadableStreamDefaultReader<string>, enough: (text: string) => boolean, what: string, withinMs = 30_000): Promise<string> {
  let text = '';
  let timer: NodeJS.Timeout | undefined;
  const guard = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`gave up waiting for ${what} (hang guard ${withinMs} ms); read: ${JSON.stringify(text.slice(-2000))}`)), withinMs);
  });
  try {
    while (!enough(text)) {
      const { value, done } = await Promise.race([reader.read(), guard]);
      if (done) throw new Error(`the stream ended before ${what}; read: ${JSON.stringify(text.slice(-2000))}`);
      text += value;
    }
    return text;
  } finally {
    clearTimeout(timer);
  }
}

async function startReceiver() {
  const received: Array<{ headers: IncomingMessage['headers']; body: string }> = [];
  const server: Server = createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => (body += chunk));
    req.on('end', () => {
      received.push({ headers: req.headers, body });
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    received,
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

for (const backend of backends()) {
  describe(`articles API on ${backend.name}`, () => {
    let site: NewsSite;
    let app: App;
    let db: Database;
    let opened: OpenService;
    const scrape = (url: string, more: object = {}) => app.inject({ method: 'POST', url: '/scrape', payload: { url, ...more } });
    const events = async (query: string) =>
      (await app.inject({ url: `/events${query}` })).json() as Array<{ id: number; type: string; article_id: number | null; data: Record<string, unknown> }>;

    before(async () => {
      site = await startNewsSite(STORIES.map((s) => ({ ...s })));
      ({ app } = opened = await openService(backend, ENV, { work: true }));
      opened.own(site);
      db = opened.db;
    });
    after(() => opened.close());

    test('POST /scrape of a front page stores its teasers as articles without a body; a crawl reads each story and fills its text in', async () => {
      const res = await scrape(site.url);
      assert.equal(res.statusCode, 200, res.body);
      const listed = res.json();
      assert.deepEqual([listed.page_type, listed.count, listed.articles.length, listed.articles_created, listed.articles_updated], ['article-list', 0, 3, 3, 0]);
      assert.ok(listed.articles.every((a: { body: string | null; id: number }) => a.body === null && a.id > 0));
      assert.deepEqual(
        listed.articles.map((a: { url: string }) => a.url),
        STORIES.map((s) => site.storyUrl(s.slug)),
      );
      const log = (await app.inject({ url: `/scrape-logs/${listed.log_id}` })).json();
      assert.deepEqual([log.article_count, log.articles_created, log.articles.length, log.articles[0].has_body], [3, 3, 3, false]);

      // A crawl from the front page follows the teasers to the stories.
      const job = (
        await app.inject({
          method: 'POST',
          url: '/jobs',
          payload: { url: site.url, crawl: { max_pages: 10, exclude: ['/section/**', '/authors/**', '/news/elsewhere-*'] } },
        })
      ).json();
      const done = await until('the crawl to end', async () => {
        const now = (await app.inject({ url: `/jobs/${job.id}` })).json();
        return now.status === 'succeeded' || now.status === 'failed' ? now : undefined;
      });
      assert.equal(done.status, 'succeeded', JSON.stringify(done));
      assert.equal(done.progress.articles_found, 6, 'three teasers and three stories');
      assert.equal(done.progress.articles_created + done.progress.articles_updated, 6);
      assert.equal(done.progress.articles_created, 0, 'the same articles, not new ones');
      const read = (await app.inject({ url: '/articles?has_body=true&sort=id' })).json();
      assert.deepEqual(
        read.map((a: { id: number }) => a.id),
        listed.articles.map((a: { id: number }) => a.id),
      );
      for (const article of read) {
        assert.match(article.body, /^Paragraph 1 about /);
        assert.ok(article.word_count > 100);
        assert.equal(article.language, 'en-GB');
      }
      assert.deepEqual(read[0].authors, ['Jane Doe', 'Ali Khan']);
      assert.equal(read[0].published_at, '2024-03-05T09:30:00+01:00');
      assert.equal(read[0].section, 'Local');
      // A teaser seen again on the front page never took a body away (the crawl read the front page first and last alike).
      assert.equal((await app.inject({ url: '/articles?has_body=false' })).json().length, 0);
      const filled = await events('?type=article.updated');
      assert.deepEqual(
        filled
          .filter((e) => e.data.body_filled === true)
          .map((e) => e.article_id)
          .sort(),
        listed.articles.map((a: { id: number }) => a.id).sort(),
      );
      const crawlLog = (await app.inject({ url: `/scrape-logs/${job.id}` })).json();
      assert.equal(crawlLog.article_count, 6);
      assert.equal(crawlLog.articles.filter((a: { has_body: boolean }) => a.has_body).length, 3);
    });

    test('a changed story read again adds a revision with a diff; read unchanged it adds none; the event says what changed', async () => {
      const url = site.storyUrl('sea-wall');
      const first = (await scrape(url)).json().articles[0];
      const before = (await app.inject({ url: `/articles/${first.id}/revisions` })).json();
      const story = site.stories.get('sea-wall')!;
      story.title = 'Sea wall collapses after the storm';
      story.paragraphs = [story.paragraphs[0]!, `${story.paragraphs[1]!} The road will stay closed until Friday.`, ...story.paragraphs.slice(2)];
      const second = (await scrape(url)).json();
      assert.deepEqual([second.articles_created, second.articles_updated, second.articles[0].id], [0, 1, first.id]);
      await scrape(url);
      const after = await app.inject({ url: `/articles/${first.id}/revisions` });
      assert.equal(after.statusCode, 200);
      const body = after.json();
      assert.equal(body.total, before.total + 1, 'one revision for the change, none for the unchanged read');
      assert.equal(after.headers['x-total-count'], String(body.total));
      const last = body.revisions.at(-1);
      assert.deepEqual(last.changed, ['title', 'body']);
      assert.deepEqual(last.diff.title, [
        { op: 'equal', text: 'Sea wall ' },
        { op: 'delete', text: 'cracks' },
        { op: 'insert', text: 'collapses' },
        { op: 'equal', text: ' after the storm' },
      ]);
      const inserted = last.diff.body.filter((p: { op: string }) => p.op === 'insert').map((p: { text: string }) => p.text);
      assert.deepEqual(
        inserted.map((t: string) => t.trim()),
        ['The road will stay closed until Friday.'],
      );
      assert.equal(last.diff.body.filter((p: { op: string }) => p.op === 'delete').length, 0);
      // equal + insert parts read the new body.
      assert.equal(
        last.diff.body
          .filter((p: { op: string }) => p.op !== 'delete')
          .map((p: { text: string }) => p.text)
          .join(''),
        last.body,
      );
      const [updated] = (await events(`?article_id=${first.id}&type=article.updated&order=desc&limit=1`)).slice(-1);
      assert.deepEqual(
        [updated!.data.changed, updated!.data.old_title, updated!.data.title],
        [['title', 'body'], 'Sea wall cracks after the storm', 'Sea wall collapses after the storm'],
      );
      // Paged: the page's first revision still has its diff against the one before it.
      const paged = await app.inject({ url: `/articles/${first.id}/revisions?limit=1&offset=${body.total - 1}` });
      assert.deepEqual(paged.json().revisions[0].diff, last.diff);
      assert.match(String(paged.headers.link), /rel="prev"/);
    });

    test('a page of 100 revisions of a 9 KB story rewritten every time answers every diff, each reading back both versions exactly', async () => {
      const url = site.storyUrl('sea-wall');
      const article = (await scrape(url)).json().articles[0];
      // Every version a different shuffle of the same words: diffs that run into their bounds.
      const words = Array.from({ length: 1500 }, (_, i) => `w${(i * 7919) % 1009}`);
      const version = (n: number) =>
        Array.from({ length: 12 }, (_, p) =>
          words
            .slice((n * 37 + p * 101) % 1375)
            .slice(0, 125)
            .join(' '),
        ).join('\n\n');
      await db.query(
        `INSERT INTO article_revisions (article_id, title, body, changed)
         SELECT $1, 'Version ' || n, (($2::jsonb) ->> n), ARRAY['title', 'body'] FROM generate_series(0, 100) AS n`,
        [article.id, JSON.stringify(Array.from({ length: 101 }, (_, n) => version(n)))],
      );
      const page = await app.inject({ url: `/articles/${article.id}/revisions?limit=100&offset=2` });
      assert.equal(page.statusCode, 200);
      const { revisions } = page.json() as { revisions: Array<{ body: string; diff: { body: Array<{ op: string; text: string }> | null } }> };
      assert.equal(revisions.length, 100);
      let before: string | undefined;
      for (const revision of revisions) {
        const diff = revision.diff.body ?? [];
        const side = (skip: string) =>
          diff
            .filter((p) => p.op !== skip)
            .map((p) => p.text)
            .join('');
        assert.equal(side('delete'), revision.body);
        if (before !== undefined) assert.equal(side('insert'), before);
        before = revision.body;
      }
    });

    test('GET /articles pages with X-Total-Count and Link, filters and searches; GET /articles/{id} answers provenance', async () => {
      const page = await app.inject({ url: '/articles?limit=2' });
      assert.equal(page.statusCode, 200);
      assert.equal(page.headers['x-total-count'], '3');
      assert.equal(page.headers.link, '</articles?limit=2&offset=2>; rel="next"');
      assert.deepEqual(
        page.json().map((a: { title: string }) => a.title),
        ['Sea wall collapses after the storm', 'Old bridge reopens after eleven weeks'],
      );
      const last = await app.inject({ url: '/articles?limit=2&offset=2' });
      assert.equal(last.headers.link, '</articles?limit=2&offset=0>; rel="prev"');
      assert.deepEqual(
        (await app.inject({ url: '/articles?q=rowing%20regional' })).json().map((a: { title: string }) => a.title),
        ['Rowing club wins the regional title'],
      );
      assert.equal((await app.inject({ url: '/articles?author=jane%20doe&limit=10' })).headers['x-total-count'], '2');
      assert.equal((await app.inject({ url: `/articles?site=${encodeURIComponent(site.url)}&language=en` })).json().length, 3);
      assert.equal((await app.inject({ url: '/articles?published_since=2024-03-04T07:00:00Z' })).json().length, 2);
      const [one] = (await app.inject({ url: '/articles?q=bridge' })).json();
      const detail = (await app.inject({ url: `/articles/${one.id}` })).json();
      assert.equal(detail.provenance.page_type, 'article');
      assert.equal(detail.provenance.fields.body.source, 'article-body');
      assert.equal(detail.provenance.fields.title.source, 'json-ld');
      assert.ok(detail.last_seen_at);
    });

    test('bad input is a 422 naming the parameter; an unknown article a 404; DELETE answers what it deleted, then 404', async () => {
      for (const [query, field] of [
        ['sort=price', 'sort'],
        ['limit=0', 'limit'],
        ['limit=1001', 'limit'],
        ['offset=-1', 'offset'],
        ['language=not%20a%20tag', 'language'],
        ['published_since=yesterday', 'published_since'],
        ['has_body=maybe', 'has_body'],
        ['q=', 'q'],
        ['colour=red', 'colour'],
      ] as const) {
        const problem = assertProblem(await app.inject({ url: `/articles?${query}` }), 422);
        assert.ok(JSON.stringify(problem.errors).includes(field), `${query}: ${JSON.stringify(problem.errors)}`);
      }
      assertProblem(await app.inject({ url: '/articles/feed.xml?limit=500' }), 422);
      assertProblem(await app.inject({ url: '/articles/abc' }), 422);
      assertProblem(await app.inject({ url: '/articles/0/revisions' }), 422);
      assert.match(assertProblem(await app.inject({ url: '/articles/999999' }), 404).detail, /Article 999999 does not exist/);
      assertProblem(await app.inject({ url: '/articles/999999/revisions' }), 404);
      assertProblem(await app.inject({ method: 'DELETE', url: '/articles/999999' }), 404);
      const made = (await scrape(site.storyUrl('bridge'))).json().articles[0];
      const deleted = await app.inject({ method: 'DELETE', url: `/articles/${made.id}` });
      assert.deepEqual(deleted.json(), { id: made.id, deleted: true });
      assertProblem(await app.inject({ url: `/articles/${made.id}` }), 404);
      // Read again, it is stored anew.
      const again = (await scrape(site.storyUrl('bridge'))).json();
      assert.equal(again.articles_created, 1);
    });

    test('exports: CSV with lists joined and formula-looking cells defused, NDJSON line per article, both as the JSON list', async () => {
      site.stories.set('formula', {
        ...STORIES[0]!,
        slug: 'formula',
        title: '=HYPERLINK("https://evil.example","Click")',
        authors: ['+Plus Author', 'Jane Doe'],
        tags: ['-minus', 'plain'],
        listed: false,
      });
      const made = (await scrape(site.storyUrl('formula'))).json().articles[0];
      const csv = await app.inject({ url: `/articles?q=${encodeURIComponent('sea wall')}&sort=id`, headers: { accept: 'text/csv' } });
      assert.match(String(csv.headers['content-type']), /^text\/csv/);
      const lines = csv.body.split('\r\n');
      assert.equal(
        lines[0],
        'id,url,title,body,body_html,description,authors,published_at,modified_at,language,site_name,image_url,section,tags,word_count,source_url,created_at,updated_at',
      );
      assert.ok(csv.body.includes(`${made.id},${made.url},"'=HYPERLINK(""https://evil.example"",""Click"")"`), csv.body.slice(0, 2000));
      assert.ok(csv.body.includes("'+Plus Author; Jane Doe"), 'the authors cell is joined and defused');
      assert.ok(csv.body.includes("'-minus; plain"));
      const nd = await app.inject({ url: '/articles?sort=id', headers: { accept: 'application/x-ndjson' } });
      assert.match(String(nd.headers['content-type']), /^application\/x-ndjson/);
      const rows = nd.body
        .trimEnd()
        .split('\n')
        .map((line) => JSON.parse(line));
      assert.deepEqual(rows, (await app.inject({ url: '/articles?sort=id' })).json());
      assert.equal(nd.headers['x-total-count'], String(rows.length));
      const pagedCsv = await app.inject({ url: '/articles?limit=1', headers: { accept: 'text/csv' } });
      assert.equal(pagedCsv.body.trimEnd().split('\r\n').length, 2);
    });

    test('the write path is one transaction: when storing the article fails, the product the same run found is not stored, no event is written, the log says why', async () => {
      site.pages.set('/shop/kettle', SHOP_PAGE(site.storyUrl('rowing')));
      const eventsBefore = (await events('?limit=1000')).length;
      // A fault at the very end of the run's writes: the article store meets an error from the database.
      await db.exec(`CREATE FUNCTION refuse_article() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'article store down'; END $$;
        CREATE TRIGGER refuse_article BEFORE INSERT OR UPDATE ON articles FOR EACH ROW EXECUTE FUNCTION refuse_article();`);
      try {
        const failed = await scrape(`${site.url}shop/kettle`, { max_pages: 2 });
        assert.equal(failed.statusCode, 500, failed.body);
        assert.doesNotMatch(failed.body, /article store down/, 'the database error stays in the log, not the answer');
        assert.doesNotMatch(failed.body, /at .*\.(ts|js):\d+/);
        assert.equal((await app.inject({ url: '/products?q=kettle' })).json().length, 0, 'the product was rolled back with the article');
        assert.equal((await events('?limit=1000')).length, eventsBefore);
        const [log] = (await app.inject({ url: '/scrape-logs?limit=1' })).json();
        assert.equal(log.status, 'failed');
      } finally {
        await db.exec('DROP TRIGGER refuse_article ON articles; DROP FUNCTION refuse_article();');
      }
      // The same run with the store back: the product and the article, stored together.
      const okRes = await scrape(`${site.url}shop/kettle`, { max_pages: 2 });
      assert.equal(okRes.statusCode, 200, okRes.body);
      const ok = okRes.json();
      assert.deepEqual([ok.pages, ok.count, ok.articles.length], [2, 1, 1]);
      assert.equal(ok.products[0].title, 'Storm kettle');
      assert.equal(ok.articles[0].title, 'Rowing club wins the regional title');
      const written = await events(`?after=0&limit=1000`);
      assert.ok(written.some((e) => e.type === 'product.created'));
    });

    test('article events reach the live stream and a signed webhook, as product events do', async () => {
      const receiver = await startReceiver();
      opened.own(receiver);
      const hook = (await app.inject({ method: 'POST', url: '/webhooks', payload: { url: receiver.url, events: ['article.created', 'article.updated'] } })).json();
      await app.listen({ port: 0, host: '127.0.0.1' });
      const base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
      const controller = new AbortController();
      const stream = await fetch(`${base}/events/stream?type=article.created`, { signal: controller.signal });
      assert.equal(stream.status, 200);
      site.stories.set('lifeboat', { ...STORIES[1]!, slug: 'lifeboat', title: 'Lifeboat crew honoured', listed: false });
      const made = (await scrape(site.storyUrl('lifeboat'))).json().articles[0];
      // The stream's first event: this article's creation.
      const reader = stream.body!.pipeThrough(new TextDecoderStream()).getReader();
      // Blocks without an event (a comment that opens the stream) are skipped.
      const blocks = (text: string) =>
        text.split('\n\n').map((block) =>
          Object.fromEntries(
            block
              .split('\n')
              .filter((l) => /^(id|event|data):/.test(l))
              .map((l) => [l.slice(0, l.indexOf(':')), l.slice(l.indexOf(':') + 1).trim()]),
          ),
        );
      const read = await readUntil(reader, (text) => text.endsWith('\n\n') && blocks(text).some((b) => b.event !== undefined), 'the article.created event on the stream').finally(
        () => controller.abort(),
      );
      const fields = blocks(read).find((b) => b.event !== undefined)!;
      assert.equal(fields.event, 'article.created');
      assert.equal(JSON.parse(fields.data!).article_id, made.id);
      const delivery = await until('the webhook delivery', () => receiver.received.find((r) => JSON.parse(r.body).data.article_id === made.id));
      const payload = new Verifier(hook.secret).verify(delivery.body, delivery.headers as Record<string, string>) as { type: string; data: Record<string, unknown> };
      assert.equal(payload.type, 'article.created');
      assert.deepEqual(payload.data.article, {
        id: made.id,
        title: 'Lifeboat crew honoured',
        url: made.url,
        published_at: made.published_at,
        site_name: made.site_name,
        word_count: made.word_count,
      });
      assert.equal(payload.data.product_id, undefined);
    });
  });
}
