// The article body: page furniture found by role, the body chosen (marked up or Readability's), related links in the text, and text by blocks.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { extractArticleBody } from '../../../src/scraping/extract/article/article-body.js';
import { findBoilerplate } from '../../../src/scraping/extract/article/article-boilerplate.js';
import { parseDocument, type DomElement } from '../../../src/scraping/extract/article/article-dom.js';
import { removeInlineRelatedLinks } from '../../../src/scraping/extract/article/article-inline-links.js';
import { blockText } from '../../../src/scraping/extract/article/article-text.js';

const pagesDir = new URL('../../fixtures/pages/', import.meta.url);
const read = (file: string) => readFileSync(new URL(file, pagesDir), 'utf8');

/** A story's worth of prose: enough paragraphs that any extractor sees the text as the page's main content. */
const PROSE = [
  'The county council voted on Tuesday to keep the branch library open for another two years, reversing a plan that would have closed it in the spring.',
  'Councillors said a petition signed by more than four thousand residents had changed their minds, along with an offer from volunteers to staff the Saturday opening.',
  'The library will cut its weekday hours slightly to save money, and the mobile library that visits the outlying villages will run every fortnight instead of every week.',
  'Residents who spoke at the meeting welcomed the decision but said they would keep campaigning for the hours to be restored once the budget allows.',
]
  .map((p) => `<p>${p}</p>`)
  .join('\n');

const page = (body: string, head = '') => `<!doctype html><html><head><title>Library saved</title>${head}</head><body>${body}</body></html>`;

describe('page furniture, found by its role', () => {
  /** [what the page holds, the markup, the kind it is] */
  const CASES: ReadonlyArray<readonly [string, string, string]> = [
    ['a share bar', '<div class="share-bar"><a href="#">Share</a></div>', 'share'],
    ['WordPress sharing buttons', '<div class="sharedaddy sd-sharing-enabled"><a href="#">Twitter</a></div>', 'share'],
    ['a newsletter box', '<div class="newsletter-signup"><p>Get our briefing</p></div>', 'newsletter'],
    ['related stories', '<div class="related-stories"><a href="/x">Other story</a></div>', 'related'],
    ['a comment section by id', '<section id="comments"><p>I disagree.</p></section>', 'comments'],
    ['a byline', '<p class="c-byline__name">By Jane Doe</p>', 'byline'],
    ['a camelCase caption class', '<span class="newsCaption">The bridge at dusk</span>', 'caption'],
    ['a figcaption', '<figure><img src="a.jpg"><figcaption>Photo: agency</figcaption></figure>', 'caption'],
    ['tags', '<ul class="post-tags"><li><a href="/t">news</a></li></ul>', 'tags'],
    ['an ad slot', '<div class="ad-slot"></div>', 'ad'],
    ['an empty ad label', '<div class="x9f2"><span>Advertisement</span></div>', 'ad'],
    ['a cookie banner', '<div id="cookie-law-info-bar"><p>We use cookies</p></div>', 'notice'],
    ['a date on its own line', '<div class="when"><time datetime="2024-01-02">2 Jan</time></div>', 'byline'],
    ['metadata marked up inside the text', '<span itemprop="datePublished">2 January 2024</span>', 'byline'],
    ['Bootstrap-hidden print copy', '<div class="d-none d-print-block"><p>Citation: …</p></div>', 'hidden'],
    ['a copy shown only in print', '<div class="print-header"><span>https://news.example/story.php</span></div>', 'hidden'],
    ['a gallery and its controls', '<div class="asset_gallery"><p>Image 1 of 5</p><p>Caption</p><p>Close</p></div>', 'caption'],
    ['a header element', '<header><p>Site name</p></header>', 'header-footer'],
    ['a form', '<form><input name="q"></form>', 'controls'],
  ];
  for (const [what, markup, kind] of CASES) {
    test(`${what} is ${kind}`, () => {
      const document = parseDocument(page(`${markup}<div class="story">${PROSE}</div>`))!;
      const kinds = findBoilerplate(document).map((r) => r.kind);
      assert.deepEqual(kinds, [kind]);
    });
  }

  test('a Bootstrap element hidden only on small screens is shown to the annotating desktop reader, and kept', () => {
    const document = parseDocument(page(`<div class="d-none d-lg-block"><p>Shown on desktops</p></div><div>${PROSE}</div>`))!;
    assert.deepEqual(findBoilerplate(document), []);
  });

  test('a <time> inside a sentence is text, not a dateline', () => {
    const document = parseDocument(page(`<div>${PROSE}<p>The vote was on <time datetime="2024-01-02">2 January</time> at noon.</p></div>`))!;
    assert.deepEqual(findBoilerplate(document), []);
  });

  test('a wrapper whose class names a role but holds most of the prose is the article, and stays', () => {
    const document = parseDocument(page(`<div class="article-with-share-tools">${PROSE}</div><div class="share-bar">Share</div>`))!;
    const removed = findBoilerplate(document);
    assert.deepEqual(
      removed.map((r) => [r.kind, r.el.getAttribute('class')]),
      [['share', 'share-bar']],
    );
  });

  test('the headline h1 goes; another h1 inside the text (some sites write subheadings so) stays', () => {
    const document = parseDocument(page(`<h1>Library saved</h1><div>${PROSE}<h1>What happens next</h1><p>More text.</p></div>`))!;
    const removed = findBoilerplate(document);
    assert.deepEqual(
      removed.map((r) => [r.kind, r.el.textContent]),
      [['headline', 'Library saved']],
    );
  });
});

describe('related links written into the text', () => {
  const clean = (html: string) => {
    const document = parseDocument(page(`<div id="root">${html}</div>`))!;
    const root = document.querySelectorAll('#root')[0] as DomElement;
    const removed = removeInlineRelatedLinks(root);
    return { removed, text: blockText(root) };
  };
  const CASES: ReadonlyArray<readonly [string, string, number, string]> = [
    ['a labelled link ("READ MORE:")', '<p>Text.</p><p><strong>READ MORE: </strong><a href="/x">Another headline about the storm</a></p>', 1, 'Text.'],
    ['a label in capitals without a colon', '<p>Text.</p><p>DON\'T MISS <a href="/x">The best photos of the week</a></p>', 1, 'Text.'],
    ['a label in Italian, in brackets', '<p>Text.</p><p>(Leggi anche su: <a href="/x">I Cavalieri dello Zodiaco: ecco gli attori</a>)</p>', 1, 'Text.'],
    [
      '"Related:" and the list of links after it',
      '<p>Text.</p><p>Related: <a href="/a">Photos of the moon</a></p><ul><li><a href="/b">Moon facts</a></li><li><a href="/c">Lunar landers</a></li></ul><p>More text.</p>',
      2,
      'Text.\n\nMore text.',
    ],
    [
      'a sentence that starts with words and ends in a link',
      '<p>Australian-born Assange faces <a href="/x">a charge of conspiracy to commit computer intrusion</a>.</p>',
      0,
      'Australian-born Assange faces a charge of conspiracy to commit computer intrusion.',
    ],
    [
      'a list of links with no label (background pieces)',
      '<p>He is held in London.</p><ul><li><a href="/a">Profile: Julian Assange</a></li><li><a href="/b">Timeline of saga</a></li></ul>',
      0,
      'He is held in London.\n\nProfile: Julian Assange\n\nTimeline of saga',
    ],
    ['a fully linked paragraph with no label', '<p><a href="/results">CLICK FOR FULL STATE SWIM RESULTS</a></p>', 0, 'CLICK FOR FULL STATE SWIM RESULTS'],
    ['a short heading and a list that is all links', '<p>Text.</p><h3>More Great Stories</h3><ul><li><a href="/a">One</a></li><li><a href="/b">Two</a></li></ul>', 2, 'Text.'],
    ["a short heading and the text's own list", '<h3>You will need</h3><ul><li>flour</li><li>water</li></ul>', 0, 'You will need\n\nflour\n\nwater'],
  ];
  for (const [what, html, count, text] of CASES) {
    test(`${what}: ${count} removed`, () => {
      assert.deepEqual(clean(html), { removed: count, text });
    });
  }
});

describe('text by blocks', () => {
  const CASES: ReadonlyArray<readonly [string, string, string]> = [
    ['adjacent blocks never run together', '<h3>Foo</h3><p>Bar</p>', 'Foo\n\nBar'],
    ['inline elements join their words', '<p>A <b>bold</b> and <a href="#">linked</a> word.</p>', 'A bold and linked word.'],
    ['a line break inside a paragraph', '<p>line one<br>line two</p>', 'line one\nline two'],
    ['list items are paragraphs', '<ul><li>one</li><li>two</li></ul>', 'one\n\ntwo'],
    ['table cells sit side by side, rows apart', '<table><tr><td>a</td><td>b</td></tr><tr><td>c</td><td>d</td></tr></table>', 'a b\n\nc d'],
    ['scripts and buttons are not text', '<p>x<script>var y;</script><button>Share</button></p>', 'x'],
    ['text straight in a div, between breaks', '<div>first line<br><br>second line</div>', 'first line\nsecond line'],
  ];
  for (const [what, html, text] of CASES) {
    test(what, () => {
      const document = parseDocument(page(`<div id="root">${html}</div>`))!;
      assert.equal(blockText(document.querySelectorAll('#root')[0] as DomElement), text);
    });
  }
});

describe('the body of whole pages', () => {
  test('a news story: its paragraphs, subheading and list, without headline, byline, share bar, caption, related links, newsletter or comments', () => {
    const body = extractArticleBody(read('news-story.html'))!;
    assert.equal(body.method, 'readability');
    assert.match(body.locator, /div\.story-body/);
    assert.match(body.text, /^A thirty-metre stretch of the harbour wall/);
    assert.match(body.text, /\n\nDiversion in place\n\n/);
    assert.match(body.text, /\n\nallow extra time for the morning ferry;\n\n/);
    assert.match(body.text, /in the village hall\.$/);
    for (const gone of [
      'Harbour wall collapse closes',
      'Morag Lindsay',
      'Share on',
      'Photograph: Coastguard',
      'READ MORE',
      'Storm surge: what we know',
      'Related stories',
      'morning briefing',
      'HarbourWatcher',
      'Shinty final',
      'cookies',
      '©',
    ]) {
      assert.ok(!body.text.includes(gone), `"${gone}" is not the story's text`);
    }
    assert.deepEqual(Object.keys(body.removed).sort(), ['caption', 'comments', 'header-footer', 'newsletter', 'notice', 'related', 'share']);
  });

  test('a blog post: the entry content without its sharing buttons, related posts, caption or comments', () => {
    const body = extractArticleBody(read('blog-post-jsonld.html'))!;
    assert.deepEqual(
      body.text.split('\n\n').map((p) => p.slice(0, 30)),
      ['Water boils at about 95 degree', 'The first thing you notice is ', 'The second is moisture. Flour ', 'The third is the oven. I bake '],
    );
  });

  test('the element marked up as articleBody is the body, without the date marked up inside it', () => {
    const html = page(
      `<div class="sidebar">${PROSE.replace(/library/g, 'museum')}</div><div class="post" itemscope itemtype="https://schema.org/NewsArticle"><div itemprop="articleBody"><span itemprop="datePublished">22 January 2018</span>${PROSE}</div></div>`,
    );
    const body = extractArticleBody(html)!;
    assert.equal(body.method, 'marked-up');
    assert.equal(body.locator, 'html > body > div.post > div');
    assert.match(body.text, /^The county council voted/);
    assert.doesNotMatch(body.text, /museum|22 January/);
  });

  test('the same text marked up twice (a copy for another layout) is read once', () => {
    const html = page(`<div itemprop="articleBody">${PROSE}</div><div itemprop="articleBody">${PROSE}</div>`);
    const body = extractArticleBody(html)!;
    assert.equal(body.text.split('The county council voted').length, 2);
  });

  test('a page with no text block is no article body', () => {
    assert.equal(extractArticleBody(page('<nav><a href="/">Home</a></nav><p>Hi.</p>')), null);
    assert.equal(extractArticleBody(''), null);
  });
});
