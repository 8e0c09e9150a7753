// Reads the main product of a product page from what a shopper sees: the heading, the buy button, the price beside it.
import type { AnyNode, Element } from 'domhandler';
import { parsePrice } from '../price.js';
import { absoluteUrl, cleanText, isElement, priceFromText, textField, visibleText, withFields } from './dom-helpers.js';
import type { Page } from './page.js';
import type { Availability, Candidate, CandidateFields, Extractor, Located } from './types.js';

/** What the visible page shows, for the classifier and for the main product. */
export interface VisibleEvidence {
  /** The page's main heading (first h1 outside navigation), if any. */
  heading: Element | null;
  /** Add-to-cart and buy controls of this site, outside navigation and related-item strips. */
  buyControls: Element[];
  /** The main product as read from the page; null without a heading. */
  candidate: Candidate | null;
  /** The chosen price was marked as one (class "price", itemprop, data-price), not loose text. */
  priceMarked: boolean;
}

/** Labels of buttons that put this product in a cart, in the languages shops are most often written in. */
const BUY_LABEL = new RegExp(
  [
    'add(?:ing)? to (?:cart|basket|bag|trolley)', 'buy(?: it)? now', '^buy$', 'add to order', 'purchase', 'order now',
    'in den (?:warenkorb|einkaufswagen)', 'jetzt kaufen', 'ajouter au panier', 'acheter', 'añadir al carrito', 'comprar',
    'aggiungi al carrello', 'acquista', 'in winkelwagen', 'lägg i varukorgen', 'dodaj do koszyka', 'в корзину', 'купить',
    'カートに入れる', '加入购物车', '장바구니',
    // Out of stock and pre-order pages keep their buy box, with its button relabelled.
    'pre-?order', 'sold out', 'out of stock', 'notify me when available',
  ].join('|'),
  'i',
);

/** A form that posts to a cart is a buy control even when its button says only "Add". */
const CART_ACTION = /cart|basket|checkout|add_to|addtocart|bag/i;

/** Regions that hold other products: carousels, "related", "customers also bought". */
const RELATED_REGION = /related|recommend|similar|carousel|slider|upsell|up-sell|cross-?sell|also-?(?:bought|viewed|like)|recently-?viewed|you-?may|bought-?together|suggest/i;

/** Price-like text that is about something else: shipping thresholds, savings, instalments. */
const NOT_THE_PRICE = /shipping|delivery|postage|orders? (?:over|above)|spend|\bsave\b|\boff\b|coupon|voucher|reward|points|per month|\/ ?mo\b|financ|klarna|afterpay|instal?lments?|interest|subtotal|basket|cart|\btotal\b/i;

const PRICE_CLASS = /price|cost|amount/i;
const STALE_WORDS = /(?:^|[^a-z])(?:old|was|regular|strike|crossed|compare|before|original|rrp|list|msrp)(?:[^a-z]|$)/i;
const STRUCK_TAGS: ReadonlySet<string> = new Set(['del', 's', 'strike']);
const SKIPPED: ReadonlySet<string> = new Set(['script', 'style', 'noscript', 'template', 'head', 'option', 'select', 'textarea', 'svg']);
/** A price shown on its own is short: "£340.00 (inc VAT)"; longer text is a sentence that mentions an amount. */
const MAX_PRICE_CHARS = 40;

const SKU_LABEL = /(?:^|[^\p{L}])(?:SKU|Item (?:No\.?|#|number)|Product (?:code|no\.?)|Art(?:ikel)?\.?[ -]?Nr\.?|Model(?: number| no\.?)?|Part (?:no\.?|number)|Ref(?:erence)?\.?)\s*[:#]?\s*([A-Z0-9][A-Z0-9._/-]{2,40})/iu;

const SKU_LABEL_ONLY = /^(?:SKU|Item (?:No\.?|#|number)|Product (?:code|no\.?)|Art(?:ikel)?\.?[ -]?Nr\.?|Model(?: number| no\.?)?|Part (?:no\.?|number))\s*[:#]?$/i;

const AVAILABILITY_TEXT: ReadonlyArray<readonly [RegExp, Availability]> = [
  [/out of stock|sold out|currently unavailable|no longer available|not available|ausverkauft|nicht (?:auf lager|verfügbar)|épuisé|agotado|esaurito|нет в наличии/i, 'out_of_stock'],
  [/discontinued/i, 'discontinued'],
  [/pre-?order|vorbestell|précommande/i, 'preorder'],
  [/back-?order/i, 'backorder'],
  [/only \d+ left|few left|limited stock|low stock|limited availability/i, 'limited'],
  [/\bin stock\b|available now|auf lager|en stock|disponible|в наличии|in voorraad/i, 'in_stock'],
];

interface PriceSpot {
  el: Element;
  text: string;
  amount: number;
  marked: boolean;
  stale: boolean;
}

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

function computeVisible(page: Page): VisibleEvidence {
  const host = siteOf(page.url);
  let heading: Element | null = null;
  let titled: Element | null = null;
  const buyControls: Element[] = [];
  const prices: PriceSpot[] = [];
  const texts: Array<{ text: string; el: Element }> = [];
  let image: Element | null = null;

  // One walk with inherited flags: inside navigation/related strips, struck through.
  const stack: Array<{ node: AnyNode; related: boolean; struck: boolean }> = [{ node: page.root, related: false, struck: false }];
  while (stack.length > 0) {
    const { node, related, struck } = stack.pop()!;
    if (node.type === 'text') {
      const parent = node.parent;
      if (related || parent === null || !isElement(parent)) continue;
      const text = cleanText(node.data);
      if (text === '' || text.length > 200) continue;
      texts.push({ text, el: parent });
      if (text.length <= MAX_PRICE_CHARS && /\d/.test(text) && !NOT_THE_PRICE.test(text)) {
        const parsed = parsePrice(text);
        if (parsed?.currency && !NOT_THE_PRICE.test(visibleText(parent).slice(0, 200))) {
          prices.push({ el: parent, text, amount: parsed.amount, marked: isPriceMarked(parent), stale: struck || isStale(parent) });
        }
      }
      continue;
    }
    if (!isElement(node) && node.type !== 'root') continue;
    if (isElement(node)) {
      if (SKIPPED.has(node.name) || page.chrome.has(node) || isHidden(node)) continue;
      const inRelated = related || RELATED_REGION.test(`${node.attribs['class'] ?? ''} ${node.attribs['id'] ?? ''}`);
      if (!inRelated) {
        if (node.name === 'h1' && heading === null && visibleText(node) !== '') heading = node;
        if (titled === null && /product[-_ ]?(?:title|name)/i.test(node.attribs['class'] ?? '') && visibleText(node) !== '') titled = node;
        if (isBuyControl(node, host)) buyControls.push(node);
        if (image === null && node.name === 'img' && /main|product|primary|zoom|hero|featured/i.test(`${node.attribs['id'] ?? ''} ${node.attribs['class'] ?? ''} ${node.attribs['name'] ?? ''}`)) image = node;
        const machine = node.attribs['content'];
        if (node.attribs['itemprop'] === 'price' && machine !== undefined && parsePrice(machine) !== null) {
          prices.push({ el: node, text: visibleText(node) || machine, amount: parsePrice(machine)!.amount, marked: true, stale: false });
        }
      }
      const childStruck = struck || STRUCK_TAGS.has(node.name);
      for (let i = node.children.length - 1; i >= 0; i -= 1) stack.push({ node: node.children[i]!, related: inRelated, struck: childStruck });
    } else if ('children' in node) {
      for (let i = node.children.length - 1; i >= 0; i -= 1) stack.push({ node: node.children[i]!, related, struck });
    }
  }

  // One buy box is one purchase point, however many buttons its form has.
  const seenForms = new Set<Element>();
  const purchasePoints = buyControls.filter((control) => {
    const form = formOf(control);
    if (form === null) return true;
    if (seenForms.has(form)) return false;
    seenForms.add(form);
    return true;
  });
  buyControls.length = 0;
  buyControls.push(...purchasePoints);
  const titleEl = heading ?? titled;
  if (titleEl === null) return { heading, buyControls, candidate: null, priceMarked: false };
  const anchor = buyControls[0] ?? titleEl;
  const current = nearest(prices.filter((p) => !p.stale), anchor, titleEl);
  const fields: CandidateFields = { title: { value: visibleText(titleEl), locator: page.cssPath(titleEl) } };
  if (current !== undefined) {
    Object.assign(fields, priceFromText(current.text, page.cssPath(current.el)));
    const was = nearest(prices.filter((p) => p.stale && p.amount > current.amount), anchor, titleEl);
    if (was !== undefined) fields.list_price = { value: was.amount, locator: page.cssPath(was.el) };
  }
  const box = current === undefined ? titleEl : commonAncestor(current.el, anchor) ?? titleEl;
  const region = commonAncestor(titleEl, current?.el ?? anchor) ?? titleEl;
  withFields(fields, {
    availability: availabilityNear(page, texts, box, buyControls),
    sku: skuIn(page, texts, region),
    image_url: imageOf(page, image),
  });
  return {
    heading,
    buyControls,
    candidate: { source: 'visible', locator: page.cssPath(titleEl), scope: 'page', fields },
    priceMarked: current?.marked ?? false,
  };
}

function isBuyControl(el: Element, host: string | null): boolean {
  if (el.name === 'form') return false;
  const isButton = el.name === 'button' || (el.name === 'input' && /^(?:submit|button|image)$/i.test(el.attribs['type'] ?? '')) || el.attribs['role'] === 'button';
  const isLink = el.name === 'a';
  if (!isButton && !isLink) return false;
  const label = cleanText(visibleText(el) || el.attribs['value'] || el.attribs['aria-label'] || el.attribs['title'] || '');
  if (label.length > 60) return false;
  if (BUY_LABEL.test(label)) {
    // A link to another site ("Buy at Amazon" in a review) sells nothing here.
    return !isLink || sameSite(el.attribs['href'], host);
  }
  // In a form that posts to the cart, its submit button buys whatever it says; +/- buttons do not.
  const submits = el.name === 'input' ? el.attribs['type'] !== 'button' : (el.attribs['type'] ?? 'submit').toLowerCase() === 'submit';
  const form = formOf(el);
  return isButton && submits && form !== null && CART_ACTION.test(form.attribs['action'] ?? '');
}

function formOf(el: Element): Element | null {
  for (let current = el.parent; current !== null; current = current.parent) {
    if (isElement(current) && current.name === 'form') return current;
  }
  return null;
}

function siteOf(url: string): string | null {
  try {
    return new URL(url).hostname.replace(/^www\./, '');
  } catch {
    return null;
  }
}

function sameSite(href: string | undefined, host: string | null): boolean {
  if (href === undefined || href.trim() === '' || /^(?:#|javascript:)/i.test(href.trim())) return true;
  if (!/^[a-z][a-z0-9+.-]*:|^\/\//i.test(href.trim())) return true; // relative
  try {
    return new URL(href, 'http://relative.invalid').hostname.replace(/^www\./, '') === host;
  } catch {
    return false;
  }
}

function isHidden(el: Element): boolean {
  return el.attribs['hidden'] !== undefined || el.attribs['aria-hidden'] === 'true' || /display\s*:\s*none/i.test(el.attribs['style'] ?? '');
}

function isPriceMarked(el: Element): boolean {
  for (let current: AnyNode | null = el, level = 0; current !== null && level < 3; current = current.parent, level += 1) {
    if (!isElement(current)) continue;
    if (current.attribs['itemprop'] === 'price' || current.attribs['data-price'] !== undefined) return true;
    if (PRICE_CLASS.test(current.attribs['class'] ?? '') || PRICE_CLASS.test(current.attribs['id'] ?? '')) return true;
  }
  return false;
}

function isStale(el: Element): boolean {
  for (let current: AnyNode | null = el, level = 0; current !== null && level < 3; current = current.parent, level += 1) {
    if (isElement(current) && (STRUCK_TAGS.has(current.name) || STALE_WORDS.test(`${current.attribs['class'] ?? ''} ${current.attribs['id'] ?? ''}`))) return true;
  }
  return false;
}

/**
 * The price closest to the buy control in the tree (few steps up and down), then to the heading; a
 * marked price wins a tie, then the earlier one. Far-away amounts (a footer's, another column's)
 * lose to the one in the buy box.
 */
function nearest(spots: PriceSpot[], anchor: Element, heading: Element): PriceSpot | undefined {
  let best: { spot: PriceSpot; score: number } | undefined;
  for (const spot of spots) {
    const score = Math.min(distance(spot.el, anchor), distance(spot.el, heading) + 1) * 2 - (spot.marked ? 1 : 0);
    if (best === undefined || score < best.score) best = { spot, score };
  }
  return best?.spot;
}

function ancestors(node: AnyNode): Map<AnyNode, number> {
  const up = new Map<AnyNode, number>();
  let steps = 0;
  for (let current: AnyNode | null = node; current !== null; current = current.parent) up.set(current, steps++);
  return up;
}

function distance(a: AnyNode, b: AnyNode): number {
  const up = ancestors(a);
  let steps = 0;
  for (let current: AnyNode | null = b; current !== null; current = current.parent, steps += 1) {
    const fromA = up.get(current);
    if (fromA !== undefined) return fromA + steps;
  }
  return Number.POSITIVE_INFINITY;
}

function commonAncestor(a: AnyNode, b: AnyNode): Element | null {
  const up = ancestors(a);
  for (let current: AnyNode | null = b; current !== null; current = current.parent) {
    if (up.has(current)) return isElement(current) ? current : null;
  }
  return null;
}

function within(el: Element, region: Element): boolean {
  for (let current: AnyNode | null = el; current !== null; current = current.parent) if (current === region) return true;
  return false;
}

/** Stock as the buy box states it; failing that, what its button says ("Sold out", a disabled "Add to cart"). */
function availabilityNear(page: Page, texts: Array<{ text: string; el: Element }>, box: Element, controls: Element[]): Located<Availability> | undefined {
  for (const { text, el } of texts) {
    if (text.length > 80 || !within(el, box)) continue;
    for (const [pattern, value] of AVAILABILITY_TEXT) if (pattern.test(text)) return { value, locator: page.cssPath(el) };
  }
  const control = controls[0];
  if (control === undefined) return undefined;
  const label = cleanText(visibleText(control) || control.attribs['value'] || '');
  for (const [pattern, value] of AVAILABILITY_TEXT) if (pattern.test(label)) return { value, locator: page.cssPath(control) };
  if (/add|buy|kaufen|ajouter|añadir|aggiungi/i.test(label)) {
    const disabled = control.attribs['disabled'] !== undefined || control.attribs['aria-disabled'] === 'true';
    return { value: disabled ? 'out_of_stock' : 'in_stock', locator: page.cssPath(control) };
  }
  return undefined;
}

function skuIn(page: Page, texts: Array<{ text: string; el: Element }>, region: Element): Located<string> | undefined {
  for (const { text, el } of texts) {
    if (text.length > 80 || !within(el, region)) continue;
    // "SKU: <span>TF-MB-014</span>": the label and the value sit in different text nodes.
    const whole = SKU_LABEL_ONLY.test(text) ? visibleText(el) : text;
    const match = SKU_LABEL.exec(whole);
    if (match?.[1] !== undefined && /\d/.test(match[1])) return { value: match[1], locator: page.cssPath(el) };
  }
  return undefined;
}

function imageOf(page: Page, image: Element | null): Located<string> | undefined {
  const src = image?.attribs['src'] ?? image?.attribs['data-src'];
  if (image === null || src === undefined) return undefined;
  return textField(absoluteUrl(src, page.url), `${page.cssPath(image)}[src]`);
}
