// A browser-like DOM of a page (linkedom), for the article body: Readability needs one, the rest of extraction does not.
import { DOMParser } from 'linkedom';
import { boundNesting } from '../nesting-bound.js';

/**
 * The few DOM members the article modules use, typed here because the project compiles without the
 * DOM library: linkedom implements them as a browser does.
 */
export interface DomNode {
  readonly nodeType: number;
  readonly nodeName: string;
  readonly parentNode: DomNode | null;
  readonly childNodes: ArrayLike<DomNode>;
  readonly firstChild: DomNode | null;
  readonly nextSibling: DomNode | null;
  textContent: string | null;
}

export interface DomElement extends DomNode {
  /** Lower-case tag name. */
  readonly localName: string;
  readonly children: ArrayLike<DomElement>;
  readonly parentElement: DomElement | null;
  innerHTML: string;
  readonly outerHTML: string;
  getAttribute(name: string): string | null;
  setAttribute(name: string, value: string): void;
  removeAttribute(name: string): void;
  hasAttribute(name: string): boolean;
  readonly attributes: ArrayLike<{ name: string; value: string }>;
  remove(): void;
  appendChild(node: DomNode): DomNode;
  querySelectorAll(selector: string): ArrayLike<DomElement>;
}

export interface DomDocument extends DomNode {
  readonly documentElement: DomElement | null;
  readonly body: DomElement | null;
  readonly head: DomElement | null;
  createElement(name: string): DomElement;
  querySelectorAll(selector: string): ArrayLike<DomElement>;
  getElementsByTagName(name: string): ArrayLike<DomElement>;
}

export const ELEMENT_NODE = 1;
export const TEXT_NODE = 3;

export function isDomElement(node: DomNode): node is DomElement {
  return node.nodeType === ELEMENT_NODE;
}

/**
 * Parses a page into a DOM document. linkedom reads a fragment as its own root, so markup without an
 * <html> element is wrapped in one first; null when the parser throws (it tolerates any markup).
 */
export function parseDocument(html: string): DomDocument | null {
  const bounded = bogusCdata(boundNesting(html).html);
  const whole = /<html[\s>]/i.test(bounded) ? bounded : `<!doctype html><html><head></head><body>${bounded}</body></html>`;
  try {
    const document = new DOMParser().parseFromString(whole, 'text/html') as unknown as DomDocument;
    return document.body === null ? null : document;
  } catch {
    return null;
  }
}

/**
 * In HTML (outside SVG and MathML) `<![CDATA[` opens a bogus comment that the first `>` closes, as browsers
 * read it; linkedom's parser reads on to a `]]>` that may never come, and a page's whole rest with it.
 * Script text is not read here, so removing the marker inside a script loses nothing.
 */
function bogusCdata(html: string): string {
  return html.includes('<![CDATA[') ? html.replace(/<!\[CDATA\[[^>]*>/g, '') : html;
}

/** Every element under `root` in document order, without recursion (hostile pages nest deeply). */
export function domElements(root: DomElement): DomElement[] {
  const found: DomElement[] = [];
  const stack: DomElement[] = [root];
  while (stack.length > 0) {
    const el = stack.pop()!;
    found.push(el);
    const children = el.children;
    for (let i = children.length - 1; i >= 0; i -= 1) stack.push(children[i]!);
  }
  return found;
}

/** How deep elements nest under `root` (its children are at depth 1), without recursion. */
export function maxDepth(root: DomElement): number {
  let deepest = 0;
  const stack: Array<[DomElement, number]> = [[root, 0]];
  while (stack.length > 0) {
    const [el, depth] = stack.pop()!;
    if (depth > deepest) deepest = depth;
    const children = el.children;
    for (let i = 0; i < children.length; i += 1) stack.push([children[i]!, depth + 1]);
  }
  return deepest;
}

/**
 * `el`'s class and id as one lower-case string for the boilerplate patterns, camelCase split into
 * hyphenated parts ("newsCaption" -> "news-caption") so each part can be matched alone.
 */
export function classAndId(el: DomElement): string {
  return `${el.getAttribute('class') ?? ''} ${el.getAttribute('id') ?? ''}`.replace(/([a-z\d])([A-Z])/g, '$1-$2').toLowerCase();
}
