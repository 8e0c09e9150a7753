// Which element titles a product page: the heading that names the page (its <title>, og:title), an h1, a "product-title"; never a card's title or a hidden template's.
import type { Element } from 'domhandler';
import { cleanText, visibleText } from '../dom-helpers.js';
import type { Page } from '../page.js';

export interface HeadingCandidate {
  el: Element;
  /** Its text names the page: the document title or og:title contains it (or it contains them). */
  namesPage: boolean;
}

export interface MainHeading {
  el: Element;
  /** Why this element, for explain. */
  reason: string;
}

/** Class, id or itemprop that say "this is the product's title". */
const PRODUCT_TITLE = /product[-_ ]?(?:title|name)|item[-_]?title|deal[-_]?title/i;
/** Weaker words: any title or name. */
const TITLE_WORD = /title|name|heading/i;

/** Texts shorter than this name the page only when they are the whole title (short words recur everywhere). */
const MIN_NAMING_CHARS = 8;

/** The page's own names, normalised: the document <title>, og:title and twitter:title. */
export function pageNames(page: Page): string[] {
  const title = page.elements.find((el) => el.name === 'title');
  const titleText = title === undefined ? '' : cleanText(title.children.map((c) => ('data' in c ? c.data : '')).join(''));
  return [titleText, page.metaContent('og:title') ?? '', page.metaContent('twitter:title') ?? ''].map(normalise).filter((name) => name !== '');
}

/** True when `text` names the page: one of its names contains it (long enough to mean something) or equals it. */
export function namesPage(text: string, names: readonly string[]): boolean {
  if (names.length === 0) return false;
  const own = normalise(text);
  if (own === '') return false;
  return names.some((name) => name === own || (own.length >= MIN_NAMING_CHARS && (name.includes(own) || (own.length <= 2 * name.length && own.includes(name)))));
}

/**
 * The best of the candidates: naming the page counts most, then being an h1, then a product-title
 * marker; ties go to the earlier one. Null when none is more than a loose match.
 */
export function chooseHeading(candidates: readonly HeadingCandidate[]): MainHeading | null {
  let best: { candidate: HeadingCandidate; score: number } | undefined;
  for (const candidate of candidates) {
    const score = scoreOf(candidate);
    if (score >= 3 && (best === undefined || score > best.score)) best = { candidate, score };
  }
  if (best === undefined) return null;
  const { el, namesPage: named } = best.candidate;
  const kind = el.name === 'h1' ? 'the h1' : PRODUCT_TITLE.test(markers(el)) ? 'the element marked as the product title' : `a ${el.name}`;
  return { el, reason: named ? `${kind} whose text the page's title repeats` : kind };
}

function scoreOf({ el, namesPage: named }: HeadingCandidate): number {
  const names = markers(el);
  let score = named ? 4 : 0;
  if (el.name === 'h1') score += 3;
  else if (el.name === 'h2') score += 1;
  // Less than an h1: a container named "productTitle" often holds the h1 itself.
  if (PRODUCT_TITLE.test(names)) score += 2;
  else if (TITLE_WORD.test(names)) score += 1;
  return score;
}

/** The names an element carries for its role: class, id, itemprop, data-testid. */
function markers(el: Element): string {
  return `${el.attribs['class'] ?? ''} ${el.attribs['id'] ?? ''} ${el.attribs['itemprop'] ?? ''} ${el.attribs['data-testid'] ?? ''}`.slice(0, 300);
}

/** The heading's text as a title: what a reader sees in it. */
export function headingText(heading: MainHeading): string {
  return visibleText(heading.el);
}

function normalise(text: string): string {
  return cleanText(text).toLowerCase();
}
