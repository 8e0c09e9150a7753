// What a crawl may visit (strategy, globs) and the canonical form of URLs it dedupes by: tables.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { crawlPolicy } from '../../src/jobs/crawl-policy.js';
import { canonicalUrl, urlKey } from '../../src/url-identity/url-key.js';

describe('canonicalUrl: one page written several ways is one URL', () => {
  const CASES: ReadonlyArray<readonly [string, string | null]> = [
    ['HTTP://Shop.Example.COM:80/Books/', 'http://shop.example.com/Books'],
    ['https://shop.example.com:443/a/b/#reviews', 'https://shop.example.com/a/b'],
    ['https://shop.example.com/', 'https://shop.example.com/'],
    ['https://shop.example.com/p?utm_source=news&id=7&utm_campaign=x&gclid=abc', 'https://shop.example.com/p?id=7'],
    ['https://shop.example.com/p?b=2&a=1&fbclid=zz', 'https://shop.example.com/p?a=1&b=2'],
    ['https://user:secret@shop.example.com/p', 'https://shop.example.com/p'],
    ['https://shop.example.com:8443/p', 'https://shop.example.com:8443/p'],
    ['mailto:shop@example.com', null],
    ['not a url', null],
  ];
  for (const [input, expected] of CASES) test(`${input} -> ${expected}`, () => assert.equal(canonicalUrl(input), expected));

  test('a key over 1000 characters keeps its start and a digest of the whole, so two long URLs stay apart', () => {
    const long = (tail: string) => `https://shop.example.com/search?q=${'x'.repeat(3000)}${tail}`;
    const a = urlKey(long('a'))!;
    const b = urlKey(long('b'))!;
    assert.ok(a.length <= 1000 && b.length <= 1000);
    assert.notEqual(a, b);
    assert.match(a, /#sha256=[0-9a-f]{64}$/);
  });
});

describe('crawlPolicy', () => {
  const start = 'https://www.shop.example.co.uk/books/';
  const CASES: ReadonlyArray<readonly [string, Parameters<typeof crawlPolicy>[1], string, boolean]> = [
    ['same host', {}, 'https://www.shop.example.co.uk/books/a', true],
    ['another host of the domain, same-host', {}, 'https://blog.shop.example.co.uk/x', false],
    ['another host of the domain, same-domain', { strategy: 'same-domain' }, 'https://blog.shop.example.co.uk/x', true],
    ['the registrable domain itself, same-domain', { strategy: 'same-domain' }, 'https://shop.example.co.uk/x', true],
    ['a sibling under the public suffix is another site', { strategy: 'same-domain' }, 'https://other.co.uk/x', false],
    ['another site', {}, 'https://elsewhere.example/x', false],
    ['the same host on another port is another origin, same-host', {}, 'https://www.shop.example.co.uk:8443/books/a', false],
    ['the same host over http is another origin, same-host', {}, 'http://www.shop.example.co.uk/books/a', false],
    ['the explicit default port is the same origin', {}, 'https://www.shop.example.co.uk:443/books/a', true],
    ['another port of the domain, same-domain', { strategy: 'same-domain' }, 'https://blog.shop.example.co.uk:8443/x', false],
    ['the domain over http on its default port, same-domain', { strategy: 'same-domain' }, 'http://blog.shop.example.co.uk/x', true],
    ['not http', {}, 'ftp://www.shop.example.co.uk/x', false],
    ['include matches the path', { include: ['/books/**'] }, 'https://www.shop.example.co.uk/books/a/b', true],
    ['include misses', { include: ['/books/**'] }, 'https://www.shop.example.co.uk/music/a', false],
    ['exclude wins', { include: ['/books/**'], exclude: ['**/category/**'] }, 'https://www.shop.example.co.uk/books/category/poetry', false],
    ['exclude sees the query', { exclude: ['/search?*'] }, 'https://www.shop.example.co.uk/search?q=a', false],
    ['an encoded path is matched decoded', { include: ['/books/café/**'] }, 'https://www.shop.example.co.uk/books/caf%C3%A9/x', true],
  ];
  for (const [name, options, url, accepted] of CASES) {
    test(`${name}: ${url} ${accepted ? 'followed' : 'not followed'}`, () => assert.equal(crawlPolicy(start, options).accepts(url), accepted));
  }

  test('defaults, and the listed strategy: no links, the sitemap on unless turned off', () => {
    const defaults = crawlPolicy(start, {});
    assert.deepEqual([defaults.maxPages, defaults.maxDepth, defaults.followLinks, defaults.useSitemap], [100, 5, true, false]);
    const listed = crawlPolicy(start, { strategy: 'listed' });
    assert.deepEqual([listed.followLinks, listed.useSitemap], [false, true]);
    assert.equal(crawlPolicy(start, { strategy: 'listed', sitemap: false }).useSitemap, false);
  });
});
