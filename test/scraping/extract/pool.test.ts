// Extraction in worker threads: every page leaves the event loop, with the same answer as inline, and stops at its deadline there.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { extract } from '../../../src/scraping/extract/index.js';
import { createExtractionPool } from '../../../src/scraping/extract/pool.js';
import { processPage } from '../../../src/scraping/process-page.js';
import { renderCataloguePage } from '../../fixtures/books-catalogue.js';

test('every page, big or small, is extracted in a worker thread with the same result as inline', async (t) => {
  const pool = createExtractionPool({ threads: 2 });
  t.after(() => pool.close());
  const small = renderCataloguePage(1)!;
  const big = small.replace('</body>', `<div hidden>${'<p>filler paragraph of a long page</p>'.repeat(40_000)}</div></body>`);
  const url = 'https://shop.example/';
  assert.deepEqual(await pool.extract(big, url), extract(big, url));
  assert.equal(pool.threaded, 1, 'the big page went to a thread');
  // Options travel with the page: an explanation comes back from the thread too.
  assert.equal((await pool.extract(big, url, { explain: true })).explanation?.page_type.type, 'listing');
  assert.deepEqual(await pool.extract(small, url), extract(small, url));
  assert.equal(pool.threaded, 3, 'the small page went to a thread too: a small page can be slow, and only a thread stops at a deadline');
  // A site rule's selectors (which may backtrack) on a small page run there as well.
  const rule = { siteRule: { id: 1, host_pattern: 'shop.example', fields: { price: { selector: 'h1 ~ div ~ .price' } }, page_type: null } };
  assert.deepEqual(await pool.extract(small, url, rule), extract(small, url, rule));
  assert.equal(pool.threaded, 4);
  // Several at once share the threads; each answer is its own page's.
  const pages = [1, 2, 3].map((n) => renderCataloguePage(n)!.replace('</body>', `<div hidden>${'<p>x</p>'.repeat(20_000)}</div></body>`));
  const results = await Promise.all(pages.map((page) => pool.extract(page, url)));
  assert.deepEqual(
    results.map((r) => r.items[0]?.title),
    pages.map((page) => extract(page, url).items[0]?.title),
  );
});

test('EXTRACT_THREADS=0 extracts inline', async () => {
  const pool = createExtractionPool({ threads: 0 });
  const page = renderCataloguePage(1)!.repeat(10);
  assert.equal((await pool.extract(page, 'https://shop.example/')).items.length, extract(page, 'https://shop.example/').items.length);
  assert.equal(pool.threaded, 0);
  await pool.close();
});

test('a page whose run is stopped (deadline, cancel) is stopped in its thread: the reason comes back, the pool goes on with a new thread', async (t) => {
  const pool = createExtractionPool({ threads: 1 });
  t.after(() => pool.close());
  const url = 'https://shop.example/';
  const big = renderCataloguePage(1)!.replace('</body>', `<div hidden>${'<p>filler paragraph of a long page</p>'.repeat(60_000)}</div></body>`);
  const controller = new AbortController();
  const reason = new Error('the run reached its deadline');
  const extraction = pool.extract(big, url, {}, controller.signal);
  setImmediate(() => controller.abort(reason));
  await assert.rejects(extraction, (error) => error === reason);
  assert.equal(pool.threaded, 0, 'the stopped page never completed');
  // The next page gets the thread that replaced the stopped one.
  assert.deepEqual(await pool.extract(big, url), extract(big, url));
  // Aborted before it starts, a page is not extracted at all.
  await assert.rejects(pool.extract(renderCataloguePage(1)!, url, {}, AbortSignal.abort(reason)), (error) => error === reason);
  await assert.rejects(pool.extract(big, url, {}, AbortSignal.abort(reason)), (error) => error === reason);
});

test("a page's extraction stops at the page timeout (timeout_ms) with a 504 that says so", async (t) => {
  const pool = createExtractionPool({ threads: 1 });
  t.after(() => pool.close());
  const url = 'https://shop.example/';
  const html = renderCataloguePage(1, { pages: 1, perPage: 2_000 })!;
  const loaded = { url, html, status: 200, contentType: 'text/html' } as Parameters<typeof processPage>[0];
  await assert.rejects(processPage(loaded, pool.extract, {}, { timeoutMs: 1 }), (error: Error & { status?: number }) => {
    assert.equal(error.status, 504);
    assert.match(error.message, /^Extracting https:\/\/shop\.example\/ took longer than the page timeout of 1 ms \(timeout_ms\)/);
    return true;
  });
  assert.equal((await processPage(loaded, pool.extract, {}, { timeoutMs: 120_000 })).items.length, 2000);
});

test("a page's timeout counts its extraction, not its wait for a busy thread", async (t) => {
  const pool = createExtractionPool({ threads: 1 });
  t.after(() => pool.close());
  const url = 'https://shop.example/';
  const big = renderCataloguePage(1)!.replace('</body>', `<div hidden>${'<p>filler paragraph of a long page</p>'.repeat(60_000)}</div></body>`);
  const small = { url, html: renderCataloguePage(1)!, status: 200, contentType: 'text/html' } as Parameters<typeof processPage>[0];
  // The one thread is busy with the big page (seconds) while the small one (milliseconds) waits its turn.
  const busy = pool.extract(big, url);
  const waited = await processPage(small, pool.extract, {}, { timeoutMs: 200 });
  assert.equal(waited.items.length, 20);
  await busy;
});
