// Change detection for articles, pure: what a revision and a new sighting make.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { detectArticleChange, type ArticleSighting } from '../../src/tracking/article-changes.js';

const seen = (title: string, body: string | null): ArticleSighting['seen'] => ({ title, body, word_count: body === null ? null : body.split(' ').length });
const sighting = (before: ArticleSighting['before'], now: ArticleSighting['seen']): ArticleSighting => ({ article_id: 7, url: 'https://news.example/a', before, seen: now });

describe('article change detection', () => {
  const cases: Array<[string, ArticleSighting, ReturnType<typeof detectArticleChange>]> = [
    [
      'a new listing entry: created, without a body',
      sighting(null, seen('Ferry delayed', null)),
      { type: 'article.created', data: { title: 'Ferry delayed', url: 'https://news.example/a', has_body: false, word_count: null } },
    ],
    ['seen as it was: nothing', sighting({ title: 'Ferry delayed', body: 'Two hours late.' }, seen('Ferry delayed', 'Two hours late.')), null],
    [
      'its page read: the body filled in',
      sighting({ title: 'Ferry delayed', body: null }, seen('Ferry delayed', 'Two hours late.')),
      { type: 'article.updated', data: { changed: ['body'], title: 'Ferry delayed', url: 'https://news.example/a', word_count: 3, body_filled: true } },
    ],
    [
      'a new headline: the old one said',
      sighting({ title: 'Ferry delayed', body: 'Two hours late.' }, seen('Ferry cancelled', 'Two hours late.')),
      { type: 'article.updated', data: { changed: ['title'], title: 'Ferry cancelled', old_title: 'Ferry delayed', url: 'https://news.example/a', word_count: 3 } },
    ],
    [
      'both changed',
      sighting({ title: 'Ferry delayed', body: 'Two hours late.' }, seen('Ferry cancelled', 'It did not sail.')),
      { type: 'article.updated', data: { changed: ['title', 'body'], title: 'Ferry cancelled', old_title: 'Ferry delayed', url: 'https://news.example/a', word_count: 4 } },
    ],
  ];
  for (const [name, input, expected] of cases) test(name, () => assert.deepEqual(detectArticleChange(input), expected));
});
