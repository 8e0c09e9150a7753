// The page classifier: from the evidence a page offers, decides what it is (one product, a listing, an article...) and says why.
import { ARTICLE_TYPES } from './structured/schema-article.js';
import type { PageType, PageVerdict } from './types.js';

/** Everything the classifier weighs; plain data, so it can be tested with tables. */
export interface PageEvidence {
  /** The caller supplied CSS selectors and they matched items. */
  selectorItems: number;
  structured: {
    /** Distinct products in JSON-LD, microdata and RDFa together. */
    products: number;
    priced: number;
    /** Why one of them is the page's own product (mainEntity, its URL, the heading...), or null. */
    main: string | null;
    /** The main product was only guessed (the sole product marked up), not named the page's own. */
    mainGuessed?: boolean;
    /** An Article, NewsArticle, BlogPosting... that is the page's own: named its main entity, or at its URL. */
    articleMain?: boolean;
    /** Entries of the largest ItemList or OfferCatalog. */
    listEntries: number;
    /** schema.org types seen outside products, lower-cased (article, newsarticle, review...). */
    types: ReadonlySet<string>;
  };
  openGraph: { type: string | null; price: boolean };
  /** Items of a known listing layout (the books site's product pods). */
  layoutItems: number;
  visible: {
    heading: boolean;
    /** This site's add-to-cart or buy controls, outside navigation and related-item strips. */
    buyControls: number;
    /** A price near the buy control or heading. */
    price: boolean;
    /** That price is marked as one (class, itemprop), not loose text. */
    priceMarked: boolean;
    /** The heading's text is what the page's <title> or og:title names: the page is about that one thing. */
    namesPage: boolean;
    /** The page states the product's stock in words beside it ("In stock", "Currently unavailable"). */
    stock: boolean;
    /** The page prints a labelled product code ("SKU: …", "Artikelnummer …"). */
    code: boolean;
  };
  /** Filled when cheaper evidence did not decide: repeated priced cards, article teasers. */
  heuristics?: {
    pricedCards: number;
    articleEntries: number;
  };
  /** A long article body: an <article> (or the page) with many words, a byline or a publication date. */
  articleBody: boolean;
  /** How the page's prose is laid out; filled with the heuristics. */
  prose?: {
    /** Words in its largest block of paragraphs. */
    longestBlock: number;
    /** <article> elements that each hold a whole post. */
    longArticles: number;
    /** Paragraph words of the page's only <article> element (0 when it has none or several). */
    soleArticleWords?: number;
  };
}

/** Types that say a page is news or writing (the publisher's own type counts: only news sites use it). */
const WRITING_TYPES: ReadonlySet<string> = new Set([...ARTICLE_TYPES, 'newsmediaorganization']);

/** A block of prose this long, with nothing for sale, is an article whatever else the page says. */
const PROSE_WORDS = 150;
/** With article markup (og:type article, an Article type), a shorter text is still the page's article, not a teaser. */
const MARKED_PROSE_WORDS = 60;

/** A page of this many purchase buttons is a listing of products, not one product. */
const MAX_BUY_CONTROLS_ON_PRODUCT_PAGE = 2;

/** True when the cheap evidence already decides, so the repeated-card heuristics need not run. */
export function decidedWithoutHeuristics(e: PageEvidence): boolean {
  return (
    e.selectorItems > 0 ||
    articleOutweighsProducts(e) ||
    e.structured.main !== null ||
    e.structured.priced >= 2 ||
    e.structured.listEntries >= 2 ||
    isOpenGraphProduct(e) ||
    e.layoutItems > 0
  );
}

/**
 * True when the visible page alone makes it a product page: whatever cards or teasers it also has
 * are other products, so the heuristics need not run.
 */
export function decidedByVisiblePage(e: PageEvidence): boolean {
  return hasBuyBox(e) || namesOneProduct(e);
}

/** A heading, one buy box, a price beside it. */
function hasBuyBox(e: PageEvidence): boolean {
  return e.visible.heading && e.visible.price && e.visible.buyControls > 0 && e.visible.buyControls <= MAX_BUY_CONTROLS_ON_PRODUCT_PAGE;
}

/**
 * A heading the page's title repeats, with the product's stock stated beside it (or its code and
 * price): a product page even when it cannot be bought today (no buy button) and has no markup.
 */
function namesOneProduct(e: PageEvidence): boolean {
  const v = e.visible;
  return v.heading && v.namesPage && (v.stock || (v.code && v.price)) && v.buyControls <= MAX_BUY_CONTROLS_ON_PRODUCT_PAGE;
}

export function classifyPage(e: PageEvidence): PageVerdict {
  const verdict = (type: PageType, ...reasons: string[]): PageVerdict => ({ type, reasons });
  const { structured: s } = e;

  if (e.selectorItems > 0) {
    return verdict(e.selectorItems === 1 ? 'product' : 'listing', `your selectors matched ${e.selectorItems} item${e.selectorItems === 1 ? '' : 's'}`);
  }
  if (articleOutweighsProducts(e)) {
    const others =
      s.priced > 0
        ? [`the ${s.priced} priced item${s.priced === 1 ? '' : 's'} it also marks up ${s.priced === 1 ? 'is' : 'are'} not the page's own (ads, events, reviewed products)`]
        : [];
    return verdict('article', "structured data marks up the page's own article", ...others);
  }
  const cards = e.heuristics?.pricedCards ?? 0;
  const teasers = e.heuristics?.articleEntries ?? 0;
  const articleReasons = articleEvidence(e, cards, teasers);
  if (s.listEntries >= 2 && s.main === null && !(s.priced === 0 && articleReasons.length > 0)) {
    return verdict('listing', `structured data lists ${s.listEntries} items (ItemList)`);
  }
  if (s.main !== null) {
    return verdict('product', `structured data marks up the page's product: ${s.main}`);
  }
  if (s.priced >= 2) {
    return verdict('listing', `structured data marks up ${s.priced} priced products and none is the page's own`);
  }
  if (isOpenGraphProduct(e)) {
    return verdict(
      'product',
      e.openGraph.type !== null && /product/i.test(e.openGraph.type)
        ? `og:type is "${e.openGraph.type}"`
        : 'the page states its price in Open Graph tags (product:price:amount or og:price)',
    );
  }
  if (e.layoutItems > 0) {
    return verdict('listing', `a known listing layout with ${e.layoutItems} items (books product pods)`);
  }

  const buying = e.visible.buyControls > 0;
  if (!hasBuyBox(e) && namesOneProduct(e)) {
    const beside = e.visible.stock ? 'its stock stated beside it' : 'its product code and price beside it';
    return verdict('product', `one main heading that the page's title repeats, with ${beside}`, ...elsewhere(cards, teasers));
  }
  if (articleReasons.length > 0 && !buying) {
    // An article or news page yields no priced products unless it marks them up as products.
    const notForSale = 'no add-to-cart control on the page, so prices in it are not products for sale';
    const list = listOfArticles(e, teasers);
    return list === null ? verdict('article', ...articleReasons, ...bodyReason(e), notForSale) : verdict('article-list', ...articleReasons, list, notForSale);
  }
  if (hasBuyBox(e)) {
    return verdict('product', 'one main heading, a buy control and a price beside it', ...elsewhere(cards, teasers));
  }
  if (cards >= 2) {
    return verdict('listing', `${cards} repeated cards each show a title and a price`);
  }
  if (teasers >= 2) {
    return verdict('article-list', `${teasers} repeated entries with linked headings`);
  }
  if (e.visible.heading && e.visible.price && e.visible.priceMarked && articleReasons.length === 0) {
    return verdict('product', 'one main heading and a price marked as such beside it (no buy control)');
  }
  if (articleReasons.length > 0) return verdict('article', ...articleReasons);
  if (s.products > 0) return verdict('product', 'structured data marks up a product without a price');
  const prose = e.prose?.longestBlock ?? 0;
  if (prose >= PROSE_WORDS && !buying) return verdict('article', `a block of ${prose} words of prose, and nothing for sale`);
  const sole = e.prose?.soleArticleWords ?? 0;
  if (sole >= MARKED_PROSE_WORDS && !buying) return verdict('article', `the page's one <article> element holds ${sole} words of paragraphs, and nothing is for sale`);
  return verdict('none', 'no product markup, no priced product near a heading, no repeated priced cards, no article list, no long text');
}

/**
 * The page marks up an article as its own (its main entity, or at its URL) and no product as its own
 * by name or URL: products it also marks up are ads, events or the thing reviewed.
 */
function articleOutweighsProducts(e: PageEvidence): boolean {
  const s = e.structured;
  return s.articleMain === true && (s.main === null || s.mainGuessed === true) && e.selectorItems === 0 && !isOpenGraphProduct(e);
}

/**
 * Why a page of writing is a listing of articles rather than one article, or null: several whole posts
 * in <article>s, or teasers with no block of text long enough to be the page's own article (on an
 * article page, teasers are its related stories).
 */
function listOfArticles(e: PageEvidence, teasers: number): string | null {
  const longArticles = e.prose?.longArticles ?? 0;
  if (longArticles >= 2) return `${longArticles} whole posts, each in its own <article>`;
  if (teasers < 2) return null;
  const marked = e.openGraph.type !== null && /^(?:og:)?article/i.test(e.openGraph.type);
  const longest = e.prose?.longestBlock ?? (e.articleBody ? PROSE_WORDS : 0);
  if (longest >= (marked ? MARKED_PROSE_WORDS : PROSE_WORDS)) return null;
  return `${teasers} entries with linked headings, and no block of text long enough to be the page's own article`;
}

function bodyReason(e: PageEvidence): string[] {
  const longest = e.prose?.longestBlock ?? 0;
  const teasers = e.heuristics?.articleEntries ?? 0;
  return longest > 0 && teasers >= 2 ? [`its ${longest}-word text is the page's own article; the ${teasers} linked headings are related stories`] : [];
}

/** Why the page's cards and teasers do not make it a listing. */
function elsewhere(cards: number, teasers: number): string[] {
  const reasons: string[] = [];
  if (cards >= 2) reasons.push(`the ${cards} priced cards elsewhere are other products (related items)`);
  if (teasers >= 2) reasons.push(`the ${teasers} linked teasers elsewhere are not the product`);
  return reasons;
}

function isOpenGraphProduct(e: PageEvidence): boolean {
  return (e.openGraph.type !== null && /^(?:og:)?product/i.test(e.openGraph.type)) || e.openGraph.price;
}

/** Why the page reads as an article or a news page; empty when it does not. */
function articleEvidence(e: PageEvidence, cards: number, teasers: number): string[] {
  const reasons: string[] = [];
  if (e.openGraph.type !== null && /^(?:og:)?article/i.test(e.openGraph.type)) reasons.push(`og:type is "${e.openGraph.type}"`);
  const types = [...e.structured.types].filter((t) => WRITING_TYPES.has(t));
  if (types.length > 0) reasons.push(`structured data describes ${types.join(', ')}`);
  if (e.articleBody) reasons.push('a long article body with a byline or date');
  if (teasers >= 2 && teasers >= cards) reasons.push(`${teasers} article teasers${cards > 0 ? ` outnumber ${cards} priced cards` : ''}`);
  return reasons;
}
