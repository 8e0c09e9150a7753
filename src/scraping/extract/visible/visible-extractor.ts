// Reads the main product of a product page from what a shopper sees: the title, the buy box and its price, the stock line, the product code.
import type { AnyNode, Element } from 'domhandler';
import { isBuyControl, purchasePoints, siteOf } from './buy-controls.js';
import { absoluteUrl, cleanText, commonAncestor, distance, isElement, priceFromText, textField, visibleText, withFields } from '../dom-helpers.js';
import { chooseHeading, namesPage, pageNames, type HeadingCandidate } from './main-heading.js';
import type { Page } from '../page.js';
import { choosePrice, isPriceMarked, MAX_PRICE_CHARS, type PriceSpot } from './price-spots.js';
import { stockFromText } from './stock-text.js';
import { isCodeMarked } from './product-codes.js';
import { controlState, shownCode, stockStatement, type TextSpot } from './page-statements.js';
import { addPriceSpot } from './split-prices.js';
import type { Candidate, CandidateFields, Located } from '../types.js';
import type { Extractor } from '../extractor.js';

/** What the visible page shows, for the classifier and for the main product. */
export interface VisibleEvidence {
  /** The element that titles the page's product (see main-heading.ts), if any. */
  heading: Element | null;
  /** The heading's text is what the page's <title> or og:title names. */
  headingNamesPage: boolean;
  /** Add-to-cart and buy controls of this site, outside navigation and related-item strips. */
  buyControls: Element[];
  /** The main product as read from the page; null without a heading. */
  candidate: Candidate | null;
  /** The chosen price was marked as one (class "price", itemprop, data-price), not loose text. */
  priceMarked: boolean;
  /** The page states the product's stock in words ("In stock", "Derzeit nicht verfügbar"). */
  stockStated: boolean;
  /** The page prints a labelled product code ("SKU: …", "Артикул: …"). */
  codeShown: boolean;
}

/** Regions that hold other products: carousels, "related", "customers also bought". */
const RELATED_REGION =
  /related|recommend|similar|carousel|upsell|up-sell|cross-?sell|also-?(?:bought|viewed|like)|recently-?viewed|you-?may|bought-?together|suggest|sponsored|breadcrumb|comparison/i;

/** Regions of what customers wrote (reviews, questions): their prices and stock words are not the shop's. */
const CUSTOMER_REGION = /(?:^|[\s_-])(?:reviews?|comments?|testimonials?|questions?)(?:$|[\s_-])/i;

/** Elements the page names its buy box. */
const BUY_BOX = /buy-?box|buy_box/i;

/** Elements whose class or id says they state stock ("#availability", ".stockcheck__text"). */
const STOCK_MARKER = /availability|stock|lager|dispon|наличи/i;

const SKIPPED: ReadonlySet<string> = new Set(['script', 'style', 'noscript', 'template', 'head', 'option', 'select', 'textarea', 'svg']);

/** Class tokens that hide an element ("hidden", "a-hidden", "aok-hidden", "d-none"); screen-reader-only text ("visually-hidden") stays. */
const HIDDEN_CLASS = /(?:^|\s)(?:(?:[a-z]{1,4}-)?hidden|hide|d-none|display-none)(?:\s|$)/i;

/** Class, id or itemprop names of the element that holds a product's title. */
const TITLE_MARKER = /product[-_ ]?(?:title|name)|item[-_]?title|deal[-_]?title/i;

/** More stock lines or distinct codes than this on a page belong to several products (a listing's cards). */
const MAX_LINES = 3;

/** Headings and code-marked elements read per page at most: real pages have a handful. */
const MAX_CANDIDATES = 100;

export const visibleExtractor: Extractor = {
  source: 'visible',
  extract(page: Page): Candidate[] {
    const { candidate } = readVisible(page);
    return candidate === null ? [] : [candidate];
  },
};

const cache = new WeakMap<Page, VisibleEvidence>();

/** The visible evidence of `page`, read once per page (the classifier and the extractor share it). */
export function readVisible(page: Page): VisibleEvidence {
  const known = cache.get(page);
  if (known !== undefined) return known;
  const evidence = computeVisible(page);
  cache.set(page, evidence);
  return evidence;
}

interface Walked {
  headings: HeadingCandidate[];
  buyControls: Element[];
  /** The controls inside an element the page names its buy box ("#buybox", ".product-buy-box"). */
  inBuyBox: Set<Element>;
  prices: PriceSpot[];
  texts: TextSpot[];
  stockMarked: Set<Element>;
  codeMarked: Element[];
  image: Element | null;
}

/** What a node inherits from its ancestors in the walk. */
interface Inherited {
  /** Inside a related strip, a carousel, reviews: other products' or customers' words. */
  related: boolean;
  /** Struck through (<del>, <s>). */
  struck: boolean;
  /** Inside a link: a card's title, not the page's. */
  link: boolean;
  /** Inside an element named for stock ("#availability"). */
  stock: boolean;
  /** Inside an element the page names its buy box. */
  buyBox: boolean;
  /** Inside the h1 of a site header (walked although the header is furniture). */
  titleBlock: boolean;
  /** Inside a microdata item (its itemprops are the microdata reader's). */
  scoped: boolean;
}

const TOP: Inherited = { related: false, struck: false, link: false, stock: false, buyBox: false, titleBlock: false, scoped: false };

/** One walk with inherited flags that gathers every kind of evidence; the children of an element share its flags. */
function walk(page: Page): Walked {
  // The site is where the page was read and where it says it lives (its canonical address, og:url).
  const hosts = new Set([page.url, page.canonical, page.metaContent('og:url')].map((u) => (u == null ? null : siteOf(u))).filter((h): h is string => h !== null));
  const names = pageNames(page);
  const found: Walked = { headings: [], buyControls: [], inBuyBox: new Set(), prices: [], texts: [], stockMarked: new Set(), codeMarked: [], image: null };
  const splitTried = new Set<Element>();
  const stack: Array<{ node: AnyNode; flags: Inherited }> = [{ node: page.root, flags: TOP }];
  while (stack.length > 0) {
    const { node, flags } = stack.pop()!;
    if (node.type === 'text') {
      const parent = node.parent;
      if (flags.related || parent === null || !isElement(parent)) continue;
      const text = cleanText(node.data);
      if (text === '' || text.length > 200) continue;
      found.texts.push({ text, el: parent });
      if (flags.stock || stockInPriceSpot(text, parent)) found.stockMarked.add(parent);
      if (!flags.link && text.length >= 8 && found.headings.length < MAX_CANDIDATES && namesPage(text, names)) found.headings.push({ el: enclosingTitle(parent), namesPage: true });
      if (text.length <= MAX_PRICE_CHARS && /\d/.test(text)) addPriceSpot(found.prices, parent, text, flags.struck, splitTried);
      continue;
    }
    if (!isElement(node)) {
      if (node.type === 'root') for (let i = node.children.length - 1; i >= 0; i -= 1) stack.push({ node: node.children[i]!, flags });
      continue;
    }
    if (SKIPPED.has(node.name) || isHidden(node)) continue;
    if (page.chrome.has(node) && !flags.titleBlock) {
      // A site header that holds the page's h1 ("<header><h1>Product</h1>…menus…</header>"): the h1 is the
      // product's title; the rest is furniture.
      const h1 = node.name === 'header' ? firstH1(node) : null;
      if (h1 !== null) stack.push({ node: h1, flags: { ...flags, titleBlock: true } });
      continue;
    }
    const roleNames = `${node.attribs['class'] ?? ''} ${node.attribs['id'] ?? ''}`.slice(0, 300);
    // Most elements carry no class or id: their names need no look.
    const named = roleNames.length > 1;
    const related = flags.related || (named && (RELATED_REGION.test(roleNames) || CUSTOMER_REGION.test(roleNames)));
    if (!related) gather(node, roleNames, flags, hosts, names, found);
    const children: Inherited = {
      related,
      struck: flags.struck || node.name === 'del' || node.name === 's' || node.name === 'strike',
      link: flags.link || node.name === 'a',
      stock: flags.stock || (named && STOCK_MARKER.test(roleNames)),
      buyBox: flags.buyBox || (named && BUY_BOX.test(roleNames)),
      titleBlock: flags.titleBlock,
      scoped: flags.scoped || node.attribs['itemscope'] !== undefined,
    };
    for (let i = node.children.length - 1; i >= 0; i -= 1) stack.push({ node: node.children[i]!, flags: children });
  }
  return found;
}

/** Stock words written where the price would be ("<span class="price">Out of stock</span>"): the shop's stock line. */
function stockInPriceSpot(text: string, el: Element): boolean {
  // Cheap tests first: a statement is short and has no amount; only then the element's names and the phrases.
  if (text.length > 60 || /\d/.test(text) || !isPriceMarked(el)) return false;
  const stated = stockFromText(text);
  return stated !== null && stated.phrase.length >= text.length * 0.6;
}

/** What one element outside related strips offers: a heading, a buy control, a code, a machine price, the main image. */
function gather(node: Element, roleNames: string, flags: Inherited, hosts: ReadonlySet<string>, names: readonly string[], found: Walked): void {
  const titleMarked = TITLE_MARKER.test(`${roleNames} ${node.attribs['itemprop'] ?? ''}`);
  // A page has a few headings; reading the text of thousands (nested on a hostile page) would be quadratic.
  if (!flags.link && node.name !== 'a' && (node.name === 'h1' || titleMarked) && found.headings.length < MAX_CANDIDATES && visibleText(node) !== '') {
    found.headings.push({ el: node, namesPage: namesPage(visibleText(node), names) });
  }
  if (isBuyControl(node, hosts)) {
    found.buyControls.push(node);
    if (flags.buyBox || BUY_BOX.test(roleNames)) found.inBuyBox.add(node);
  }
  if (found.codeMarked.length < MAX_CANDIDATES && isCodeMarked(node)) found.codeMarked.push(node);
  // itemprop="price" outside any item (microdata reads those inside one): its content is the amount.
  const machine = !flags.scoped && node.attribs['itemprop'] === 'price' ? node.attribs['content']?.trim() : undefined;
  if (machine !== undefined && /^\d{1,12}(?:\.\d{1,4})?$/.test(machine) && Number(machine) > 0) {
    found.prices.push({ el: node, text: cleanText(visibleText(node)) || machine, amount: Number(machine), marked: true, stale: flags.struck });
  }
  if (found.image === null && node.name === 'img' && /main|product|primary|zoom|hero|featured/i.test(`${roleNames} ${node.attribs['name'] ?? ''}`)) found.image = node;
}

/** The first h1 under `el` outside its navigation, looked for among a few thousand nodes (a header's menus come first). */
function firstH1(el: Element): Element | null {
  const stack: AnyNode[] = [...el.children].reverse();
  for (let seen = 0; stack.length > 0 && seen < 5000; seen += 1) {
    const node = stack.pop()!;
    if (!isElement(node) || node.name === 'nav' || node.attribs['role'] === 'navigation') continue;
    if (node.name === 'h1') return node;
    for (let i = node.children.length - 1; i >= 0; i -= 1) stack.push(node.children[i]!);
  }
  return null;
}

/** A text that names the page titles its heading: the h1 or product-title element around it, else its own element. */
function enclosingTitle(el: Element): Element {
  for (let current: AnyNode | null = el, level = 0; current !== null && level < 4; current = current.parent, level += 1) {
    if (isElement(current) && (current.name === 'h1' || current.name === 'h2' || TITLE_MARKER.test(`${current.attribs['class'] ?? ''} ${current.attribs['id'] ?? ''}`)))
      return current;
  }
  return el;
}

function computeVisible(page: Page): VisibleEvidence {
  const found = walk(page);
  // A page that names its buy box has its purchase controls there; the rest buy tracks, bundles, other sellers' offers.
  const boxed = found.buyControls.filter((c) => found.inBuyBox.has(c));
  const buyControls = purchasePoints(boxed.length > 0 ? boxed : found.buyControls);
  const chosen = chooseHeading(found.headings);

  const none: VisibleEvidence = { heading: null, headingNamesPage: false, buyControls, candidate: null, priceMarked: false, stockStated: false, codeShown: false };
  if (chosen === null) return none;
  const titleEl = chosen.el;
  // The purchase point nearest the title is this product's; others belong to bundles or other products.
  const anchor = nearestTo(buyControls, titleEl) ?? titleEl;
  const fields: CandidateFields = { title: { value: visibleText(titleEl), locator: page.cssPath(titleEl), cue: chosen.reason } };
  const price = choosePrice(found.prices, anchor, titleEl);
  if (price !== undefined) {
    const locator = page.cssPath(price.current.el);
    Object.assign(fields, priceFromText(price.current.text, locator));
    // The cue lets this price outrank structured data; a box that shows another current price does not earn it.
    const cue = price.contested ? undefined : price.current.cue;
    if (fields.price !== undefined) fields.price = { ...fields.price, value: price.current.amount, ...(cue === undefined ? {} : { cue }) };
    if (price.regular !== undefined) fields.list_price = { value: price.regular.amount, locator: page.cssPath(price.regular.el) };
  }
  const region = commonAncestor(titleEl, price?.current.el ?? anchor) ?? titleEl;
  const box = commonAncestor(titleEl, anchor) ?? region;
  const stated = stockStatement(page, found, box, anchor, titleEl);
  const stock = stated.located ?? controlState(page, buyControls.length > 0 ? anchor : null);
  const code = shownCode(page, found, titleEl);
  withFields(fields, { availability: stock, sku: code.located, image_url: imageOf(page, found.image) });
  return {
    heading: titleEl,
    headingNamesPage: found.headings.some((h) => h.el === titleEl && h.namesPage),
    buyControls,
    candidate: { source: 'visible', locator: page.cssPath(titleEl), scope: 'page', fields },
    priceMarked: price?.current.marked ?? false,
    // Many stock lines or codes are a listing's cards, not one product's.
    stockStated: stock?.cue !== undefined && stated.count <= MAX_LINES,
    codeShown: code.located !== undefined && code.count <= MAX_LINES,
  };
}

function nearestTo(elements: readonly Element[], target: Element): Element | undefined {
  let best: { el: Element; steps: number } | undefined;
  for (const el of elements) {
    const steps = distance(el, target);
    if (best === undefined || steps < best.steps) best = { el, steps };
  }
  return best?.el;
}

function isHidden(el: Element): boolean {
  return (
    el.attribs['hidden'] !== undefined ||
    (el.attribs['aria-hidden'] === 'true' && isSmall(el)) ||
    /display\s*:\s*none|visibility\s*:\s*hidden/i.test(el.attribs['style'] ?? '') ||
    HIDDEN_CLASS.test(el.attribs['class'] ?? '')
  );
}

/** Nodes under an aria-hidden element that make it a page region rather than a decoration. */
const MAX_DECORATION_NODES = 40;

/**
 * aria-hidden hides decorations from screen readers (a price drawn twice, an icon); on a whole
 * region it only means a dialog was open when the page was saved, and the region is still shown.
 */
function isSmall(el: Element): boolean {
  const stack: AnyNode[] = [...el.children];
  for (let seen = 0; stack.length > 0; seen += 1) {
    if (seen >= MAX_DECORATION_NODES || stack.length > MAX_DECORATION_NODES) return false;
    const node = stack.pop()!;
    if (isElement(node)) for (const child of node.children) stack.push(child);
  }
  return true;
}

function imageOf(page: Page, image: Element | null): Located<string> | undefined {
  const src = image?.attribs['src'] ?? image?.attribs['data-src'];
  if (image === null || src === undefined) return undefined;
  return textField(absoluteUrl(src, page.url), `${page.cssPath(image)}[src]`);
}
