// Articles through extract(): pages that imitate real news and blog structures, each field with its provenance, and explain.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Piscina } from 'piscina';
import type { ExtractTask } from '../../../src/scraping/extract/extract-worker.js';
import { extract } from '../../../src/scraping/extract/index.js';
import type { ExtractionResult } from '../../../src/scraping/extract/types.js';

const SITE = 'http://127.0.0.1:1234';
const pagesDir = new URL('../../fixtures/pages/', import.meta.url);
const read = (file: string) => readFileSync(new URL(file, pagesDir), 'utf8');
const run = (file: string, html = read(file)) => extract(html, `${SITE}/pages/${file}`, { explain: true });

describe('a news story with related links and a comment section', () => {
  const result = run('news-story.html');
  const [article] = result.articles;

  test('is one article and no product', () => {
    assert.equal(result.page_type, 'article', result.explanation?.page_type.reasons.join('; '));
    assert.deepEqual(result.items, []);
    assert.equal(result.articles.length, 1);
    assert.equal(result.extractor, 'json-ld');
  });

  test('every field, from the most trusted source that states it', () => {
    const { body, body_html, provenance, ...fields } = article!;
    assert.deepEqual(fields, {
      url: 'https://news.example/uk/harbour-wall-collapse',
      title: 'Harbour wall collapse closes coastal road',
      description: 'A 30-metre stretch of the harbour wall at Port Ellery gave way on Tuesday morning.',
      authors: ['Morag Lindsay'],
      published_at: '2024-03-05T07:42:00Z',
      modified_at: '2024-03-05T11:15:00Z',
      language: 'en-GB',
      site_name: 'Coastline News',
      image_url: 'https://news.example/img/harbour-wall-1200.jpg',
      section: 'UK',
      tags: ['Storms', 'Transport'],
      word_count: 255,
    });
    assert.deepEqual(Object.fromEntries(Object.entries(provenance).map(([field, p]) => [field, p.source])), {
      title: 'json-ld',
      description: 'meta',
      authors: 'json-ld',
      published_at: 'json-ld',
      modified_at: 'json-ld',
      language: 'meta',
      site_name: 'opengraph',
      image_url: 'json-ld',
      section: 'opengraph',
      tags: 'opengraph',
      url: 'meta',
      body: 'article-body',
      body_html: 'article-body',
    });
    assert.equal(provenance.published_at?.locator, 'ld+json[0] $.datePublished');
    assert.equal(provenance.url?.locator, 'link[rel="canonical"]');
  });

  test('the body is the story, paragraphs apart; its HTML keeps the structure and absolute links', () => {
    assert.match(article!.body!, /^A thirty-metre stretch[^\n]+\n\nNobody was hurt\./);
    assert.doesNotMatch(article!.body!, /HarbourWatcher|Related stories|Share on|READ MORE|Photograph/);
    assert.match(article!.body_html!, /<h2>Diversion in place<\/h2>/);
    assert.match(article!.body_html!, /<li>allow extra time for the morning ferry;<\/li>/);
    assert.match(article!.body_html!, /<a href="http:\/\/127\.0\.0\.1:1234\/uk\/harbour-report-2019" rel="nofollow noopener noreferrer">more than two million pounds<\/a>/);
    assert.doesNotMatch(article!.body_html!, /<script|class=|<figcaption/);
  });

  test('explain answers the candidates of every source and, per field, the choice and why', () => {
    const explanation = result.explanation!;
    // Explain runs every source, the listing heuristic too: its entries here are the story's related links.
    assert.deepEqual(Object.keys(explanation.article_candidates).sort(), ['article-body', 'article-list', 'json-ld', 'meta', 'opengraph', 'visible']);
    assert.equal(explanation.article_candidates['json-ld']?.[0]?.fields.url, 'https://news.example/uk/harbour-wall-collapse', 'its mainEntityOfPage');
    assert.match(String(explanation.article_candidates['article-body']?.[0]?.fields.body), /^A thirty-metre stretch.*… \(\d+ characters\)$/s);
    const [explained] = explanation.articles;
    assert.match(explained!.fields.title!.why, /json-ld is trusted over visible, opengraph, meta/);
    assert.deepEqual(
      explained!.fields.title!.others.map((o) => o.value),
      ['Harbour wall collapse closes coastal road', 'Harbour wall collapse closes coastal road | Coastline News', 'Harbour wall collapse closes coastal road - Coastline News'],
    );
    assert.equal(explained!.body?.method, 'readability');
    assert.deepEqual(Object.keys(explained!.body!.removed).sort(), ['caption', 'comments', 'header-footer', 'newsletter', 'notice', 'related', 'share']);
  });

  test('without its JSON-LD, the story is still one article: its related and "more" teasers are not a listing', () => {
    const bare = run('news-story.html', read('news-story.html').replace(/<script type="application\/ld\+json">[\s\S]*?<\/script>/, ''));
    assert.equal(bare.page_type, 'article');
    assert.match(bare.explanation!.page_type.reasons.join('; '), /its \d+-word text is the page's own article; the \d+ linked headings are related stories/);
    assert.equal(bare.articles[0]?.title, 'Harbour wall collapse closes coastal road');
    assert.equal(bare.articles[0]?.published_at, '2024-03-05T07:42:00Z', 'article:published_time');
    assert.deepEqual(bare.articles[0]?.authors, ['Morag Lindsay'], 'the rel=author byline');
    assert.ok(bare.explanation!.dropped.some((d) => d.source === 'article-list' && /related stories/.test(d.reason)));
  });
});

describe('a blog post with a JSON-LD articleBody', () => {
  test('the page text is the body; the articleBody agrees and explain says which was taken', () => {
    const result = run('blog-post-jsonld.html');
    const [article] = result.articles;
    assert.equal(result.page_type, 'article');
    assert.match(article!.body!, /^Water boils at about 95 degrees/);
    assert.doesNotMatch(article!.body!, /Share this|Keeping a rye starter|2,200 metres|cooling rack|second bake/);
    assert.deepEqual(
      [article!.authors, article!.section, article!.tags, article!.language],
      [['Ines Garrido'], 'Bread', ['sourdough', 'baking at altitude', 'hydration'], 'en-US'],
    );
    assert.deepEqual([article!.published_at, article!.modified_at], ['2024-02-11T16:05:00-07:00', '2024-02-12T09:30:00-07:00']);
    assert.equal(article!.provenance.authors?.locator, 'ld+json[0] $.@graph[2]', 'the author is the Person the post refers to by @id');
    assert.match(result.explanation!.articles[0]!.fields.body!.why, /the page's text \(\d+ words\) is trusted over the json-ld articleBody/);
  });

  test('when the page shows only a teaser of the post, the full articleBody is the body', () => {
    const html = read('blog-post-jsonld.html').replace(
      /<div class="entry-content">[\s\S]*?<\/div>\s*<footer/,
      '<div class="entry-content"><p>Water boils at about 95 degrees up here, and that one fact changes more about baking bread than most recipes admit.</p><p><a href="/subscribe">Subscribe to read the rest of this post, with the three changes I make to every loaf.</a></p></div><footer',
    );
    const [article] = run('blog-post-jsonld.html', html).articles;
    assert.equal(article!.provenance.body?.source, 'json-ld');
    assert.match(article!.body!, /\n\nThe third is the oven\./);
    assert.match(article!.body_html!, /^<p>Water boils[^<]+<\/p><p>The first thing/);
  });
});

describe('a page whose meta date and visible date disagree', () => {
  const result = run('dated-story.html');
  const [article] = result.articles;

  test('article:published_time is the publication date; the visible "updated" time is shown as the other candidate', () => {
    assert.equal(article!.published_at, '2024-06-14T06:30:00+02:00');
    const decision = result.explanation!.articles[0]!.fields.published_at!;
    assert.equal(decision.chosen.source, 'opengraph');
    assert.deepEqual(
      decision.others.map((o) => [o.source, o.value]),
      [
        ['meta', '2024-06-14'],
        ['visible', '2024-06-15T09:12:00+02:00'],
      ],
    );
  });

  test('og:url names it when there is no canonical link; the author is the meta name, not the profile URL', () => {
    assert.equal(article!.url, 'https://gazette-du-val.example/ville/marche-couvert-rouvre');
    assert.deepEqual(article!.authors, ['Claire Fontaine']);
    assert.equal(article!.language, 'fr');
    assert.match(article!.body!, /^Les commerçants l'attendaient/);
    assert.doesNotMatch(article!.body!, /parking des Tanneurs|Claire Fontaine/);
  });
});

describe('a listing of articles', () => {
  test('a news front page yields its stories as articles without a body: title, link, summary, image and date as shown', () => {
    const result = extract(read('news-front-page.html'), `${SITE}/`, { explain: true });
    assert.equal(result.page_type, 'article-list');
    assert.deepEqual(result.items, []);
    assert.equal(result.nextUrl, `${SITE}/page/2`);
    assert.deepEqual(
      result.articles.map(({ title, url, description, image_url, published_at, body, site_name, language }) => ({
        title,
        url,
        description,
        image_url,
        published_at,
        body,
        site_name,
        language,
      })),
      [
        {
          title: 'Old mill bridge reopens to traffic after repairs',
          url: `${SITE}/news/2024/05/bridge-reopens`,
          description: 'The single-lane bridge was closed for eleven weeks.',
          image_url: `${SITE}/media/bridge-640.jpg`,
          published_at: '2024-05-21T08:15:00-04:00',
          body: null,
          site_name: 'Valley Courier',
          language: 'en',
        },
        {
          title: 'School board approves budget with two new teachers',
          url: `${SITE}/news/2024/05/school-budget`,
          description: 'The vote was five to two after a long public hearing.',
          image_url: `${SITE}/media/school-640.jpg`,
          published_at: '2024-05-20T21:40:00-04:00',
          body: null,
          site_name: 'Valley Courier',
          language: 'en',
        },
        {
          title: 'Rowing club wins regional title for the first time',
          url: `${SITE}/sport/2024/05/rowing-club`,
          description: 'A late surge in the final race sealed it.',
          image_url: null,
          published_at: null,
          body: null,
          site_name: 'Valley Courier',
          language: 'en',
        },
        {
          title: 'Opinion: the library needs its Sunday hours back',
          url: 'https://valleycourier.example/opinion/2024/05/library-hours',
          description: 'A letter from the Friends of the Library.',
          image_url: `${SITE}/media/library-320.jpg`,
          published_at: '2024-05-19',
          body: null,
          site_name: 'Valley Courier',
          language: 'en',
        },
      ],
    );
    assert.equal(result.articles[0]?.provenance.image_url?.locator, 'html > body > main > section > div:nth-of-type(1) > a > img[src]');
    assert.equal(result.explanation!.article_candidates['article-body'], undefined, 'a listing is not read for a body');
  });
});

describe('what the page marks up besides its article', () => {
  const prose = Array.from(
    { length: 6 },
    (_, i) => `<p>Paragraph ${i + 1} of the story tells readers what happened at the launch site, who was there and what comes next for the programme.</p>`,
  ).join('');

  test("a paywall's isPartOf Product (the publication) is not a product for sale", () => {
    const ld = {
      '@context': 'https://schema.org',
      '@type': 'NewsArticle',
      headline: 'Launch delayed',
      isPartOf: { '@type': ['CreativeWork', 'Product'], name: 'The Example Times', productID: 'example.com:basic' },
      isAccessibleForFree: false,
    };
    const result = extract(
      `<html><head><script type="application/ld+json">${JSON.stringify(ld)}</script></head><body><article><h1>Launch delayed</h1>${prose}</article></body></html>`,
      `${SITE}/story`,
    );
    assert.deepEqual([result.page_type, result.items.length, result.articles[0]?.title, result.articles[0]?.site_name], ['article', 0, 'Launch delayed', 'The Example Times']);
  });

  test('priced events in a sidebar: the page is still its article, and the marked-up offers stay products', () => {
    const events = [1, 2].map((n) => ({
      '@type': 'Event',
      name: `Space Expo ${n}`,
      url: `${SITE}/event/${n}`,
      offers: { '@type': 'Offer', price: String(100 * n), priceCurrency: 'USD' },
    }));
    const ld = { '@context': 'https://schema.org', '@type': 'NewsArticle', headline: 'Launch delayed', mainEntityOfPage: `${SITE}/story` };
    const html = `<html><head><meta property="og:type" content="article"><script type="application/ld+json">${JSON.stringify(events)}</script><script type="application/ld+json">${JSON.stringify(ld)}</script></head><body><article><h1>Launch delayed</h1>${prose}</article></body></html>`;
    const result = extract(html, `${SITE}/story`, { explain: true });
    assert.equal(result.page_type, 'article');
    assert.match(result.explanation!.page_type.reasons.join('; '), /the 2 priced items it also marks up are not the page's own/);
    assert.deepEqual(
      result.items.map((i) => [i.title, i.price]),
      [
        ['Space Expo 1', 100],
        ['Space Expo 2', 200],
      ],
    );
    assert.match(result.articles[0]?.body ?? '', /^Paragraph 1 of the story/);
  });

  test('a page of prose written between <br>s, with no markup at all, is an article', () => {
    const lines = Array.from({ length: 12 }, (_, i) => `Line ${i + 1} of the column, where the writer remembers the town's old cinema and the films it showed.`).join('<br><br>');
    const result = extract(
      `<html><head><title>The old cinema</title></head><body><div class="menu"><a href="/">Home</a></div><div id="text">${lines}</div></body></html>`,
      `${SITE}/column`,
      { explain: true },
    );
    assert.equal(result.page_type, 'article');
    assert.match(result.explanation!.page_type.reasons[0]!, /a block of \d+ words of prose/);
    assert.equal(result.articles[0]?.title, 'The old cinema');
    assert.match(result.articles[0]?.body ?? '', /^Line 1 of the column/);
  });

  test('a product page yields its product and no article, and its text is never read for a body', () => {
    const result = extract(read('jsonld-product.html'), `${SITE}/pages/jsonld-product.html`, { explain: true });
    assert.equal(result.page_type, 'product');
    assert.deepEqual(result.articles, []);
    assert.deepEqual(result.explanation!.article_candidates, {});
  });
});

describe('hostile article pages', () => {
  test('nesting thousands deep, or thousands of bylines, labels and dates, is read in bounded work: the text is still found', async (t) => {
    // Quadratic work on these would take minutes; each page runs in a thread the test can stop (the hang guard).
    const pool = new Piscina<ExtractTask, ExtractionResult>({
      filename: fileURLToPath(new URL('../../../src/scraping/extract/extract-worker.ts', import.meta.url)),
      maxThreads: 1,
    });
    t.after(() => pool.destroy());
    const prose = Array.from({ length: 8 }, (_, i) => `<p>Paragraph ${i} has enough words in it to be read as the text of an article by any rule.</p>`).join('');
    const head = '<head><meta property="og:type" content="article"><title>Deep</title></head>';
    const pages: Record<string, string> = {
      'divs 10,000 deep': `${'<div>'.repeat(10_000)}${prose}${'</div>'.repeat(10_000)}`,
      'bylines with dates, nested 5,000 deep': `${'<span class="byline"><time datetime="2024-01-01">x</time>'.repeat(5000)}${prose}${'</span>'.repeat(5000)}`,
      'ad labels nested 20,000 deep': `${'<div class="x"><span>Ad'.repeat(20_000)}${prose}`,
      'links nested 5,000 deep after the text': `<div>${prose}${'<b><a href="/x">'.repeat(5000)}x${'</a></b>'.repeat(5000)}</div>`,
      'lines between breaks in spans nested 5,000 deep': `${'<span>text text<br>'.repeat(5000)}${prose}`,
    };
    for (const [what, body] of Object.entries(pages)) {
      const result = await pool.run({ html: `<html>${head}<body>${body}</body></html>`, pageUrl: `${SITE}/deep`, options: {} }, { signal: AbortSignal.timeout(60_000) });
      assert.equal(result.page_type, 'article', what);
      assert.match(result.articles[0]?.body ?? '', /Paragraph 0 has enough words[\s\S]*Paragraph 7/, what);
    }
  });
});
