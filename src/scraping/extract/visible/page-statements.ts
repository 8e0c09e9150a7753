// What the page states beside its product, and how often: the stock line ("Currently unavailable") and the product code ("SKU: …").
import type { AnyNode, Element } from 'domhandler';
import { controlLabel, isDisabled } from './buy-controls.js';
import { cleanText, distance, isElement, isInside, visibleText } from '../dom-helpers.js';
import type { Page } from '../page.js';
import { asIdentifier, codeLabel, markedCode } from './product-codes.js';
import { stockFromText } from './stock-text.js';
import type { Availability, Located } from '../types.js';

/** Stock statements about a way to get the product (pickup, delivery) or another thing (chat), not its stock. */
const OTHER_SUBJECT =
  /chat|wish ?list|\blist\b|registry|pick ?up|in[- ]store|\bstores?\b|collect|deliver|shipping|ship to|lieferung|lieferzeit|abhol|filiale|im markt|retrait|magasin|livraison|recogida|tienda|ritiro|negozio|spedizione|odbiór|w sklepie|доставк|самовывоз|магазин|店舗|門市|门店|매장/i;

/** How far (tree steps) a label may sit from the identifier it names ("<dt>SKU</dt><dd>123</dd>"). */
const MAX_LABEL_DISTANCE = 4;

/** A short text of the page and the element that holds it. */
export interface TextSpot {
  text: string;
  el: Element;
}

/** The texts and marked elements the visible walk gathered, in document order. */
export interface PageTexts {
  texts: readonly TextSpot[];
  /** The elements inside an element named for stock ("#availability"). */
  stockMarked: ReadonlySet<Element>;
  codeMarked: readonly Element[];
  buyControls: readonly Element[];
}

/**
 * Stock as the page states it in words: inside the product's box (title to buy control) or in an
 * element marked as the stock line ("#availability"), nearest the buy control.
 */
export function stockStatement(page: Page, seen: PageTexts, box: Element, anchor: Element, titleEl: Element): Found<Availability> {
  let best: { located: Located<Availability>; steps: number } | undefined;
  let count = 0;
  const controls = new Set(seen.buyControls);
  for (const { text, el } of seen.texts) {
    const marked = seen.stockMarked.has(el);
    if (!marked && !isInside(el, box)) continue;
    const stated = stockFromText(text);
    if (stated === null) continue;
    // Outside a stock line, only a text that is the statement ("Sold out") counts, not one that mentions it.
    if (!marked && stated.phrase.length < text.length * 0.6) continue;
    // "Unavailable for store pickup", "Chat is unavailable": about something else than the product's stock.
    if (OTHER_SUBJECT.test(text) || OTHER_SUBJECT.test(`${el.attribs['class'] ?? ''} ${el.attribs['id'] ?? ''}`.slice(0, 300))) continue;
    // A size or colour that is unavailable says nothing of the product ("42 — Unavailable" in a size picker).
    if (inVariantPicker(el)) continue;
    // A buy button's alternative labels ("niedostępny" shown by CSS when it is disabled) are its state, read from the button.
    if (insideAny(el, controls)) continue;
    count += 1;
    const steps = Math.min(distance(el, anchor), distance(el, titleEl));
    if (best === undefined || steps < best.steps) best = { located: { value: stated.value, locator: page.cssPath(el), cue: `the page says "${stated.phrase}"` }, steps };
  }
  return { located: best?.located, count };
}

/** What a search found nearest the product, and how many it found (one product has one stock line, one code). */
export interface Found<T> {
  located: Located<T> | undefined;
  count: number;
}

/** Failing words, what the buy control says: "Sold out", or an enabled (in stock) or disabled (out of stock) "Add to cart". */
export function controlState(page: Page, control: Element | null): Located<Availability> | undefined {
  if (control === null) return undefined;
  const label = controlLabel(control);
  const stated = stockFromText(label);
  if (stated !== null) return { value: stated.value, locator: page.cssPath(control), cue: `its buy button says "${stated.phrase}"` };
  return { value: isDisabled(control) ? 'out_of_stock' : 'in_stock', locator: page.cssPath(control) };
}

/**
 * The product code the page prints for people, nearest the title: a labelled identifier ("SKU:
 * 123", "<dt>Artikelnummer</dt><dd>123</dd>") or an element marked as the code.
 */
export function shownCode(page: Page, seen: PageTexts, titleEl: Element): Found<string> {
  let best: { located: Located<string>; steps: number } | undefined;
  const values = new Set<string>();
  const consider = (value: string, el: Element, cue: string) => {
    values.add(value);
    const steps = distance(el, titleEl);
    if (best === undefined || steps < best.steps) best = { located: { value, locator: page.cssPath(el), cue }, steps };
  };
  for (const [i, { text, el }] of seen.texts.entries()) {
    const labelled = codeLabel(text);
    if (labelled === null) continue;
    const cue = `labelled "${labelled.label}"`;
    if (labelled.value !== null) {
      consider(labelled.value, el, cue);
      continue;
    }
    // The identifier in the next text or two, when it sits beside the label.
    for (const next of seen.texts.slice(i + 1, i + 3)) {
      const value = asIdentifier(next.text);
      if (value !== null && next.text.length <= value.length + 2 && distance(el, next.el) <= MAX_LABEL_DISTANCE) {
        consider(value, next.el, cue);
        break;
      }
    }
  }
  for (const el of seen.codeMarked) {
    const text = cleanText(visibleText(el));
    const value = text.length <= 80 ? markedCode(text, el.attribs['content']) : null;
    if (value !== null) consider(value, el, 'marked as the product code');
  }
  return { located: best?.located, count: values.size };
}

/** Size, colour and other option pickers: their stock words are about one option. */
const VARIANT_PICKER = /(?:^|[\s_-])(?:sizes?|variants?|variations?|swatch(?:es)?|options?|picker|selector)(?:$|[\s_-])/i;

function inVariantPicker(el: Element): boolean {
  let current: AnyNode | null = el;
  for (let level = 0; current !== null && level < 5; current = current.parent, level += 1) {
    if (isElement(current) && VARIANT_PICKER.test(`${current.attribs['class'] ?? ''} ${current.attribs['id'] ?? ''}`.slice(0, 300))) return true;
  }
  return false;
}

function insideAny(el: Element, containers: ReadonlySet<Element>): boolean {
  for (let current: AnyNode | null = el; current !== null; current = current.parent) if (isElement(current) && containers.has(current)) return true;
  return false;
}
