// The article merge: each field from the most trusted source that states it usably, the body from the page unless the page's data holds a fuller one.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { ARTICLE_TRUST, mergeArticle } from '../../../src/scraping/extract/article/article-merge.js';
import type { ArticleCandidate, ArticleCandidateFields, Source } from '../../../src/scraping/extract/types.js';

/** A candidate whose every value was read at "<source>:<field>". */
function candidate(source: Source, values: { [K in keyof ArticleCandidateFields]?: NonNullable<ArticleCandidateFields[K]>['value'] }): ArticleCandidate {
  const fields: Record<string, { value: unknown; locator: string }> = {};
  for (const [name, value] of Object.entries(values)) fields[name] = { value, locator: `${source}:${name}` };
  return { source, locator: source, scope: source === 'json-ld' ? 'item' : 'page', fields: fields as ArticleCandidateFields };
}

const words = (n: number, word = 'word') => Array.from({ length: n }, (_, i) => `${word}${i}`).join(' ');

describe('each field from the most trusted source that states it', () => {
  /** [what, candidates, field, expected value, expected source] */
  const CASES: ReadonlyArray<readonly [string, ArticleCandidate[], string, unknown, Source | undefined]> = [
    [
      'JSON-LD headline over the h1 and og:title',
      [candidate('opengraph', { title: 'Story | Site' }), candidate('visible', { title: 'Story' }), candidate('json-ld', { title: 'Story (data)' })],
      'title',
      'Story (data)',
      'json-ld',
    ],
    [
      'the h1 over og:title, which carries the site name',
      [candidate('opengraph', { title: 'Story | Site' }), candidate('visible', { title: 'Story' })],
      'title',
      'Story',
      'visible',
    ],
    [
      'article:published_time over the date shown in <time>',
      [candidate('visible', { title: 'T', published_at: '2024-06-15T09:12:00+02:00' }), candidate('opengraph', { published_at: '2024-06-14T06:30:00+02:00' })],
      'published_at',
      '2024-06-14T06:30:00+02:00',
      'opengraph',
    ],
    [
      'a date that does not parse gives way to the next source',
      [candidate('json-ld', { title: 'T', published_at: 'yesterday' }), candidate('meta', { published_at: '2024-01-02' })],
      'published_at',
      '2024-01-02',
      'meta',
    ],
    [
      'the canonical link over og:url and the JSON-LD url',
      [
        candidate('json-ld', { title: 'T', url: 'https://a.example/amp/story' }),
        candidate('opengraph', { url: 'https://a.example/og' }),
        candidate('meta', { url: 'https://a.example/story' }),
      ],
      'url',
      'https://a.example/story',
      'meta',
    ],
    [
      "og:site_name over the publisher's name",
      [candidate('json-ld', { title: 'T', site_name: 'Example Media Group' }), candidate('opengraph', { site_name: 'The Example' })],
      'site_name',
      'The Example',
      'opengraph',
    ],
    [
      'a profile URL is no author; the meta author is',
      [candidate('opengraph', { title: 'T', authors: ['https://social.example/desk'] }), candidate('meta', { authors: ['By Claire Fontaine'] })],
      'authors',
      ['Claire Fontaine'],
      'meta',
    ],
    ['og:locale as a language tag', [candidate('opengraph', { title: 'T', language: 'pt_BR' })], 'language', 'pt-BR', 'opengraph'],
    ['a language that is no tag gives way', [candidate('json-ld', { title: 'T', language: 'English' }), candidate('meta', { language: 'en' })], 'language', 'en', 'meta'],
    ['tags each once', [candidate('opengraph', { title: 'T', tags: ['Storms', 'storms', 'Transport'] })], 'tags', ['Storms', 'Transport'], 'opengraph'],
    ['an image URL that is not http(s) is dropped', [candidate('json-ld', { title: 'T', image_url: 'ftp://a.example/x.jpg' })], 'image_url', null, undefined],
  ];
  for (const [what, group, field, value, source] of CASES) {
    test(what, () => {
      const merged = mergeArticle(group, null, true)!;
      assert.deepEqual((merged.article as unknown as Record<string, unknown>)[field], value);
      assert.equal(merged.article.provenance[field as keyof typeof merged.article.provenance]?.source, source);
    });
  }

  test('explain says why and lists what the other sources offered, and which values could not be used', () => {
    const merged = mergeArticle(
      [
        candidate('json-ld', { title: 'T', published_at: 'soon' }),
        candidate('opengraph', { published_at: '2024-06-14T06:30:00+02:00' }),
        candidate('visible', { published_at: '2024-06-15' }),
      ],
      null,
      true,
    )!;
    const decision = merged.explained!.fields.published_at!;
    assert.deepEqual(decision.chosen, { source: 'opengraph', locator: 'opengraph:published_at', value: '2024-06-14T06:30:00+02:00' });
    assert.match(decision.why, /opengraph is trusted over visible; json-ld states "soon", which is not a usable published at/);
    assert.deepEqual(
      decision.others.map((o) => o.source),
      ['json-ld', 'visible'],
    );
  });

  test('no title from any source: no article', () => {
    assert.equal(mergeArticle([candidate('opengraph', { description: 'x' })], null), null);
  });

  test('every field has an order of trust, and the canonical link leads the URL', () => {
    assert.deepEqual(Object.keys(ARTICLE_TRUST).sort(), [
      'authors',
      'description',
      'image_url',
      'language',
      'modified_at',
      'published_at',
      'section',
      'site_name',
      'tags',
      'title',
      'url',
    ]);
    assert.equal(ARTICLE_TRUST.url[0], 'meta');
  });
});

describe('the body: the page text, unless it is a fragment of the body the page publishes as data', () => {
  test("the page text wins over an articleBody that is cut short, and body_html is the page's", () => {
    const merged = mergeArticle([candidate('json-ld', { title: 'T', body: words(100) }), candidate('article-body', { body: words(150) })], '<p>page html</p>', true)!;
    assert.equal(merged.article.body, words(150));
    assert.equal(merged.article.body_html, '<p>page html</p>');
    assert.equal(merged.article.word_count, 150);
    assert.deepEqual([merged.article.provenance.body?.source, merged.article.provenance.body_html?.source], ['article-body', 'article-body']);
    assert.match(merged.explained!.fields.body!.why, /trusted over the json-ld articleBody/);
  });

  test('a page text that is a fragment of a full articleBody gives way to it, as escaped paragraphs', () => {
    const full = `${words(120)}\n\n${words(60, 'more')} <b>`;
    const merged = mergeArticle([candidate('json-ld', { title: 'T', body: full }), candidate('article-body', { body: words(30) })], '<p>teaser</p>', true)!;
    assert.equal(merged.article.body, full);
    assert.equal(merged.article.body_html, `<p>${words(120)}</p><p>${words(60, 'more')} &lt;b&gt;</p>`);
    assert.match(merged.explained!.fields.body!.why, /is a fragment of the json-ld articleBody/);
  });

  test('a short articleBody (a teaser) never replaces the page text', () => {
    const merged = mergeArticle([candidate('json-ld', { title: 'T', body: words(50) }), candidate('article-body', { body: words(10) })], '<p>x</p>')!;
    assert.equal(merged.article.body, words(10));
  });

  test('no body anywhere: body, body_html and word_count are null', () => {
    const { article } = mergeArticle([candidate('opengraph', { title: 'T' })], null)!;
    assert.deepEqual([article.body, article.body_html, article.word_count], [null, null, null]);
  });
});
