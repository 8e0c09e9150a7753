// Site rules through the API: CRUD and its 422s, and the rule applied by a scrape, explain and a crawl, with a warning when it stops matching.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startFixtureSite, type FixtureSite } from '../fixtures/site.js';
import { assertProblem, backends, type mainServiceOn, warnIfNoPostgres, openService, type OpenService } from '../helpers.js';
import { until } from '../wait.js';

warnIfNoPostgres();

const PINNED = { price: { selector: '#buy .now' }, sku: { json_path: '$.props.pageProps.product.code' } };

for (const backend of backends()) {
  describe(`site rules on ${backend.name}`, () => {
    let app: Awaited<ReturnType<typeof mainServiceOn>>['app'];
    let site: FixtureSite;
    let opened: OpenService;

    before(async () => {
      site = await startFixtureSite();
      app = (opened = await openService(backend, { SCRAPE_ALLOW_PRIVATE_NETWORKS: 'true', SCRAPE_OBEY_ROBOTS: 'false' }, { work: true })).app;
      opened.own(site);
    });
    after(() => opened.close());

    const send = (method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, payload?: unknown) =>
      app.inject({ method, url, ...(payload === undefined ? {} : { payload: payload as object }) });
    const page = (name: string) => `${site.url}pages/site-rules/${name}`;

    test('CRUD: create (201, Location), get, list, replace, delete; one rule per host pattern (409)', async () => {
      const created = await send('POST', '/site-rules', { host_pattern: '*.Shop.Example', fields: { title: { selector: 'h1.name' } }, note: 'titles' });
      assert.equal(created.statusCode, 201, created.body);
      const rule = created.json();
      assert.equal(created.headers.location, `/site-rules/${rule.id}`);
      assert.deepEqual([rule.host_pattern, rule.fields, rule.page_type, rule.note], ['*.shop.example', { title: { selector: 'h1.name' } }, null, 'titles']);
      assert.deepEqual((await send('GET', `/site-rules/${rule.id}`)).json(), rule);
      assertProblem(await send('POST', '/site-rules', { host_pattern: '*.shop.example', page_type: 'listing' }), 409);
      const replaced = await send('PUT', `/site-rules/${rule.id}`, { host_pattern: '*.shop.example', page_type: 'listing' });
      assert.equal(replaced.statusCode, 200, replaced.body);
      assert.deepEqual([replaced.json().fields, replaced.json().page_type, replaced.json().note], [{}, 'listing', null]);
      const list = await send('GET', '/site-rules');
      assert.equal(list.headers['x-total-count'], '1');
      assert.deepEqual((await send('DELETE', `/site-rules/${rule.id}`)).json(), { id: rule.id, deleted: true });
      assertProblem(await send('GET', `/site-rules/${rule.id}`), 404);
      assertProblem(await send('PUT', `/site-rules/${rule.id}`, { host_pattern: 'x.example', page_type: 'product' }), 404);
      assertProblem(await send('DELETE', `/site-rules/${rule.id}`), 404);
    });

    test('bad selectors, JSON paths and host patterns are 422s that name them; nothing is stored', async () => {
      const cases: Array<[unknown, RegExp]> = [
        [{ host_pattern: 'shop.example', fields: { price: { selector: 'div[' } } }, /\/fields\/price\/selector/],
        [{ host_pattern: 'shop.example', fields: { sku: { json_path: 'props.sku' } } }, /\/fields\/sku\/json_path/],
        [{ host_pattern: 'shop.example', fields: { sku: { json_path: '$..sku[?(@.x)]' } } }, /\/fields\/sku\/json_path/],
        [{ host_pattern: 'shop.example', fields: { sku: { selector: '.sku', json_path: '$.sku' } } }, /exactly one/],
        [{ host_pattern: 'https://shop.example/', fields: { title: { selector: 'h1' } } }, /\/host_pattern/],
        [{ host_pattern: 'shop.*.example', fields: { title: { selector: 'h1' } } }, /\/host_pattern/],
        [{ host_pattern: '*.com', fields: { title: { selector: 'h1' } } }, /\/host_pattern/],
        [{ host_pattern: 'shop.example' }, /at least one field or a page type/],
        [{ host_pattern: 'shop.example', fields: { colour: { selector: '.c' } } }, /colour|additional/i],
        [{ host_pattern: 'shop.example', page_type: 'blog' }, /page_type/],
      ];
      for (const [body, detail] of cases) {
        const problem = assertProblem(await send('POST', '/site-rules', body), 422);
        assert.match(JSON.stringify(problem), detail, JSON.stringify(body));
      }
      assert.deepEqual((await send('GET', '/site-rules')).json(), []);
    });

    test('a scrape and explain read the pinned fields (provenance site-rule); a rule that stops matching is a warning on the run and its log', async () => {
      const before = (await send('POST', '/scrape/explain', { url: page('kettle.html') })).json();
      assert.equal(before.products[0].price, 80, 'without a rule: the JSON-LD price');
      const rule = (await send('POST', '/site-rules', { host_pattern: '127.0.0.1', fields: PINNED })).json();

      const explained = (await send('POST', '/scrape/explain', { url: page('kettle.html') })).json();
      const product = explained.products[0];
      assert.deepEqual([product.price, product.sku, product.provenance.price.source, product.provenance.sku.source], [64, 'KET-2024', 'site-rule', 'site-rule']);
      assert.deepEqual(explained.pages[0].site_rule, { id: rule.id, host_pattern: '127.0.0.1', page_type: null, applied: ['price', 'sku'], missed: [] });
      assert.equal(explained.pages[0].items[0].fields.price.why, 'a site rule pins it');
      assert.equal(explained.site_rule_warnings, undefined);

      const scraped = await send('POST', '/scrape', { url: page('kettle.html') });
      assert.equal(scraped.statusCode, 200, scraped.body);
      assert.deepEqual([scraped.json().products[0].price, scraped.json().products[0].sku], [64, 'KET-2024']);
      assert.equal(scraped.json().site_rule_warnings, undefined);

      const changed = (await send('POST', '/scrape', { url: page('kettle-redesigned.html') })).json();
      assert.equal(changed.products[0].sku, 'KET-2024', 'the JSON path still matches');
      assert.equal(changed.products[0].price, 80, 'the price falls back to the other sources');
      assert.equal(changed.site_rule_warnings.length, 1);
      assert.match(changed.site_rule_warnings[0], new RegExp(`site rule ${rule.id} \\(127\\.0\\.0\\.1\\) found nothing for price on .*kettle-redesigned\\.html`));
      const log = (await send('GET', `/scrape-logs/${changed.log_id}`)).json();
      assert.deepEqual(log.site_rule_warnings, changed.site_rule_warnings);
      const explainedChanged = (await send('POST', '/scrape/explain', { url: page('kettle-redesigned.html') })).json();
      assert.deepEqual(explainedChanged.pages[0].site_rule.missed, ['price']);
      assert.deepEqual(explainedChanged.site_rule_warnings, changed.site_rule_warnings);
      await send('DELETE', `/site-rules/${rule.id}`);
    });

    test("a page-type override, and a crawl's pages read with the rule and its log warned", async () => {
      const rule = (await send('POST', '/site-rules', { host_pattern: '127.0.0.1', fields: PINNED })).json();
      const crawl = async (url: string) => {
        const res = await send('POST', '/jobs', { url, crawl: { max_pages: 5, include: ['/pages/site-rules/**'] } });
        assert.equal(res.statusCode, 202, res.body);
        const id = res.json().id as string;
        const job = await until('the crawl to end', async () => {
          const body = (await send('GET', `/jobs/${id}`)).json();
          return ['succeeded', 'failed', 'cancelled'].includes(body.status) ? body : undefined;
        });
        assert.equal(job.status, 'succeeded', JSON.stringify(job));
        assert.equal(job.progress.pages_done, 1);
        return id;
      };
      const id = await crawl(page('kettle.html'));
      const stored = (await send('GET', `/products?limit=100`)).json() as Array<{ source_url: string; price: number; sku: string }>;
      const kettle = stored.find((p) => p.sku === 'KET-2024');
      assert.equal(kettle?.price, 64, "the crawl's page read the pinned price");
      const log = (await send('GET', `/scrape-logs/${id}`)).json();
      assert.equal(log.site_rule_warnings, undefined, 'the one page matched');
      const missedId = await crawl(page('kettle-redesigned.html'));
      const missedLog = (await send('GET', `/scrape-logs/${missedId}`)).json();
      assert.equal(missedLog.crawl, true);
      assert.equal(missedLog.site_rule_warnings?.length, 1, JSON.stringify(missedLog));
      assert.match(missedLog.site_rule_warnings[0], /found nothing for price on .*kettle-redesigned\.html/);

      const put = await send('PUT', `/site-rules/${rule.id}`, { host_pattern: '127.0.0.1', fields: PINNED, page_type: 'none' });
      assert.equal(put.json().page_type, 'none', put.body);
      const none = (await send('POST', '/scrape/explain', { url: page('kettle.html') })).json();
      assert.equal(none.pages[0].page_type.type, 'none');
      assert.match(none.pages[0].page_type.reasons[0], /a site rule for 127\.0\.0\.1 sets the page type \(classified as product otherwise\)/);
      assert.equal(none.count, 0);
      await send('DELETE', `/site-rules/${rule.id}`);
    });

    test('/openapi.json documents the routes with their schemas and examples', async () => {
      const doc = (await send('GET', '/openapi.json')).json();
      for (const path of ['/site-rules', '/site-rules/{id}']) assert.ok(doc.paths[path], path);
      const body = doc.paths['/site-rules'].post.requestBody.content['application/json'];
      assert.equal(body.example.host_pattern, 'shop.example', 'request example present');
      assert.ok(doc.paths['/site-rules'].get.responses['200'].content['application/json'].schema, 'response schema present');
      assert.ok(doc.paths['/site-rules'].post.responses['422']);
    });
  });
}
