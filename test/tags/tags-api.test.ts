// Tags (watch lists) on products and sources, given by scrapes, jobs, crawls and schedules, and the CSV import of URLs to watch.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startFixtureSite, type FixtureSite } from '../fixtures/site.js';
import { assertProblem, backends, type mainServiceOn, warnIfNoPostgres, openService, type OpenService } from '../helpers.js';
import { until } from '../wait.js';

warnIfNoPostgres();

for (const backend of backends()) {
  describe(`tags and watch lists on ${backend.name}`, () => {
    let app: Awaited<ReturnType<typeof mainServiceOn>>['app'];
    let site: FixtureSite;
    let opened: OpenService;

    before(async () => {
      site = await startFixtureSite({ catalogue: { pages: 2, perPage: 4 } });
      app = (opened = await openService(backend, { SCRAPE_ALLOW_PRIVATE_NETWORKS: 'true', SCRAPE_OBEY_ROBOTS: 'false', DEMO_SITE_URL: `${site.url}books/` }, { work: true })).app;
      opened.own(site);
    });
    after(() => opened.close());

    const send = (method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, payload?: unknown) =>
      app.inject({ method, url, ...(payload === undefined ? {} : { payload: payload as object }) });

    test("a product's tags: PUT replaces, POST adds, DELETE removes one; names are trimmed and lower-cased; GET /products?tag= filters", async () => {
      const lamp = (await send('POST', '/products', { title: 'Desk lamp', price: 30 })).json();
      const chair = (await send('POST', '/products', { title: 'Chair', price: 80 })).json();
      assert.deepEqual((await send('PUT', `/products/${lamp.id}/tags`, { tags: ['Office ', 'LIGHTING', 'office'] })).json(), { product_id: lamp.id, tags: ['lighting', 'office'] });
      assert.deepEqual((await send('POST', `/products/${chair.id}/tags`, { tags: ['office'] })).json().tags, ['office']);
      assert.deepEqual((await send('POST', `/products/${chair.id}/tags`, { tags: ['seating'] })).json().tags, ['office', 'seating']);
      assert.deepEqual((await send('GET', `/products/${lamp.id}`)).json().tags, ['lighting', 'office'], 'the product shows its tags');
      const office = await send('GET', '/products?tag=Office');
      assert.equal(office.headers['x-total-count'], '2');
      assert.deepEqual(
        office.json().map((p: { title: string }) => p.title),
        ['Desk lamp', 'Chair'],
      );
      assert.deepEqual((await send('DELETE', `/products/${lamp.id}/tags/office`)).json().tags, ['lighting']);
      assert.deepEqual(
        (await send('GET', '/products?tag=office')).json().map((p: { title: string }) => p.title),
        ['Chair'],
      );
      assert.deepEqual((await send('PUT', `/products/${chair.id}/tags`, { tags: [] })).json().tags, []);
      const tags = (await send('GET', '/tags')).json();
      assert.deepEqual(
        tags.map((t: { name: string; products: number }) => [t.name, t.products]),
        [
          ['lighting', 1],
          ['office', 0],
          ['seating', 0],
        ],
      );
      assert.deepEqual((await send('DELETE', '/tags/Seating')).json(), { name: 'seating', deleted: true });
      assertProblem(await send('DELETE', '/tags/seating'), 404);
      assertProblem(await send('DELETE', `/products/${lamp.id}/tags/nope`), 404);
      assertProblem(await send('PUT', '/products/999999/tags', { tags: ['x'] }), 404);
      for (const bad of [['a,b'], ['  '], ['x'.repeat(65)], ['semi;colon'], 'x']) {
        const problem = assertProblem(await send('PUT', `/products/${lamp.id}/tags`, { tags: bad }), 422);
        assert.match(problem.errors[0].path, /^\/body\/tags/);
      }
    });

    test('a scrape with tags tags every product it stores; a source with tags gives them to what its runs collected and will collect', async () => {
      const scraped = await send('POST', '/scrape', { url: `${site.url}books/`, tags: ['Books', 'page one'] });
      assert.equal(scraped.statusCode, 200, scraped.body);
      const ids = scraped.json().products.map((p: { id: number }) => p.id);
      assert.equal(ids.length, 4);
      assert.equal((await send('GET', '/products?tag=books')).headers['x-total-count'], '4');
      assert.deepEqual((await send('GET', `/products/${ids[0]}`)).json().tags, ['books', 'page one']);

      // Set on the source afterwards: what its runs found before gets the tag at once.
      const set = await send('PUT', '/source-tags', { source: `${site.url}books`, tags: ['Catalogue'] });
      assert.equal(set.statusCode, 200, set.body);
      assert.deepEqual(set.json(), { source: `${site.url}books`, tags: ['catalogue'], applied: 4, applied_articles: 0 });
      assert.equal((await send('GET', '/products?tag=catalogue')).headers['x-total-count'], '4');
      assert.deepEqual((await send('GET', '/source-tags')).json()[0].tags, ['catalogue']);
      // A later run of that source tags what it finds (here page 2's books too).
      const second = (await send('POST', '/scrape', { url: `${site.url}books/`, max_pages: 2 })).json();
      assert.equal(second.count, 8);
      assert.equal((await send('GET', '/products?tag=catalogue')).headers['x-total-count'], '8');
      assert.equal((await send('GET', '/products?tag=books')).headers['x-total-count'], '4', "a request's tags stay with that request");
      assert.deepEqual((await send('GET', '/tags/catalogue')).json().sources, [`${site.url}books`]);
      assert.deepEqual((await send('DELETE', `/source-tags?source=${encodeURIComponent(`${site.url}books/`)}`)).json().tags, []);
      assertProblem(await send('DELETE', `/source-tags?source=${encodeURIComponent(`${site.url}books/`)}`), 404);
      assertProblem(await send('POST', '/scrape', { url: `${site.url}books/`, tags: ['bad,tag'] }), 422);
    });

    test("an article's tags: a scrape's and its source's tags reach it; PUT, POST and DELETE; GET /articles?tag=; counted on the tag", async () => {
      const story = `${site.url}pages/news-story.html`;
      const scraped = await send('POST', '/scrape', { url: story, tags: ['News '] });
      assert.equal(scraped.statusCode, 200, scraped.body);
      const [article] = scraped.json().articles;
      assert.ok(article, 'the story is stored as an article');
      assert.deepEqual((await send('GET', `/articles/${article.id}/tags`)).json(), { article_id: article.id, tags: ['news'] });
      const news = await send('GET', '/articles?tag=NEWS');
      assert.equal(news.headers['x-total-count'], '1');
      assert.equal(news.json()[0].id, article.id);
      assert.notDeepEqual(article.tags, ['news'], "the page's own keywords stay apart from the watch-list tags");

      const set = await send('PUT', '/source-tags', { source: story, tags: ['Reading list'] });
      assert.deepEqual(set.json(), { source: story, tags: ['reading list'], applied: 0, applied_articles: 1 });
      assert.deepEqual((await send('POST', `/articles/${article.id}/tags`, { tags: ['harbours'] })).json().tags, ['harbours', 'news', 'reading list']);
      assert.deepEqual((await send('DELETE', `/articles/${article.id}/tags/news`)).json().tags, ['harbours', 'reading list']);
      assert.deepEqual((await send('PUT', `/articles/${article.id}/tags`, { tags: ['Harbours'] })).json().tags, ['harbours']);
      const harbours = (await send('GET', '/tags/harbours')).json();
      assert.deepEqual([harbours.products, harbours.articles], [0, 1]);
      assert.equal((await send('GET', '/articles?tag=news')).headers['x-total-count'], '0');
      // Scraped again, the source still gives its tag.
      await send('POST', '/scrape', { url: story });
      assert.deepEqual((await send('GET', `/articles/${article.id}/tags`)).json().tags, ['harbours', 'reading list']);
      assert.ok((await send('GET', '/articles/feed.json?tag=harbours')).json().items.length === 1, 'a feed of one watch list');

      assertProblem(await send('PUT', '/articles/999999/tags', { tags: ['x'] }), 404);
      assertProblem(await send('DELETE', `/articles/${article.id}/tags/nope`), 404);
      assertProblem(await send('PUT', `/articles/${article.id}/tags`, { tags: ['a,b'] }), 422);
      await send('DELETE', `/source-tags?source=${encodeURIComponent(story)}`);
    });

    test('a crawl job and a schedule give their tags to what they collect', async () => {
      const crawl = await send('POST', '/jobs', { url: `${site.url}books/`, tags: ['crawled'], crawl: { max_pages: 3, include: ['/books/**'] } });
      assert.equal(crawl.statusCode, 202, crawl.body);
      await until('the crawl to end', async () => ['succeeded', 'failed'].includes((await send('GET', `/jobs/${crawl.json().id}`)).json().status));
      assert.equal((await send('GET', `/jobs/${crawl.json().id}`)).json().status, 'succeeded');
      assert.ok(Number((await send('GET', '/products?tag=crawled')).headers['x-total-count']) > 0);
      const schedule = await send('POST', '/schedules', { every_minutes: 600, job: { url: `${site.url}pages/jsonld-product.html`, tags: ['Scheduled'] } });
      assert.equal(schedule.statusCode, 201, schedule.body);
      const run = (await send('POST', `/schedules/${schedule.json().id}/run`)).json();
      await until('the scheduled run to end', async () => (await send('GET', `/jobs/${run.id}`)).json().status === 'succeeded');
      const tagged = (await send('GET', '/products?tag=scheduled')).json();
      assert.equal(tagged.length, 1);
    });

    test('POST /watch-lists/import: each URL a daily schedule with its tags; per-line errors create nothing; sent again it adds tags, not schedules', async () => {
      const csv = [
        'url,tags,name,every_minutes',
        `${site.url}pages/microdata.html,Kitchen;espresso,Espresso machine,`,
        `${site.url}pages/opengraph.html,kitchen,,60`,
        '# a comment line',
        '',
        `${site.url}pages/microdata.html?utm_source=mail,deals,,`,
      ].join('\n');
      const post = (body: string, query = '') => app.inject({ method: 'POST', url: `/watch-lists/import${query}`, payload: body, headers: { 'content-type': 'text/csv' } });
      const dry = await post(csv, '?dry_run=true&tags=Watch');
      assert.equal(dry.statusCode, 200, dry.body);
      assert.equal(dry.json().created.length, 2);
      assert.equal((await send('GET', '/schedules')).headers['x-total-count'], '1', 'a dry run creates nothing (the schedule of the previous test is there)');
      const imported = await post(csv, '?tags=Watch');
      assert.equal(imported.statusCode, 201, imported.body);
      const { created, updated } = imported.json();
      assert.deepEqual(
        created.map((c: { line: number; tags: string[] }) => [c.line, c.tags]),
        [
          [2, ['watch', 'kitchen', 'espresso', 'deals']],
          [3, ['watch', 'kitchen']],
        ],
        "the same page twice is one watch with both lines' tags",
      );
      assert.deepEqual(updated, []);
      const schedule = (await send('GET', `/schedules/${created[0].schedule_id}`)).json();
      assert.equal(schedule.name, 'Espresso machine');
      assert.equal(schedule.every_minutes, 1440, 'daily unless said');
      assert.deepEqual(schedule.job.tags, ['watch', 'kitchen', 'espresso', 'deals']);
      assert.equal((await send('GET', `/schedules/${created[1].schedule_id}`)).json().every_minutes, 60);

      const again = await post(`url,tags\n${site.url}pages/opengraph.html,new-tag\n`);
      assert.equal(again.statusCode, 200, again.body);
      assert.deepEqual(again.json().created, []);
      assert.deepEqual(again.json().updated[0].tags, ['watch', 'kitchen', 'new-tag']);
      assert.deepEqual((await send('GET', `/schedules/${created[1].schedule_id}`)).json().job.tags, ['watch', 'kitchen', 'new-tag']);

      const before = (await send('GET', '/schedules')).headers['x-total-count'];
      const bad = await post(
        [`${site.url}pages/a.html`, 'ftp://files.example/x', `${site.url}pages/b.html,bad\u0001tag`, 'not a url at all', `${site.url}pages/c.html,,,`].join('\n'),
      );
      const problem = assertProblem(bad, 422);
      assert.deepEqual(
        problem.errors.map((e: { path: string }) => e.path),
        ['/body/line/2/url', '/body/line/3/tags', '/body/line/4/url'],
      );
      assert.match(problem.detail, /Nothing was imported: 3 problems/);
      assert.equal((await send('GET', '/schedules')).headers['x-total-count'], before, 'nothing was created');
      const cron = assertProblem(await post(`url,cron\n${site.url}pages/a.html,61 * * * *\n`), 422);
      assert.match(cron.errors[0].path, /^\/body\/line\/2/);
      assertProblem(await post('url,colour\nhttps://shop.example/a,red\n'), 422);
      assertProblem(await post('"unclosed,quote\n'), 422);
      assert.match(assertProblem(await post(''), 422).detail, /holds no URL/);
      assertProblem(await app.inject({ method: 'POST', url: '/watch-lists/import', payload: { url: 'x' } }), 415);
      const many = Array.from({ length: 1001 }, (_, i) => `https://shop.example/p/${i}`).join('\n');
      assertProblem(await post(many), 413);
    });
  });
}
