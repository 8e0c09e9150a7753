// The page classifier as a table: evidence a page offers -> what the page is, and the reason given first.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { classifyPage, decidedByVisiblePage, decidedWithoutHeuristics, type PageEvidence } from '../../../src/scraping/extract/classify.js';
import type { PageType } from '../../../src/scraping/extract/types.js';

/** A page with no evidence at all; each row says only what differs. */
function page(overrides: {
  selectorItems?: number;
  structured?: Partial<PageEvidence['structured']>;
  openGraph?: Partial<PageEvidence['openGraph']>;
  layoutItems?: number;
  visible?: Partial<PageEvidence['visible']>;
  heuristics?: PageEvidence['heuristics'];
  articleBody?: boolean;
  prose?: PageEvidence['prose'];
}): PageEvidence {
  return {
    selectorItems: overrides.selectorItems ?? 0,
    structured: { products: 0, priced: 0, main: null, listEntries: 0, types: new Set(), ...overrides.structured },
    openGraph: { type: null, price: false, ...overrides.openGraph },
    layoutItems: overrides.layoutItems ?? 0,
    visible: { heading: false, buyControls: 0, price: false, priceMarked: false, namesPage: false, stock: false, code: false, ...overrides.visible },
    ...(overrides.heuristics === undefined ? {} : { heuristics: overrides.heuristics }),
    articleBody: overrides.articleBody ?? false,
    ...(overrides.prose === undefined ? {} : { prose: overrides.prose }),
  };
}

const productPage = { heading: true, buyControls: 1, price: true, priceMarked: true };

const CASES: ReadonlyArray<readonly [name: string, evidence: PageEvidence, type: PageType, reason: RegExp]> = [
  ['your selectors matched many items', page({ selectorItems: 12 }), 'listing', /your selectors matched 12 items/],
  ['your selectors matched one item', page({ selectorItems: 1 }), 'product', /matched 1 item$/],
  ['structured data names the main product', page({ structured: { products: 5, priced: 1, main: 'it is named the main entity of the page' } }), 'product', /main entity/],
  ['an ItemList with no main product', page({ structured: { products: 20, priced: 20, listEntries: 20 } }), 'listing', /lists 20 items/],
  ["several priced structured products, none the page's own", page({ structured: { products: 3, priced: 3 } }), 'listing', /3 priced products/],
  ['og:type product', page({ openGraph: { type: 'product' } }), 'product', /og:type is "product"/],
  ['og:type og:product.item', page({ openGraph: { type: 'og:product.item' } }), 'product', /og:type/],
  ['only a product:price:amount tag', page({ openGraph: { price: true } }), 'product', /product:price:amount/],
  ['the books layout', page({ layoutItems: 20 }), 'listing', /known listing layout/],
  [
    'a heading, a buy button and a price beside it, with a carousel of related cards',
    page({ visible: productPage, heuristics: { pricedCards: 4, articleEntries: 0 } }),
    'product',
    /one main heading, a buy control and a price/,
  ],
  [
    'many buy buttons (one per card) make a listing, not a product',
    page({ visible: { ...productPage, buyControls: 8 }, heuristics: { pricedCards: 8, articleEntries: 0 } }),
    'listing',
    /8 repeated cards/,
  ],
  [
    'a review: og:type article and a score box with a price, no buy button',
    page({ openGraph: { type: 'article' }, structured: { types: new Set(['review', 'product']) }, visible: { heading: true, price: true, priceMarked: true }, articleBody: true }),
    'article',
    /og:type is "article"/,
  ],
  [
    'a news front page: many teasers beside three subscription plan cards',
    page({ openGraph: { type: 'website' }, visible: { heading: true }, heuristics: { pricedCards: 3, articleEntries: 9 } }),
    'article-list',
    /9 article teasers outnumber 3 priced cards/,
  ],
  ['a shop listing with two blog teasers: the cards outnumber them', page({ heuristics: { pricedCards: 12, articleEntries: 2 } }), 'listing', /12 repeated cards/],
  ['a blog index', page({ heuristics: { pricedCards: 0, articleEntries: 6 } }), 'article-list', /6 article teasers/],
  [
    'a long article with a byline that mentions prices',
    page({ visible: { heading: true, price: true }, articleBody: true, heuristics: { pricedCards: 0, articleEntries: 0 } }),
    'article',
    /a long article body/,
  ],
  [
    'a product page without a buy button: a heading and a marked price',
    page({ visible: { heading: true, price: true, priceMarked: true }, heuristics: { pricedCards: 0, articleEntries: 0 } }),
    'product',
    /no buy control/,
  ],
  [
    'a heading and a loose amount in text is not enough',
    page({ visible: { heading: true, price: true, priceMarked: false }, heuristics: { pricedCards: 0, articleEntries: 0 } }),
    'none',
    /no product markup/,
  ],
  [
    'no markup, no buy button, many teasers: a heading the page title repeats with its stock stated beside it',
    page({ visible: { heading: true, namesPage: true, stock: true }, articleBody: true, heuristics: { pricedCards: 12, articleEntries: 9 } }),
    'product',
    /the page's title repeats, with its stock stated beside it.*12 priced cards elsewhere.*9 linked teasers elsewhere/,
  ],
  [
    'no markup, no buy button: a heading the page title repeats, with its product code and a price',
    page({ visible: { heading: true, namesPage: true, code: true, price: true }, heuristics: { pricedCards: 0, articleEntries: 0 } }),
    'product',
    /its product code and price beside it/,
  ],
  [
    'a product code without a price is not enough',
    page({ visible: { heading: true, namesPage: true, code: true }, heuristics: { pricedCards: 0, articleEntries: 0 } }),
    'none',
    /no product markup/,
  ],
  [
    'a stock line under a heading the page title does not repeat is not enough',
    page({ visible: { heading: true, stock: true }, articleBody: true, heuristics: { pricedCards: 0, articleEntries: 0 } }),
    'article',
    /a long article body/,
  ],
  [
    'structured data of a product without a price, nothing else',
    page({ structured: { products: 1 }, heuristics: { pricedCards: 0, articleEntries: 0 } }),
    'product',
    /without a price/,
  ],
  ['an empty page', page({ heuristics: { pricedCards: 0, articleEntries: 0 } }), 'none', /no product markup/],
  // Articles: one article, with related teasers, or a listing of them.
  [
    'a news story that marks up its own NewsArticle, with related teasers',
    page({ structured: { articleMain: true, types: new Set(['newsarticle']) }, openGraph: { type: 'article' }, heuristics: { pricedCards: 0, articleEntries: 6 } }),
    'article',
    /marks up the page's own article/,
  ],
  [
    "a story whose JSON-LD also marks up priced events, none the page's own",
    page({ structured: { articleMain: true, products: 2, priced: 2 } }),
    'article',
    /the 2 priced items it also marks up are not the page's own/,
  ],
  [
    'a review that marks up its product with an offer, the only product: still the product page it was',
    page({ structured: { articleMain: false, products: 1, priced: 1, main: 'it is the only marked-up product with a price', mainGuessed: true }, openGraph: { type: 'article' } }),
    'product',
    /marks up the page's product/,
  ],
  [
    'a shop product page that also marks up an article at its URL (a buying guide) keeps its named product',
    page({ structured: { articleMain: true, products: 1, priced: 1, main: 'it is named the main entity of the page' } }),
    'product',
    /main entity/,
  ],
  [
    'og:type article, a long text and related teasers: one article',
    page({ openGraph: { type: 'article' }, heuristics: { pricedCards: 0, articleEntries: 8 }, prose: { longestBlock: 420, longArticles: 0 } }),
    'article',
    /420-word text is the page's own article; the 8 linked headings are related stories/,
  ],
  [
    'og:type article, a short text (60+ words) and teasers: still one article',
    page({ openGraph: { type: 'article' }, heuristics: { pricedCards: 0, articleEntries: 4 }, prose: { longestBlock: 70, longArticles: 0 } }),
    'article',
    /og:type is "article"/,
  ],
  [
    'a blog index that shows whole posts, each in its own <article>',
    page({ heuristics: { pricedCards: 0, articleEntries: 5 }, articleBody: true, prose: { longestBlock: 600, longArticles: 5 } }),
    'article-list',
    /5 whole posts, each in its own <article>/,
  ],
  [
    'a news front page: teasers and no long text',
    page({ openGraph: { type: 'website' }, heuristics: { pricedCards: 0, articleEntries: 12 }, prose: { longestBlock: 40, longArticles: 0 } }),
    'article-list',
    /no block of text long enough/,
  ],
  [
    'a popular-posts ItemList (links, no prices) on an article page is no product listing',
    page({ structured: { listEntries: 5 }, openGraph: { type: 'article' } }),
    'article',
    /og:type is "article"/,
  ],
  [
    'a page of prose with no markup at all',
    page({ heuristics: { pricedCards: 0, articleEntries: 0 }, prose: { longestBlock: 380, longArticles: 0 } }),
    'article',
    /a block of 380 words of prose/,
  ],
  [
    "a short post in the page's one <article> element",
    page({ heuristics: { pricedCards: 0, articleEntries: 0 }, prose: { longestBlock: 90, longArticles: 0, soleArticleWords: 107 } }),
    'article',
    /one <article> element holds 107 words/,
  ],
  ['a short text is not an article', page({ heuristics: { pricedCards: 0, articleEntries: 0 }, prose: { longestBlock: 90, longArticles: 0 } }), 'none', /no long text/],
];

describe('classifyPage', () => {
  for (const [name, evidence, type, reason] of CASES) {
    test(`${name} -> ${type}`, () => {
      const verdict = classifyPage(evidence);
      assert.equal(verdict.type, type, verdict.reasons.join('; '));
      assert.match(verdict.reasons.join('; '), reason);
    });
  }

  test('the heuristics run only when markup does not decide', () => {
    assert.equal(decidedWithoutHeuristics(page({ layoutItems: 20 })), true);
    assert.equal(decidedWithoutHeuristics(page({ openGraph: { type: 'product' } })), true);
    assert.equal(decidedWithoutHeuristics(page({ structured: { main: 'it is the only marked-up product' } })), true);
    assert.equal(decidedWithoutHeuristics(page({ openGraph: { type: 'article' } })), false, 'article or article list depends on the teasers');
    assert.equal(decidedWithoutHeuristics(page({ visible: productPage })), false);
    assert.equal(decidedWithoutHeuristics(page({ structured: { articleMain: true } })), true, "an article marked up as the page's own needs no teasers counted");
  });

  test('the visible page alone decides a product page, with a buy box or with a named heading and its stock', () => {
    assert.equal(decidedByVisiblePage(page({ visible: productPage })), true);
    assert.equal(decidedByVisiblePage(page({ visible: { heading: true, namesPage: true, stock: true } })), true);
    assert.equal(decidedByVisiblePage(page({ visible: { heading: true, namesPage: true } })), false);
  });
});
