// POST /scrape and the scrape logs, end to end against the local fixture site and real Chromium.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { App } from '../../src/http/base-app.js';
import { catalogueBooks } from '../fixtures/books-catalogue.js';
import { startFixtureSite, type FixtureSite } from '../fixtures/site.js';
import { assertProblem, backends, mainAppOn, noChromium, warnIfNoPostgres } from '../helpers.js';

warnIfNoPostgres();

interface Product {
  id: number;
  title: string;
  price: number | null;
  currency: string | null;
  source_url: string | null;
}

for (const backend of backends()) {
  describe(`POST /scrape on ${backend.name}`, () => {
    let site: FixtureSite;
    let app: App;
    let strict: App;
    const closers: Array<() => Promise<void>> = [];
    const later = { after: (fn: () => Promise<void>) => closers.push(fn) };

    before(async () => {
      site = await startFixtureSite();
      const db = await backend.open();
      closers.push(
        () => db.close(),
        () => site.close(),
      );
      // Rate limits have their own test; here every run must reach the pipeline.
      const demo = { DEMO_SITE_URL: `${site.url}books/`, RATE_LIMIT_SCRAPE_PER_MINUTE: '0' };
      app = await mainAppOn(db, later, { ...demo, SCRAPE_ALLOW_PRIVATE_NETWORKS: 'true' });
      strict = await mainAppOn(db, later, demo);
    });
    after(async () => {
      for (const close of closers.reverse()) await close();
    });

    const scrape = (body: unknown, on: App = app) => on.inject({ method: 'POST', url: '/scrape', payload: body as object });
    const logOf = async (id: string) => (await app.inject({ url: `/scrape-logs/${id}` })).json();
    const latestLog = async () => (await app.inject({ url: '/scrape-logs?limit=1' })).json()[0];

    test('POST /scrape with {} stores the 20 demo books and one log', async () => {
      const res = await scrape({});
      assert.equal(res.statusCode, 200, res.body);
      const result = res.json();
      const expected = catalogueBooks().slice(0, 20);
      assert.equal(result.mode, 'demo');
      assert.equal(result.source_url, `${site.url}books/`);
      assert.equal(result.extractor, 'books-listing');
      assert.deepEqual([result.pages, result.count, result.created, result.updated], [1, 20, 20, 0]);
      assert.deepEqual(
        result.products.map((p: Product) => [p.title, p.price, p.currency, p.source_url]),
        expected.map((b) => [b.title, b.price, 'GBP', `${site.url}books/${b.detailPath}`]),
      );
      const log = await logOf(result.log_id);
      assert.equal(log.status, 'succeeded');
      assert.equal(log.count, 20);
      assert.equal(log.products.length, 20);
      assert.equal(log.products[0].price_text, expected[0]!.priceText);
      assert.equal(log.source_url, `${site.url}books/`);
      const listed = await app.inject({ url: `/products?source_url=${encodeURIComponent(result.products[3].source_url)}` });
      assert.deepEqual(
        listed.json().map((p: Product) => p.title),
        [expected[3]!.title],
        'scraped products are served by GET /products',
      );
    });

    test('running the demo again updates the same 20 products instead of duplicating them', async () => {
      const before = Number((await app.inject({ url: '/products?limit=1' })).headers['x-total-count']);
      const res = await scrape({});
      assert.deepEqual([res.json().created, res.json().updated, res.json().count], [0, 20, 20]);
      const after = Number((await app.inject({ url: '/products?limit=1' })).headers['x-total-count']);
      assert.equal(after, before);
    });

    test('a bodiless POST /scrape (what a cross-site page can send without a preflight) runs nothing: 415 asking for JSON', async () => {
      const logs = Number((await app.inject({ url: '/scrape-logs?limit=1' })).headers['x-total-count']);
      assert.match(assertProblem(await app.inject({ method: 'POST', url: '/scrape' }), 415).detail, /as JSON \(Content-Type: application\/json\), with \{\} for the demo/);
      assertProblem(await app.inject({ method: 'POST', url: '/scrape', headers: { 'content-type': 'text/plain' }, payload: '{}' }), 415);
      assert.equal(Number((await app.inject({ url: '/scrape-logs?limit=1' })).headers['x-total-count']), logs, 'no run, no log');
    });

    test('max_pages follows the pager across the catalogue', async () => {
      const res = await scrape({ max_pages: 5 });
      const result = res.json();
      assert.equal(result.pages, 3, 'the catalogue has 3 pages; the crawl stops at the last');
      assert.equal(result.count, 60);
      assert.deepEqual(
        result.products.map((p: Product) => p.title),
        catalogueBooks().map((b) => b.title),
      );
    });

    test('static mode finds what each fixture page holds, naming the extractor', async () => {
      const cases: Array<[string, string, number]> = [
        ['jsonld-product.html', 'json-ld', 1],
        ['jsonld-itemlist.html', 'json-ld', 3],
        ['jsonld-graph.html', 'json-ld', 2],
        ['microdata.html', 'microdata', 3],
        ['opengraph.html', 'opengraph', 1],
        ['tricky-prices.html', 'product-cards', 6],
      ];
      for (const [file, extractor, atLeast] of cases) {
        const res = await scrape({ url: `${site.url}pages/${file}` });
        assert.equal(res.statusCode, 200, `${file}: ${res.body}`);
        const result = res.json();
        assert.equal(result.mode, 'static');
        assert.equal(result.extractor, extractor, file);
        assert.ok(result.count >= atLeast, `${file}: ${result.count} < ${atLeast}`);
      }
    });

    test('a blog index stores no products; its posts are stored and answered as articles without a body', async () => {
      const res = await scrape({ url: `${site.url}pages/articles.html` });
      assert.equal(res.statusCode, 200, res.body);
      const result = res.json();
      assert.deepEqual([result.page_type, result.extractor, result.count, result.products.length], ['article-list', 'article-list', 0, 0]);
      const articles = result.articles as Array<{ id: number; title: string; url: string; body: string | null; source_url: string }>;
      assert.ok(articles.length >= 5, `${articles.length} entries`);
      assert.ok(articles.every((a) => a.id > 0 && a.title.length > 0 && a.url.startsWith('http') && a.body === null && a.source_url === `${site.url}pages/articles.html`));
      for (const article of articles) assert.equal((await app.inject({ url: `/articles/${article.id}` })).json().provenance.page_url, `${site.url}pages/articles.html`);
    });

    test('user selectors come first', async () => {
      const res = await scrape({
        url: `${site.url}books/`,
        selectors: { item: 'article.product_pod', title: 'h3 a', price: 'p.price_color', link: 'h3 a' },
      });
      assert.equal(res.json().extractor, 'selectors');
      assert.equal(res.json().count, 20);
    });

    test('a page with no products is a 200 with count 0, and logged', async () => {
      const res = await scrape({ url: `${site.url}pages/script-rendered.html` });
      assert.equal(res.statusCode, 200, res.body);
      assert.deepEqual([res.json().count, res.json().extractor], [0, null]);
      assert.equal((await logOf(res.json().log_id)).status, 'succeeded');
    });

    test('dynamic mode runs the page scripts and finds the cards static mode cannot', { skip: noChromium }, async () => {
      const res = await scrape({ url: `${site.url}pages/script-rendered.html`, use_selenium: true, wait_for: '.card' });
      assert.equal(res.statusCode, 200, res.body);
      assert.equal(res.json().mode, 'dynamic');
      assert.equal(res.json().count, 4);
      assert.equal(res.json().extractor, 'product-cards');
      assert.equal((await logOf(res.json().log_id)).renderer, 'browser');
    });

    test('use_selenium without url runs the demo through the browser', { skip: noChromium }, async () => {
      const res = await scrape({ use_selenium: true });
      assert.equal(res.statusCode, 200, res.body);
      assert.equal(res.json().mode, 'demo');
      assert.equal(res.json().count, 20);
      assert.equal((await logOf(res.json().log_id)).renderer, 'browser');
    });

    test('a scraped product keeps where each value came from: GET /products/{id} answers its provenance', async () => {
      const res = await scrape({ url: `${site.url}pages/jsonld-product.html` });
      assert.equal(res.statusCode, 200, res.body);
      assert.equal(res.json().page_type, 'product');
      const [stored] = res.json().products;
      assert.deepEqual(
        [stored.price, stored.currency, stored.availability, stored.sku, stored.brand, stored.image_url],
        [39.95, 'USD', 'in_stock', 'AP-GO-01', 'AeroPress', 'https://shop.example.com/img/aeropress-go.jpg'],
      );
      const one = (await app.inject({ url: `/products/${stored.id}` })).json();
      assert.equal(one.provenance.page_url, `${site.url}pages/jsonld-product.html`);
      assert.equal(one.provenance.page_type, 'product');
      assert.deepEqual(one.provenance.fields.price, { source: 'json-ld', locator: 'ld+json[1] $.offers[0].price' });
      assert.deepEqual(one.provenance.fields.sku, { source: 'json-ld', locator: 'ld+json[1] $.sku' });
      assert.equal(one.provenance.fields.title.source, 'json-ld');

      // The log keeps the same provenance per raw item, with the page it came from.
      const raw = (await logOf(res.json().log_id)).products[0];
      assert.deepEqual(raw.provenance.price, one.provenance.fields.price);
      assert.equal(raw.page_url, `${site.url}pages/jsonld-product.html`);

      // A value a person changes says so; the others keep their page source.
      const patched = await app.inject({ method: 'PATCH', url: `/products/${stored.id}`, payload: { price: 35, availability: 'limited' } });
      assert.equal(patched.statusCode, 200, patched.body);
      const after = (await app.inject({ url: `/products/${stored.id}` })).json();
      assert.deepEqual([after.price, after.availability], [35, 'limited']);
      assert.equal(after.provenance.fields.price.source, 'api');
      assert.equal(after.provenance.fields.availability.source, 'api');
      assert.equal(after.provenance.fields.sku.source, 'json-ld');
    });

    test('POST /scrape/explain answers the whole decision and stores nothing', async () => {
      const productsBefore = (await app.inject({ url: '/products?limit=1' })).headers['x-total-count'];
      const logsBefore = (await app.inject({ url: '/scrape-logs?limit=1' })).headers['x-total-count'];
      const target = `${site.url}redirect-to?url=${encodeURIComponent('/pages/jsonld-product.html')}`;
      const res = await app.inject({ method: 'POST', url: '/scrape/explain', payload: { url: target } });
      assert.equal(res.statusCode, 200, res.body);
      const body = res.json();
      assert.equal(body.stored, false);
      assert.deepEqual([body.target.verdict, body.target.private_networks_allowed, body.target.addresses[0].address], ['allowed', true, '127.0.0.1']);
      // The redirect chain with statuses, robots.txt, content type and size.
      const [fetched] = body.fetches;
      assert.deepEqual(
        fetched.redirects.map((h: { url: string; status: number; robots: string }) => [h.url, h.status, h.robots]),
        [
          [target, 302, 'allowed'],
          [`${site.url}pages/jsonld-product.html`, 200, 'allowed'],
        ],
      );
      assert.equal(fetched.robots[0].url, `${site.url}robots.txt`);
      assert.equal(fetched.robots[0].outcome, 'rules');
      assert.match(fetched.content_type, /^text\/html/);
      assert.ok(fetched.bytes > 1000);
      assert.equal(fetched.charset, 'utf-8 (Content-Type header)');
      // The page type and why, every candidate, and each field's choice.
      const [page] = body.pages;
      assert.equal(page.page_type.type, 'product');
      assert.match(page.page_type.reasons[0], /structured data marks up the page's product/);
      assert.equal(page.candidates['json-ld'].length, 1);
      assert.equal(page.candidates['product-cards'].length, 2, 'the related cards were found, and dropped');
      assert.ok(page.dropped.some((d: { source: string }) => d.source === 'product-cards'));
      assert.equal(page.items[0].fields.price.chosen.source, 'json-ld');
      assert.match(page.items[0].fields.price.why, /json-ld is trusted over/);
      assert.ok(page.items[0].fields.price.others.some((o: { source: string; value: number }) => o.source === 'visible' && o.value === 39.95));
      assert.deepEqual(
        body.products.map((p: { title: string; price: number }) => [p.title, p.price]),
        [['AeroPress Go Travel Coffee Maker – "Compact" Edition', 39.95]],
      );
      for (const phase of ['guard', 'fetch', 'extract', 'total']) assert.equal(typeof body.timings_ms[phase], 'number', phase);
      // Nothing stored, nothing logged.
      assert.equal((await app.inject({ url: '/products?limit=1' })).headers['x-total-count'], productsBefore);
      assert.equal((await app.inject({ url: '/scrape-logs?limit=1' })).headers['x-total-count'], logsBefore);
    });

    test("POST /scrape/explain of a news story answers its article beside the products, with each field's choice", async () => {
      const res = await app.inject({ method: 'POST', url: '/scrape/explain', payload: { url: `${site.url}pages/news-story.html` } });
      assert.equal(res.statusCode, 200, res.body);
      const body = res.json();
      assert.deepEqual([body.count, body.products], [0, []]);
      assert.equal(body.articles.length, 1);
      const [article] = body.articles;
      assert.equal(article.title, 'Harbour wall collapse closes coastal road');
      assert.equal(article.url, 'https://news.example/uk/harbour-wall-collapse');
      assert.match(article.body, /^A thirty-metre stretch[\s\S]+in the village hall\.$/);
      assert.match(article.body_html, /<h2>Diversion in place<\/h2>/);
      assert.equal(article.page_url, `${site.url}pages/news-story.html`);
      assert.equal(article.provenance.published_at.source, 'json-ld');
      const [page] = body.pages;
      assert.equal(page.page_type.type, 'article');
      assert.ok(page.article_candidates['article-body'].length === 1 && page.article_candidates.opengraph.length === 1);
      assert.match(page.articles[0].fields.body.why, /main text of the page/);
      assert.ok(page.articles[0].body.removed.comments >= 1, 'the comment section was removed before choosing the body');
    });

    test('POST /scrape of a news story stores no product and answers the article as stored', async () => {
      const res = await scrape({ url: `${site.url}pages/news-story.html` });
      assert.equal(res.statusCode, 200, res.body);
      const result = res.json();
      assert.deepEqual([result.page_type, result.count, result.products.length, result.articles.length], ['article', 0, 0, 1]);
      assert.equal(result.articles[0].authors[0], 'Morag Lindsay');
      assert.deepEqual((await app.inject({ url: `/articles/${result.articles[0].id}` })).json().authors, result.articles[0].authors);
    });

    test("explain of a blocked target is 422 with the guard's reason, and nothing is fetched", async () => {
      const before = site.hits.get('/pages/articles.html') ?? 0;
      const res = await strict.inject({ method: 'POST', url: '/scrape/explain', payload: { url: `${site.url}pages/articles.html` } });
      assert.equal(res.statusCode, 422, res.body);
      const body = res.json();
      assert.equal(body.type, 'urn:data-aggregator:problem:blocked-target');
      assert.equal(body.explanation.target.verdict, 'blocked');
      assert.match(body.explanation.target.reason, /private, loopback or reserved/);
      assert.deepEqual(body.explanation.fetches, []);
      assert.equal(site.hits.get('/pages/articles.html') ?? 0, before);
    });

    test('explain of a robots.txt-disallowed page is 422 naming robots.txt, with the rules it read', async () => {
      const before = site.hits.get('/private/page.html') ?? 0;
      const res = await app.inject({ method: 'POST', url: '/scrape/explain', payload: { url: `${site.url}private/page.html` } });
      assert.equal(res.statusCode, 422, res.body);
      const body = res.json();
      assert.match(body.detail, /robots\.txt .* disallows \/private\/page\.html/);
      assert.equal(body.explanation.target.verdict, 'allowed', 'the address is fine; robots.txt is what refuses');
      const [attempt] = body.explanation.fetches;
      assert.deepEqual(
        attempt.redirects.map((h: { robots: string }) => h.robots),
        ['disallowed'],
      );
      assert.equal(attempt.robots[0].outcome, 'rules');
      assert.match(attempt.error, /robots\.txt/);
      assert.equal(site.hits.get('/private/page.html') ?? 0, before, 'the page itself was never requested');
    });

    // [name, body, status, run on the app that refuses private addresses]
    const failures: Array<[string, object, number, boolean?]> = [
      ['upstream 404', { url: '/status/404' }, 502],
      ['upstream 500', { url: '/status/500' }, 502],
      ['not HTML', { url: '/binary' }, 502],
      ['JSON', { url: '/json' }, 502],
      ['oversize', { url: '/huge' }, 502],
      ['redirect loop', { url: '/redirect-loop' }, 502],
      ['timeout', { url: '/slow', timeout_ms: 300 }, 504],
      ['redirect to the metadata address', { url: '/redirect-to-metadata' }, 422, true],
      ['redirect to file:', { url: '/redirect-to-file' }, 422],
      ['robots.txt disallows', { url: '/private/page.html' }, 422],
      ['loopback without SCRAPE_ALLOW_PRIVATE_NETWORKS', { url: '/pages/articles.html' }, 422, true],
      ['dynamic 404', { url: '/status/404', use_selenium: true }, 502],
      ['dynamic, robots.txt disallows', { url: '/private/page.html', use_selenium: true }, 422],
      ['dynamic, oversize', { url: '/huge', use_selenium: true }, 502],
    ];
    for (const [name, body, status, refusesPrivate] of failures) {
      const dynamic = (body as { use_selenium?: boolean }).use_selenium === true;
      test(`a failed scrape (${name}) answers ${status} and still leaves its log`, { skip: dynamic ? noChromium : false }, async () => {
        const on = refusesPrivate ? strict : app;
        const url = `${site.url}${(body as { url: string }).url.slice(1)}`;
        const res = await scrape({ ...body, url }, on);
        assert.equal(res.statusCode, status, res.body);
        assert.match(String(res.headers['content-type']), /problem\+json/);
        const log = await latestLog();
        assert.equal(log.status, 'failed');
        assert.equal(log.source_url, url);
        assert.equal(log.error.status, status);
        assert.equal(log.count, 0);
      });
    }

    test('blocked and invalid targets: 422 without contacting anything', async () => {
      const before = site.hits.get('/pages/articles.html') ?? 0;
      for (const url of ['ftp://127.0.0.1/x', 'file:///etc/passwd', 'http://169.254.169.254/', `http://2130706433:${new URL(site.url).port}/pages/articles.html`, 'not a url']) {
        const res = await scrape({ url }, strict);
        assert.equal(res.statusCode, 422, `${url}: ${res.body}`);
      }
      assert.equal(site.hits.get('/pages/articles.html') ?? 0, before);
    });

    test('bad scrape bodies get 422 naming the field', async () => {
      const cases: Array<[object, string]> = [
        [{ use_selenium: 'yes' }, '/body/use_selenium'],
        [{ max_pages: 0 }, '/body/max_pages'],
        [{ max_pages: 101 }, '/body/max_pages'],
        [{ url: 42 }, '/body/url'],
        [{ colour: 1 }, '/body/colour'],
        [{ url: `${site.url}books/`, selectors: { item: '[[[', title: 'h3', price: 'p' } }, '/body/selectors/item'],
        [{ url: `${site.url}books/`, selectors: { item: 'a' } }, '/body/selectors/title'],
        [{ timeout_ms: 5 }, '/body/timeout_ms'],
      ];
      for (const [body, path] of cases) {
        const res = await scrape(body);
        assert.equal(res.statusCode, 422, `${JSON.stringify(body)}: ${res.body}`);
        assert.ok(
          res.json().errors.some((e: { path: string }) => e.path === path),
          `${JSON.stringify(body)} names ${path}: ${res.body}`,
        );
      }
    });

    test('GET /scrape-logs lists newest first, filters, counts and finds one', async () => {
      const all = await app.inject({ url: '/scrape-logs?limit=500' });
      assert.equal(all.statusCode, 200);
      const logs = all.json();
      assert.equal(Number(all.headers['x-total-count']), logs.length);
      const times = logs.map((l: { started_at: string }) => l.started_at);
      assert.deepEqual(times, [...times].sort().reverse());
      const failed = await app.inject({ url: '/scrape-logs?status=failed' });
      assert.ok(failed.json().length > 0);
      assert.ok(failed.json().every((l: { status: string }) => l.status === 'failed'));
      const demo = await app.inject({ url: `/scrape-logs?source_url=${encodeURIComponent(`${site.url}books/`)}&limit=2` });
      assert.equal(demo.json().length, 2);
      const one = await app.inject({ url: `/scrape-logs/${logs[0].id}` });
      assert.deepEqual(one.json(), logs[0]);
      assert.equal((await app.inject({ url: '/scrape-logs/00000000-0000-4000-8000-000000000000' })).statusCode, 404);
      assert.equal((await app.inject({ url: '/scrape-logs/not-a-uuid' })).statusCode, 422);
      assert.equal((await app.inject({ url: '/scrape-logs?limit=501' })).statusCode, 422);
    });
  });
}
