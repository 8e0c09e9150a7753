// The watch-list import on each backend: CSV as people write it, the address guard per line, tags bounded per page, pages matched however spelled, all or nothing at SCHEDULES_MAX, and a megabyte read without holding the service.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { App } from '../../src/http/base-app.js';
import { readWatchList } from '../../src/jobs/watch-list-import.js';
import { assertProblem, backends, warnIfNoPostgres, openService, type OpenService } from '../helpers.js';

warnIfNoPostgres();

test('a megabyte of CSV is read in slices: other work runs between them', async () => {
  const csv = `url,name\n${Array.from({ length: 1000 }, (_, i) => `https://shop.example/p/${i}?${'q'.repeat(1000)},Item ${i}`).join('\n')}\n`;
  assert.ok(csv.length > 1_000_000);
  let turns = 0;
  let reading = true;
  const spin = () => {
    if (!reading) return;
    turns += 1;
    setImmediate(spin);
  };
  setImmediate(spin);
  const { lines, errors } = await readWatchList(csv, { tags: [] }, false);
  reading = false;
  assert.deepEqual([lines.length, errors.length], [1000, 0]);
  // No I/O in between: each turn the spinner got is one the reader gave back (a 64 KiB slice, or 100 lines).
  assert.ok(turns >= 16, `the event loop turned ${turns} times while the list was read`);
});

for (const backend of backends()) {
  describe(`watch-list import on ${backend.name}`, () => {
    let app: App;
    let opened: OpenService;

    before(async () => {
      // Private networks refused (the default): every line's URL meets the address guard.
      app = (opened = await openService(backend, { SCHEDULES_MAX: '20' })).app;
    });
    after(() => opened.close());

    const post = (body: string | Buffer, query = '') => app.inject({ method: 'POST', url: `/watch-lists/import${query}`, payload: body, headers: { 'content-type': 'text/csv' } });
    const count = async () => Number((await app.inject({ url: '/schedules?limit=1' })).headers['x-total-count']);
    const clear = async () => {
      for (;;) {
        const page = (await app.inject({ url: '/schedules?limit=100' })).json() as Array<{ id: string }>;
        if (page.length === 0) return;
        for (const s of page) await app.inject({ method: 'DELETE', url: `/schedules/${s.id}` });
      }
    };

    test('CSV as spreadsheets write it: a byte-order mark, CRLF line ends, quoted cells with commas, semicolons and doubled quotes', async () => {
      const csv = Buffer.concat([
        Buffer.from([0xef, 0xbb, 0xbf]),
        Buffer.from(
          ['url,tags,name', 'https://shop.example/kettle,"kitchen;tea","Kettle, 1.7 l"', '"https://shop.example/mug?size=large&colour=blue","cups","The ""big"" mug"', ''].join(
            '\r\n',
          ),
        ),
      ]);
      const res = await post(csv);
      assert.equal(res.statusCode, 201, res.body);
      const created = res.json().created as Array<{ line: number; url: string; schedule_id: string; tags: string[] }>;
      assert.deepEqual(
        created.map((c) => [c.line, c.url, c.tags]),
        [
          [2, 'https://shop.example/kettle', ['kitchen', 'tea']],
          [3, 'https://shop.example/mug?size=large&colour=blue', ['cups']],
        ],
      );
      const names = await Promise.all(created.map(async (c) => (await app.inject({ url: `/schedules/${c.schedule_id}` })).json().name));
      assert.deepEqual(names, ['Kettle, 1.7 l', 'The "big" mug']);
      await clear();
    });

    test('each line meets the address guard: a private or loopback address is that line’s error, and nothing is created', async () => {
      const res = await post(['url', 'https://shop.example/ok', 'http://127.0.0.1:8000/admin', 'http://10.1.2.3/x', 'https://shop.example/fine'].join('\n'));
      const problem = assertProblem(res, 422);
      assert.deepEqual(
        problem.errors.map((e: { path: string }) => e.path),
        ['/body/line/3/url', '/body/line/4/url'],
      );
      assert.equal(await count(), 0);
    });

    test('at most 50 tags a page: lines naming one page, or a page and its schedule, cannot pile up more; nothing is created', async () => {
      const tags = (prefix: string, n: number) => Array.from({ length: n }, (_, i) => `${prefix}${i}`).join(';');
      const twice = await post(`url,tags\nhttps://shop.example/lamp,${tags('a', 30)}\nhttps://shop.example/lamp?utm_source=mail,${tags('b', 30)}\n`);
      const problem = assertProblem(twice, 422);
      assert.deepEqual(
        problem.errors.map((e: { path: string }) => e.path),
        ['/body/line/3/tags'],
      );
      assert.match(problem.errors[0].message, /with line 2 \(the same page\), the page's watch would carry 60 tags; at most 50/);
      assert.equal(await count(), 0);

      assert.equal((await post(`url,tags\nhttps://shop.example/lamp,${tags('a', 40)}\n`)).statusCode, 201);
      const more = assertProblem(await post(`url,tags\nhttps://shop.example/lamp,${tags('c', 20)}\n`), 422);
      assert.match(more.errors[0].message, /with its page's schedule, the page's watch would carry 60 tags/);
      const [schedule] = (await app.inject({ url: '/schedules' })).json();
      assert.equal(schedule.job.tags.length, 40, 'the schedule kept its tags');
      await clear();
    });

    test("a page's schedule is found by its canonical URL: re-spelled (host case, tracking parameters, fragment) it gets the tags, not a second schedule", async () => {
      const made = await app.inject({
        method: 'POST',
        url: '/schedules',
        payload: { every_minutes: 60, job: { url: 'https://Shop.Example/kettle?utm_source=news#reviews', tags: ['tea'] } },
      });
      assert.equal(made.statusCode, 201, made.body);
      const res = await post('url,tags\nhttps://shop.example/kettle,kitchen\n');
      assert.equal(res.statusCode, 200, res.body);
      assert.deepEqual(res.json().created, []);
      assert.deepEqual(
        res.json().updated.map((u: { schedule_id: string; tags: string[] }) => [u.schedule_id, u.tags]),
        [[made.json().id, ['tea', 'kitchen']]],
      );
      assert.equal(await count(), 1);
      await clear();
    });

    test('all or nothing at SCHEDULES_MAX: an import that would pass it is a 422 limit-reached and creates none of its schedules', async () => {
      const urls = (from: number, n: number) => Array.from({ length: n }, (_, i) => `https://shop.example/item/${from + i}`);
      assert.equal((await post(`url\n${urls(0, 15).join('\n')}\n`)).statusCode, 201);
      const over = assertProblem(await post(`url\n${urls(100, 10).join('\n')}\n`), 422);
      assert.match(over.type, /limit-reached/);
      assert.match(over.detail, /Nothing was imported: it would add 10 schedules to the 15 there are, and SCHEDULES_MAX allows 20/);
      assert.equal(await count(), 15, 'none of the ten was created');
      // Lines for pages already watched take no place: five new and the fifteen again fit.
      const fits = await post(`url\n${[...urls(0, 15), ...urls(200, 5)].join('\n')}\n`);
      assert.equal(fits.statusCode, 201, fits.body);
      assert.deepEqual([fits.json().created.length, fits.json().updated.length], [5, 15]);
      assert.equal(await count(), 20);
      await clear();
    });
  });
}
