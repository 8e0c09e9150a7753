// Prices a shop writes across several elements: "€ <span>20,-</span>", "30,000<sub>원~</sub>", "$29<sup>99</sup>", "<span>1580</span><span>元</span>".
import type { AnyNode, Element } from 'domhandler';
import { cleanText, isElement, isInside } from '../dom-helpers.js';
import { MAX_PRICE_CHARS, readPriceSpot, type PriceSpot } from './price-spots.js';

/** An amount with at most a few characters around it: "99", "20,-", "€ 1,500", "30,000원~". */
const AMOUNT_ALONE = /^\D{0,3}\d[\d\s.,'’]*[-–]?\D{0,3}$/;

/** A price in this text, else (digits without a currency) in the small element around it: "€ <span>20,-</span>". */
export function addPriceSpot(prices: PriceSpot[], parent: Element, text: string, struck: boolean, splitTried: Set<Element>): void {
  const spot = readPriceSpot(parent, text, () => contextOf(parent), struck);
  if (spot !== null) {
    prices.push(spot);
    return;
  }
  // Only an amount on its own ("99", "20,-", "1,500") can be the number of a split price; "4 bids" cannot.
  if (!AMOUNT_ALONE.test(text)) return;
  // "<span>1580</span><span> 元 </span>": the currency in the element beside the amount.
  const joined = withNeighbours(parent, text);
  const besides = joined === null ? null : readPriceSpot(parent, joined, () => contextOf(parent), struck);
  if (besides !== null) {
    prices.push(besides);
    return;
  }
  for (let el: AnyNode | null = parent, level = 0; el !== null && isElement(el) && level < 3; el = el.parent, level += 1) {
    if (splitTried.has(el)) return;
    splitTried.add(el);
    const whole = splitPriceText(el);
    if (whole === null) return;
    if (whole === text) continue;
    // "$340" already read inside "$340 4 bids": the element of its own is the better locator.
    // The inner spot was read just before (document order); looking back a few keeps this linear.
    if (prices.slice(-4).some((known) => known.el !== el && isInside(known.el, el) && whole.includes(known.text))) return;
    const split = readPriceSpot(el, whole, () => contextOf(el), struck);
    if (split !== null) {
      prices.push(split);
      return;
    }
  }
}

/** The text of `el` with the short texts of the elements right before and after it, when they hold no digits; null when neither does. */
function withNeighbours(el: Element, text: string): string | null {
  const side = (node: AnyNode | null): string => {
    if (node === null || !isElement(node) || node.children.length !== 1 || node.children[0]!.type !== 'text') return '';
    const short = cleanText((node.children[0] as { data: string }).data);
    return short.length <= 6 && !/\d/.test(short) ? short : '';
  };
  const before = side(previousElement(el));
  const after = side(nextElement(el));
  return before === '' && after === '' ? null : `${before} ${text} ${after}`.trim();
}

function previousElement(el: Element): AnyNode | null {
  let node = el.prev;
  while (node !== null && node.type === 'text' && node.data.trim() === '') node = node.prev;
  return node;
}

function nextElement(el: Element): AnyNode | null {
  let node = el.next;
  while (node !== null && node.type === 'text' && node.data.trim() === '') node = node.next;
  return node;
}

/** The short text around a price (its parent's), where labels like "Shipping" or "4 bids" sit; '' when that is long. */
function contextOf(el: Element): string {
  const parent = el.parent !== null && isElement(el.parent) ? el.parent : el;
  return splitPriceText(parent) ?? '';
}

/** Elements a split price is looked for in: at most this many nodes, so the climb stays cheap. */
const MAX_SPLIT_NODES = 16;

/**
 * The text of a small element whose price is split across children ("€ <span>20,-</span>",
 * "30,000<sub>원~</sub>", "$29<sup>99</sup>"): the children's text joined, a two-digit superscript
 * after digits read as cents. Null when the element is too big to be one price.
 */
export function splitPriceText(el: Element): string | null {
  let nodes = 0;
  let text = '';
  let lastParent: AnyNode | null = null;
  const stack: AnyNode[] = [el];
  while (stack.length > 0) {
    const node = stack.pop()!;
    if ((nodes += 1) > MAX_SPLIT_NODES) return null;
    if (node.type === 'text') {
      // Numbers in different elements are different numbers ("$340" beside "4 bids"), not one.
      const apart = lastParent !== null && node.parent !== lastParent && /\d$/.test(text) && /^\d/.test(node.data);
      text += apart ? ` ${node.data}` : node.data;
      lastParent = node.parent;
    } else if (isElement(node) && !/^(?:script|style|template|svg)$/.test(node.name) && node.attribs['aria-hidden'] !== 'true') {
      if (isCents(node) && /\d$/.test(text.trimEnd())) text = `${text.trimEnd()}.`;
      // An element with more children than a price has is no price: not even a look at them (a body of 60,000).
      if (stack.length + node.children.length > MAX_SPLIT_NODES) return null;
      for (let i = node.children.length - 1; i >= 0; i -= 1) stack.push(node.children[i]!);
    }
    if (text.length > MAX_PRICE_CHARS * 2) return null;
  }
  const clean = cleanText(text);
  return clean.length <= MAX_PRICE_CHARS ? clean : null;
}

/** A superscript or "cents" element holding exactly two digits: the decimals of the amount before it. */
function isCents(el: Element): boolean {
  if (el.name !== 'sup' && !/fraction|cents|decimals?(?![a-z])/i.test(el.attribs['class'] ?? '')) return false;
  const only = el.children.length === 1 ? el.children[0] : undefined;
  return only?.type === 'text' && /^\s*\d{2}\s*$/.test(only.data);
}
