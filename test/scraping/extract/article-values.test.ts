// Article values as stored: dates in ISO 8601 with the page's own offset, language tags, author names, tags.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { authorNames, isoDate, languageTag, tagList } from '../../../src/scraping/extract/article/article-values.js';

describe('dates as ISO 8601, keeping the offset the page states', () => {
  const CASES: ReadonlyArray<readonly [string, string | null]> = [
    ['2024-03-05T07:42:00+00:00', '2024-03-05T07:42:00Z'],
    ['2024-03-05T07:42:00Z', '2024-03-05T07:42:00Z'],
    ['2024-02-11T16:05:00-07:00', '2024-02-11T16:05:00-07:00'],
    ['2019-11-18T21:19:27.948Z', '2019-11-18T21:19:27.948Z'],
    ['2019-11-19T10:43:00.000+0530', '2019-11-19T10:43:00+05:30'],
    ['2019-11-19 10:43:00', '2019-11-19T10:43:00'],
    ['2019-11-19T10:43', '2019-11-19T10:43:00'],
    ['2019-11-19', '2019-11-19'],
    ['20191119T104300Z', '2019-11-19T10:43:00Z'],
    ['Tue, 19 Nov 2019 10:43:00 GMT', '2019-11-19T10:43:00Z'],
    ['19 November 2019', '2019-11-19'],
    ['November 19, 2019', '2019-11-19'],
    ['Nov. 20, 2019 4:00 am CST', '2019-11-20T04:00:00-06:00'],
    ['Wednesday, November 20, 2019 at 4:15 PM EST', '2019-11-20T16:15:00-05:00'],
    ['1574160000', '2019-11-19T10:40:00Z'],
    ['1574160000000', '2019-11-19T10:40:00Z'],
    ['2019-11-19T10:43:00 AEDT', '2019-11-19T10:43:00'],
    ['2019-02-30', null],
    ['2019-13-01', null],
    ['2019-11-19T25:00:00Z', null],
    ['yesterday', null],
    ['', null],
    ['1.2.3', null],
  ];
  for (const [raw, iso] of CASES) {
    test(`${JSON.stringify(raw)} -> ${iso}`, () => assert.equal(isoDate(raw), iso));
  }

  test('any text gives null or a valid ISO 8601 date, and long text is not scanned', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 100 }), (text) => {
        const iso = isoDate(text);
        if (iso === null) return;
        assert.match(iso, /^\d{4}-\d{2}-\d{2}(?:T\d{2}:\d{2}:\d{2}(?:\.\d{3})?(?:Z|[+-]\d{2}:\d{2})?)?$/);
        assert.ok(!Number.isNaN(Date.parse(iso.length === 10 ? iso : iso.replace(/(T[\d:.]+)$/, '$1Z'))), iso);
      }),
      { numRuns: 2000, seed: 7 },
    );
    assert.equal(isoDate(`2019-11-19${' '.repeat(100_000)}x`), null);
  });
});

describe('language tags', () => {
  const CASES: ReadonlyArray<readonly [string, string | null]> = [
    ['en_US', 'en-US'],
    ['en-us', 'en-US'],
    ['EN', 'en'],
    ['pt-BR', 'pt-BR'],
    ['zh-Hant-TW', 'zh-Hant-TW'],
    ['english', null],
    ['', null],
    ['en US', null],
  ];
  for (const [raw, tag] of CASES) test(`${JSON.stringify(raw)} -> ${tag}`, () => assert.equal(languageTag(raw), tag));
});

describe('author names as a byline writes them', () => {
  const CASES: ReadonlyArray<readonly [string[], string[]]> = [
    [['By Jane Doe'], ['Jane Doe']],
    [['by Jane Doe and John Roe'], ['Jane Doe', 'John Roe']],
    [['Jane Doe, John Roe'], ['Jane Doe', 'John Roe']],
    [['Doe, Jane'], ['Doe, Jane']],
    [['Jane Doe | Staff writer'], ['Jane Doe']],
    [['Par Claire Fontaine'], ['Claire Fontaine']],
    [['https://social.example/janedoe', '@janedoe', 'Jane Doe'], ['Jane Doe']],
    [['Jane Doe', 'JANE DOE', 'jane doe'], ['Jane Doe']],
    [['', '  '], []],
  ];
  for (const [values, names] of CASES) test(`${JSON.stringify(values)} -> ${JSON.stringify(names)}`, () => assert.deepEqual(authorNames(values), names));
});

test('tags: trimmed, each once whatever its case, at most 50', () => {
  assert.deepEqual(tagList([' Storms ', 'storms', 'Transport', '']), ['Storms', 'Transport']);
  assert.equal(tagList(Array.from({ length: 80 }, (_, i) => `tag ${i}`)).length, 50);
});
