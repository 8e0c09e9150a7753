// The main text of an article page: page furniture removed, the body chosen (marked up, else Mozilla's Readability), as text and HTML.
import { Readability } from '@mozilla/readability';
import { findBoilerplate, isMarkedBody, type BoilerplateKind } from './article-boilerplate.js';
import { domElements, maxDepth, parseDocument, type DomDocument, type DomElement } from './article-dom.js';
import { removeInlineRelatedLinks } from './article-inline-links.js';
import { blockText } from './article-text.js';

export interface ArticleBody {
  /** Plain text, paragraphs separated by a blank line. */
  text: string;
  /** The same content as HTML, not yet sanitized. */
  html: string;
  /**
   * How the body was found: the element the page marks up as `articleBody`, Readability's choice, or
   * (a page too deep or too large for Readability, or one where it found nothing) the largest block of paragraphs.
   */
  method: 'marked-up' | 'readability' | 'paragraphs';
  /** Where: a CSS-like path of the marked-up element, or Readability's description. */
  locator: string;
  /** Page furniture removed before choosing, by kind. */
  removed: Partial<Record<BoilerplateKind, number>>;
}

/** Fewer words than this in the marked-up body is a teaser or a wrapper of the lead only. */
const MIN_MARKED_WORDS = 60;

/** A body shorter than this is a caption or a notice, not an article's text. */
const MIN_BODY_CHARS = 80;

/** Readability gives up below this many characters; short posts are still articles. */
const READABILITY_CHAR_THRESHOLD = 250;

/**
 * Readability's scoring walks each candidate's subtree and its ancestors: linear on real pages (a few
 * thousand elements, some thirty levels deep), quadratic on pages nested thousands deep or with tens of
 * thousands of elements. Past these bounds the largest block of paragraphs is the body instead.
 */
const MAX_ELEMENTS = 25_000;
const MAX_DEPTH = 200;

/** The article body of a page, or null when it has no text block that reads as one. Pure; never throws. */
export function extractArticleBody(html: string): ArticleBody | null {
  const document = parseDocument(html);
  if (document === null) return null;
  const removed: Partial<Record<BoilerplateKind, number>> = {};
  for (const { kind, el } of findBoilerplate(document)) {
    removed[kind] = (removed[kind] ?? 0) + 1;
    el.remove();
  }
  const root = markedBody(document) ?? (fitsReadability(document) ? readabilityBody(document) : null) ?? largestBlock(document);
  if (root === null) return null;
  const related = removeInlineRelatedLinks(root.el);
  if (related > 0) removed.related = (removed.related ?? 0) + related;
  const text = blockText(root.el);
  // Readability answers its best attempt even when every attempt fell short; a line or two is no article.
  if (text.length < MIN_BODY_CHARS) return null;
  return { text, html: root.el.innerHTML, method: root.method, locator: root.locator, removed };
}

interface Chosen {
  el: DomElement;
  method: ArticleBody['method'];
  locator: string;
}

/** The element(s) the page marks up as the article body, when they hold a whole article's worth of text. */
function markedBody(document: DomDocument): Chosen | null {
  const body = document.body;
  if (body === null) return null;
  const marked = domElements(body).filter(isMarkedBody);
  // The outermost only: a body nested in a body is the same text.
  const nested = marked.filter((el) => !marked.some((other) => other !== el && contains(other, el)));
  // Some pages mark the same text twice (a copy for another layout): each text once.
  const seen = new Set<string>();
  const outer = nested.filter((el) => {
    const key = (el.textContent ?? '').replace(/\s+/g, ' ').trim();
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
  if (outer.length === 0) return null;
  const words = outer.reduce((sum, el) => sum + (el.textContent ?? '').trim().split(/\s+/).length, 0);
  if (words < MIN_MARKED_WORDS) return null;
  if (outer.length === 1) return { el: outer[0]!, method: 'marked-up', locator: describe(outer[0]!) };
  const joined = document.createElement('div');
  for (const el of outer) joined.appendChild(el);
  return { el: joined, method: 'marked-up', locator: outer.map(describe).join(', ') };
}

function fitsReadability(document: DomDocument): boolean {
  const body = document.body;
  return body !== null && domElements(body).length <= MAX_ELEMENTS && maxDepth(body) <= MAX_DEPTH;
}

/** The element whose own paragraphs hold the most words: the body when Readability cannot be asked. */
function largestBlock(document: DomDocument): Chosen | null {
  const body = document.body;
  if (body === null) return null;
  const words = new Map<DomElement, number>();
  for (const el of domElements(body)) {
    const parent = el.parentElement;
    if (el.localName !== 'p' || parent === null) continue;
    words.set(parent, (words.get(parent) ?? 0) + (el.textContent ?? '').trim().split(/\s+/).length);
  }
  let best: DomElement | null = null;
  for (const [el, n] of words) if (best === null || n > words.get(best)!) best = el;
  return best === null ? null : { el: best, method: 'paragraphs', locator: describe(best) };
}

function readabilityBody(document: DomDocument): Chosen | null {
  try {
    const reader = new Readability<DomElement>(document as never, {
      charThreshold: READABILITY_CHAR_THRESHOLD,
      maxElemsToParse: MAX_ELEMENTS,
      disableJSONLD: true,
      keepClasses: true,
      serializer: (node) => node as unknown as DomElement,
    });
    const article = reader.parse();
    const el = article?.content;
    return el === null || el === undefined ? null : { el, method: 'readability', locator: readabilityLocator(el) };
  } catch {
    // Past maxElemsToParse Readability throws; a page that large is no article we can read.
    return null;
  }
}

/**
 * Readability moves the blocks it keeps into a page <div> of its own; they keep their tags and classes
 * (keepClasses), which name where on the page the text was: "div.story-body", "div.entry-content, div.more".
 */
function readabilityLocator(content: DomElement): string {
  const pageDiv = content.children[0];
  const blocks = pageDiv === undefined ? [] : Array.from(pageDiv.children).slice(0, 3);
  const names = blocks.map((el) => {
    const cls = el.getAttribute('class')?.trim().split(/\s+/)[0];
    const id = el.getAttribute('id');
    return `${el.localName}${id ? `#${id}` : cls ? `.${cls}` : ''}`;
  });
  return `Readability's choice: ${names.length === 0 ? 'the page' : names.join(', ')}${(pageDiv?.children.length ?? 0) > 3 ? ', …' : ''}`;
}

function contains(ancestor: DomElement, el: DomElement): boolean {
  for (let up = el.parentElement; up !== null; up = up.parentElement) if (up === ancestor) return true;
  return false;
}

/** A short path naming an element: its tag with id or first class, under its parent's. */
function describe(el: DomElement): string {
  const steps: string[] = [];
  for (let current: DomElement | null = el; current !== null && steps.length < 4; current = current.parentElement) {
    const id = current.getAttribute('id');
    const cls = current.getAttribute('class')?.trim().split(/\s+/)[0];
    steps.unshift(`${current.localName}${id ? `#${id}` : cls ? `.${cls}` : ''}`);
    if (id) break;
  }
  return steps.join(' > ');
}
