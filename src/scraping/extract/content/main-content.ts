// The main content of any page, as plain text: what a reader came for once the site's furniture is gone
// (navigation, headers and footers, sidebars, banners, share and newsletter boxes, blocks of links).
import { findBoilerplate, type BoilerplateKind } from '../article/article-boilerplate.js';
import { domElements, parseDocument, TEXT_NODE, type DomDocument, type DomElement } from '../article/article-dom.js';
import { blockText, SILENT } from '../article/article-text.js';
import type { PageType } from '../types.js';

export interface MainContent {
  /** Plain text: headings on their own lines, paragraphs separated by a blank line, list items and table rows on their own lines. */
  text: string;
  /** The element the text came from, as HTML (not sanitized). */
  html: string;
  /** How it was found, for explain. */
  method: 'article-body' | 'main-element' | 'page';
  locator: string;
}

/** Roles of landmarks that are never the content. */
const FURNITURE_ROLES = /^(?:navigation|banner|contentinfo|complementary|search|dialog|alertdialog|menu|menubar|toolbar)$/;

/** A block whose text is mostly the text of its links, with at least this many links, is a menu or a link farm. */
const LINK_BLOCK = { share: 0.7, links: 3 };

/** A landmark <main> is taken when it holds at least this share of the page's text. */
const MAIN_SHARE = 0.3;

/** A block holding more than this share of the content is the content itself, however many links it has (a grid of cards). */
const MAX_PRUNED_SHARE = 0.4;

/** Kinds of furniture that are content on some pages: a forum thread's replies are its posts. */
const KEPT_ON: Partial<Record<PageType, ReadonlySet<BoilerplateKind>>> = {
  forum: new Set<BoilerplateKind>(['comments', 'byline']),
};

/** The page's main content, or null when it has no text at all. Pure; never throws on odd markup. */
export function mainContent(html: string, pageType: PageType, pageUrl: string): MainContent | null {
  const document = parseDocument(html);
  const body = document?.body;
  if (document === null || body === null || body === undefined) return null;
  removeFurniture(document, pageType);
  const chosen = mainElement(body) ?? { el: body, method: 'page' as const, locator: 'body' };
  pruneLinkBlocks(chosen.el);
  const text = blockText(chosen.el);
  if (text === '') return null;
  prepareForMarkdown(chosen.el, pageUrl);
  return { text, html: chosen.el.innerHTML, method: chosen.method, locator: chosen.locator };
}

/** Links and images made absolute against the page, unsafe ones unlinked, silent elements gone: the HTML Markdown is written from. */
function prepareForMarkdown(root: DomElement, pageUrl: string): void {
  for (const el of domElements(root)) {
    if (el === root) continue;
    // What blockText leaves out of the text stays out of the Markdown (turndown drops frames and embeds itself).
    if (SILENT.has(el.localName)) {
      el.remove();
      continue;
    }
    for (const name of ['href', 'src'] as const) {
      const value = el.getAttribute(name);
      if (value === null) continue;
      const absolute = safeUrl(value, pageUrl);
      if (absolute === null) el.removeAttribute(name);
      else el.setAttribute(name, absolute);
    }
  }
}

/** An http(s) URL resolved against the page, or null (javascript:, data:, a broken URL). */
function safeUrl(value: string, base: string): string | null {
  try {
    const url = new URL(value.trim(), base);
    return url.protocol === 'http:' || url.protocol === 'https:' ? url.href : null;
  } catch {
    return null;
  }
}

function removeFurniture(document: DomDocument, pageType: PageType): void {
  const kept = KEPT_ON[pageType];
  for (const { kind, el } of findBoilerplate(document)) if (kept === undefined || !kept.has(kind)) el.remove();
  for (const el of domElements(document.body!)) {
    if (el.parentElement === null) continue;
    const role = el.getAttribute('role') ?? '';
    if (FURNITURE_ROLES.test(role) || el.getAttribute('aria-hidden') === 'true') el.remove();
  }
}

function mainElement(body: DomElement): { el: DomElement; method: 'main-element'; locator: string } | null {
  const total = textLength(body);
  if (total === 0) return null;
  for (const el of domElements(body)) {
    if (el.localName !== 'main' && el.getAttribute('role') !== 'main') continue;
    if (textLength(el) >= MAIN_SHARE * total) return { el, method: 'main-element', locator: el.localName === 'main' ? 'main' : '[role=main]' };
  }
  return null;
}

/** Top-down: a block of links is removed whole, and nothing inside it is looked at again. */
function pruneLinkBlocks(root: DomElement): void {
  const sizes = textSizes(root);
  const total = sizes.get(root)?.text ?? 0;
  if (total === 0) return;
  const stack: DomElement[] = [root];
  while (stack.length > 0) {
    const el = stack.pop()!;
    for (const child of Array.from(el.children)) {
      if (isLinkBlock(sizes.get(child), total)) child.remove();
      else stack.push(child);
    }
  }
}

interface TextSize {
  /** Visible characters (no whitespace) under the element. */
  text: number;
  /** Of them, inside links. */
  linked: number;
  links: number;
}

function isLinkBlock(size: TextSize | undefined, total: number): boolean {
  if (size === undefined || size.text === 0 || size.text > MAX_PRUNED_SHARE * total) return false;
  return size.links >= LINK_BLOCK.links && size.linked >= LINK_BLOCK.share * size.text;
}

/** Text and link text under every element, in one walk up from the leaves (no element's text read twice). */
function textSizes(root: DomElement): Map<DomElement, TextSize> {
  const sizes = new Map<DomElement, TextSize>();
  const elements = domElements(root);
  for (let i = elements.length - 1; i >= 0; i -= 1) {
    const el = elements[i]!;
    const size = sizes.get(el) ?? { text: 0, linked: 0, links: 0 };
    if (!SILENT.has(el.localName)) for (const node of Array.from(el.childNodes)) if (node.nodeType === TEXT_NODE) size.text += (node.textContent ?? '').replace(/\s+/g, '').length;
    if (el.localName === 'a') {
      size.linked = size.text;
      size.links += 1;
    }
    sizes.set(el, size);
    const parent = el.parentElement;
    if (parent === null || el === root) continue;
    const up = sizes.get(parent) ?? { text: 0, linked: 0, links: 0 };
    up.text += size.text;
    up.linked += size.linked;
    up.links += size.links;
    sizes.set(parent, up);
  }
  return sizes;
}

function textLength(el: DomElement): number {
  return (el.textContent ?? '').replace(/\s+/g, '').length;
}
