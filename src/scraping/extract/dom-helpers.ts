// Small pure helpers the extractors share: readable text of a node, absolute links, price fields, item clean-up.
import { load } from 'cheerio';
import type { AnyNode, Element } from 'domhandler';
import { parsePrice } from '../price.js';
import { BLOCKS } from './article/html-blocks.js';
import type { CandidateFields, Located } from './types.js';

export const MAX_TITLE_CHARS = 500;
export const MAX_DESCRIPTION_CHARS = 1000;

/** Elements whose text is code or markup, never something a reader sees. */
const INVISIBLE_TAGS: ReadonlySet<string> = new Set(['script', 'style', 'noscript', 'template', 'head']);

/** The attribute holding the URL an element links or embeds (as microdata and RDFa read a property's value). */
export const URL_ATTRIBUTES: ReadonlyMap<string, string> = new Map(
  Object.entries({ a: 'href', area: 'href', link: 'href', img: 'src', source: 'src', iframe: 'src', video: 'src', audio: 'src', embed: 'src', track: 'src', object: 'data' }),
);

/** Elements whose text must not run into the neighbour's: blocks, line breaks and table cells. */
const SPACED: ReadonlySet<string> = new Set([...BLOCKS, 'br', 'td', 'th']);

/**
 * Collapses every run of whitespace (NBSP included) to one space and trims. Drops NUL, which JSON-LD
 * strings may carry and PostgreSQL text cannot store.
 */
export function cleanText(text: string | null | undefined): string {
  return typeof text === 'string'
    ? text
        .replace(/\u0000/g, '')
        .replace(/\s+/g, ' ')
        .trim()
    : '';
}

/**
 * Decodes HTML entities in text that skipped the HTML parser (JSON-LD strings often carry "&amp;").
 * Parsed as the content of <title>, where entities decode but tags stay text; "<" is escaped first
 * so the text cannot close the element early.
 */
export function decodeEntities(text: string): string {
  if (!/&(?:#\d+|#x[\da-f]+|[a-z][a-z\d]*);?/i.test(text)) return text;
  return load(`<title>${text.replace(/</g, '&lt;')}</title>`)('title').text();
}

/** Cuts to `max` UTF-16 units without leaving half a surrogate pair (emoji) at the end. */
export function truncate(text: string, max: number): string {
  if (text.length <= max) return text;
  const cut = text.slice(0, max);
  return /[\uD800-\uDBFF]$/.test(cut) ? cut.slice(0, -1) : cut;
}

/**
 * The text a reader would see in `node`: skips scripts and styles, keeps block elements apart.
 * Iterative, because hostile pages nest deeply enough to overflow a recursive walk.
 */
export function visibleText(node: AnyNode | undefined): string {
  if (node === undefined) return '';
  const parts: string[] = [];
  const stack: Array<AnyNode | string> = [node];
  while (stack.length > 0) {
    const current = stack.pop()!;
    if (typeof current === 'string') {
      parts.push(current);
    } else if (current.type === 'text') {
      parts.push(current.data);
    } else if (isElement(current) && !INVISIBLE_TAGS.has(current.name)) {
      const gap = SPACED.has(current.name) ? ' ' : '';
      stack.push(gap);
      for (let i = current.children.length - 1; i >= 0; i -= 1) stack.push(current.children[i]!);
      stack.push(gap);
    } else if (current.type === 'root' && 'children' in current) {
      for (let i = current.children.length - 1; i >= 0; i -= 1) stack.push(current.children[i]!);
    }
  }
  return cleanText(parts.join(''));
}

/** True for element nodes, including <script> and <style> which domhandler types separately. */
export function isElement(node: AnyNode): node is Element {
  return node.type === 'tag' || node.type === 'script' || node.type === 'style';
}

/**
 * Resolves `href` against `base`; null for empty links, in-page anchors, and anything that is not
 * http(s) (javascript:, mailto:, data:), since an item's URL must be a page we could fetch.
 */
export function absoluteUrl(href: string | null | undefined, base: string): string | null {
  const trimmed = typeof href === 'string' ? href.trim() : '';
  if (trimmed === '' || trimmed.startsWith('#')) return null;
  try {
    const url = new URL(trimmed, base);
    return url.protocol === 'http:' || url.protocol === 'https:' ? url.href : null;
  } catch {
    return null;
  }
}

/** Price fields of a candidate from text as shown on the page ("£51.77", "Free"), all read at `locator`. */
export function priceFromText(text: string | null | undefined, locator: string): CandidateFields {
  const priceText = cleanText(text);
  if (priceText === '') return {};
  const fields: CandidateFields = { price_text: { value: priceText, locator } };
  const parsed = parsePrice(priceText);
  if (parsed !== null) fields.price = { value: parsed.amount, locator };
  if (parsed?.currency) fields.currency = { value: parsed.currency, locator };
  return fields;
}

/** A text field of a candidate, or nothing when the text is blank. */
export function textField(text: string | null | undefined, locator: string): Located<string> | undefined {
  const value = cleanText(text);
  return value === '' ? undefined : { value, locator };
}

/** Sets the fields whose value is defined; keeps a candidate free of empty entries. */
export function withFields(fields: CandidateFields, more: { [K in keyof CandidateFields]?: CandidateFields[K] | undefined }): CandidateFields {
  for (const [key, value] of Object.entries(more)) {
    if (value !== undefined) (fields as Record<string, unknown>)[key] = value;
  }
  return fields;
}

/**
 * The elements that sit in page furniture (navigation, sidebars, the site's header or footer), whose
 * links and teasers are never the page's items. An article's own <header>/<footer> is not furniture.
 * One top-down pass: asking each element about its ancestors would be quadratic on deep pages.
 */
export function pageChrome(root: AnyNode): ReadonlySet<Element> {
  const chrome = new Set<Element>();
  const stack: Array<{ node: AnyNode; inChrome: boolean; inArticle: boolean }> = [{ node: root, inChrome: false, inArticle: false }];
  while (stack.length > 0) {
    const { node, inChrome, inArticle } = stack.pop()!;
    let isChrome = inChrome;
    if (isElement(node)) {
      const role = node.attribs['role'];
      isChrome ||= node.name === 'nav' || node.name === 'aside' || role === 'navigation' || role === 'complementary';
      isChrome ||= (node.name === 'header' || node.name === 'footer') && !inArticle;
      if (isChrome) chrome.add(node);
    }
    if ('children' in node) {
      const childInArticle = inArticle || (isElement(node) && node.name === 'article');
      for (const child of node.children) stack.push({ node: child, inChrome: isChrome, inArticle: childInArticle });
    }
  }
  return chrome;
}

/**
 * All elements under `root` in document order. Walked by hand: the CSS route ("body *") checks each
 * element's ancestors, which is quadratic on deeply nested pages.
 */
export function descendants(root: AnyNode): Element[] {
  const found: Element[] = [];
  const stack: AnyNode[] = [];
  const pushChildren = (node: AnyNode): void => {
    if ('children' in node) for (let i = node.children.length - 1; i >= 0; i -= 1) stack.push(node.children[i]!);
  };
  pushChildren(root);
  while (stack.length > 0) {
    const node = stack.pop()!;
    if (isElement(node)) found.push(node);
    pushChildren(node);
  }
  return found;
}

/** Number of elements in each element's subtree (itself included), to budget the heuristics' work. */
export function subtreeSizes(root: AnyNode): ReadonlyMap<Element, number> {
  const sizes = new Map<Element, number>();
  const order: Element[] = [];
  const stack: AnyNode[] = [root];
  while (stack.length > 0) {
    const node = stack.pop()!;
    if (isElement(node)) order.push(node);
    // A loop, not push(...children): spreading 100k children overflows the argument limit.
    if ('children' in node) for (const child of node.children) stack.push(child);
  }
  // Parents come before children in `order`, so walking it backwards sees every child first.
  for (let i = order.length - 1; i >= 0; i -= 1) {
    const el = order[i]!;
    const size = (sizes.get(el) ?? 0) + 1;
    sizes.set(el, size);
    if (el.parent !== null && isElement(el.parent)) sizes.set(el.parent, (sizes.get(el.parent) ?? 0) + size);
  }
  return sizes;
}

/** True when an ancestor of `node` below `stop` (exclusive) passes `test`; stays inside one card or entry. */
export function hasAncestorWithin(node: AnyNode, stop: AnyNode, test: (el: Element) => boolean): boolean {
  for (let current = node.parent; current !== null && current !== stop; current = current.parent) {
    if (isElement(current) && test(current)) return true;
  }
  return false;
}

/** The nearest of `node` and its ancestors below `stop` (inclusive of both) that passes `test`. */
export function closestWithin(node: Element, stop: AnyNode, test: (el: Element) => boolean): Element | null {
  for (let current: AnyNode | null = node; current !== null; current = current.parent) {
    if (isElement(current) && test(current)) return current;
    if (current === stop) break;
  }
  return null;
}

/** Articles outside page furniture, not descending into them: an article's nested articles (comments) are part of it. */
export function outermostArticles(root: AnyNode, chrome: ReadonlySet<Element>): Element[] {
  const found: Element[] = [];
  const stack: AnyNode[] = [root];
  while (stack.length > 0) {
    const node = stack.pop()!;
    if (isElement(node) && node.name === 'article') {
      if (!chrome.has(node)) found.push(node);
      continue;
    }
    if ('children' in node) for (let i = node.children.length - 1; i >= 0; i -= 1) stack.push(node.children[i]!);
  }
  return found;
}

/** Each ancestor of `node` (itself included) with its number of steps up. */
function ancestors(node: AnyNode): Map<AnyNode, number> {
  const up = new Map<AnyNode, number>();
  let steps = 0;
  for (let current: AnyNode | null = node; current !== null; current = current.parent) up.set(current, steps++);
  return up;
}

/** Steps up from `a` and from `b` to their closest common ancestor. */
export function distance(a: AnyNode, b: AnyNode): number {
  const up = ancestors(a);
  let steps = 0;
  for (let current: AnyNode | null = b; current !== null; current = current.parent, steps += 1) {
    const fromA = up.get(current);
    if (fromA !== undefined) return fromA + steps;
  }
  return Number.POSITIVE_INFINITY;
}

/** The closest element that holds both `a` and `b`; null when they share only the document. */
export function commonAncestor(a: AnyNode, b: AnyNode): Element | null {
  const up = ancestors(a);
  for (let current: AnyNode | null = b; current !== null; current = current.parent) {
    if (up.has(current)) return isElement(current) ? current : null;
  }
  return null;
}

/** True when `node` is `container` or lies inside it. */
export function isInside(node: AnyNode, container: AnyNode): boolean {
  for (let current: AnyNode | null = node; current !== null; current = current.parent) if (current === container) return true;
  return false;
}
