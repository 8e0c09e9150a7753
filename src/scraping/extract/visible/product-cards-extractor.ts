// Heuristic for shops without structured data: finds repeated "cards" (same tag and class) that each show a title and a price.
import type { AnyNode, Element } from 'domhandler';
import { parsePrice } from '../../price.js';
import { absoluteUrl, cleanText, closestWithin, descendants, hasAncestorWithin, isElement, priceFromText, textField, visibleText, withFields } from '../dom-helpers.js';
import type { Page } from '../page.js';
import type { Candidate } from '../types.js';
import type { Extractor } from '../extractor.js';

/** Fewer than this many priced cards is a coincidence, not a listing. */
const MIN_PRICED_CARDS = 2;

/** Class names that mark a price. */
const PRICE_CLASS = /price|cost|amount/i;

/**
 * Words in a class name that mark a price that no longer applies ("old-price", "price--was",
 * "compareAtPrice"). Whole words, so "sold-out" or "price-holder" do not count.
 */
const STALE_PRICE_WORDS: ReadonlySet<string> = new Set(['old', 'was', 'regular', 'strike', 'strikethrough', 'crossed', 'compare', 'before', 'original', 'rrp', 'list']);

/**
 * How many elements the heuristic may inspect per page. Listings cost about their own size, so
 * real pages stay far below it; pathological nesting (every level a group) would be quadratic.
 */
const WORK_BUDGET = 3_000_000;

/** A loose price written as bare text must be short: a sentence that mentions "$5 billion" is not a price tag. */
const MAX_LOOSE_PRICE_CHARS = 30;

/** Link texts that are calls to action, never a product's name ("View Details...", "Read more »"). */
const ACTION_TEXT =
  /^(?:add to (?:cart|basket|bag)|buy(?: now)?|view(?: details| product| item)?|details|more(?: info| details)?|read more|learn more|see more|shop now|quick ?view|select options|choose options|in stock|out of stock|sold out)[\s.…»>→!]*$/i;

const SKIPPED_TAGS: ReadonlySet<string> = new Set(['html', 'head', 'body', 'script', 'style', 'noscript', 'template', 'meta', 'link', 'br', 'img', 'svg', 'option']);

interface Group {
  depth: number;
  /** Document order of the group's first member, to break ties the same way every time. */
  order: number;
  items: Candidate[];
  priced: number;
}

export const productCardsExtractor: Extractor = {
  source: 'product-cards',
  extract(page: Page): Candidate[] {
    const { root, chrome } = page;
    const sizes = page.subtreeSizes;
    const analysed: Group[] = [];
    let budget = WORK_BUDGET;
    // Bigger groups first: when the budget runs out, what is left unexamined is least likely a listing.
    for (const group of candidateGroups(root).sort((a, b) => b.members.length - a.members.length || a.depth - b.depth)) {
      const cost = group.members.reduce((sum, el) => sum + (sizes.get(el) ?? 1), 0);
      if (cost > budget) continue;
      budget -= cost;
      analysed.push(analyseGroup(group, page, chrome));
    }
    const best = bestGroup(analysed);
    return best?.items ?? [];
  },
};

/**
 * Elements with the same tag and first class at the same depth under same-looking parents. Grouping
 * across parents lets a grid split into rows (".row > .col") still count as one listing.
 */
function candidateGroups(root: AnyNode): Array<{ depth: number; order: number; members: Element[] }> {
  const depths = new Map<AnyNode, number>();
  const groups = new Map<string, { depth: number; order: number; members: Element[] }>();
  for (const el of descendants(root)) {
    const parent = el.parent;
    const depth = (parent === null ? 0 : (depths.get(parent) ?? 0)) + 1;
    depths.set(el, depth);
    if (SKIPPED_TAGS.has(el.name) || parent === null || !isElement(parent)) continue;
    const key = `${depth}|${signature(parent)}|${signature(el)}`;
    const group = groups.get(key) ?? { depth, order: groups.size, members: [] };
    group.members.push(el);
    groups.set(key, group);
  }
  return [...groups.values()].filter((g) => g.members.length >= MIN_PRICED_CARDS);
}

/** Tag plus first class: later classes often vary per card (post-123, sold-out, featured). */
function signature(el: Element): string {
  const firstClass = (el.attribs['class'] ?? '').trim().split(/\s+/)[0] ?? '';
  return `${el.name}.${firstClass}`;
}

function analyseGroup(group: { depth: number; order: number; members: Element[] }, page: Page, chrome: ReadonlySet<Element>): Group {
  const items = group.members
    .filter((el) => !chrome.has(el))
    .flatMap((el) => {
      const item = cardItem(el, page);
      return item === null ? [] : [item];
    });
  return { depth: group.depth, order: group.order, items, priced: items.filter((item) => item.fields.price !== undefined).length };
}

/**
 * The group with the most priced cards. On a tie the outermost wins (a card and its inner body
 * hold the same products, and the card also holds the link and image), then the first in the page.
 */
function bestGroup(groups: Group[]): Group | null {
  const ranked = groups.filter((g) => g.priced >= MIN_PRICED_CARDS).sort((a, b) => b.priced - a.priced || a.depth - b.depth || a.order - b.order);
  return ranked[0] ?? null;
}

/** A card's candidate, or null when it lacks a title or anything in the place of a price. */
function cardItem(card: Element, page: Page): Candidate | null {
  // One walk of the card serves every lookup below; CSS queries per card were the slow part on big listings.
  const inside = descendants(card);
  const priceEl = priceElement(card, inside);
  const loose = priceEl === null ? loosePrice(card) : null;
  const priceText = priceEl === null ? (loose?.text ?? '') : visibleText(priceEl) || priceEl.attribs['content'] || '';
  if (priceText === '') return null;
  const titleEl = titleElement(card, inside, priceEl);
  if (titleEl === null) return null;
  const title = titleOf(titleEl);
  if (title === '' || title === priceText) return null;
  const description = inside.find((el) => DESCRIPTION_CLASS.test(el.attribs['class'] ?? ''));
  const link = linkOf(card, inside, titleEl);
  const url = absoluteUrl(link?.attribs['href'], page.url);
  const priceAt = priceEl ?? loose?.el ?? card;
  const fields = priceFromText(priceText, page.cssPath(priceAt));
  const stale = fields.price === undefined ? undefined : stalePrice(card, inside, fields.price.value);
  withFields(fields, {
    title: { value: title, locator: page.cssPath(titleEl) },
    url: url === null || link === undefined ? undefined : { value: url, locator: `${page.cssPath(link)}[href]` },
    description: description === undefined ? undefined : textField(visibleText(description), page.cssPath(description)),
    list_price: stale === undefined ? undefined : { value: stale.amount, locator: page.cssPath(stale.el) },
  });
  return { source: 'product-cards', locator: page.cssPath(card), scope: 'item', fields };
}

/** A struck-through or "was" price higher than the current one: the list price beside a sale. */
function stalePrice(card: Element, inside: Element[], current: number): { amount: number; el: Element } | undefined {
  for (const el of inside) {
    if (!(isPriceMarked(el) || STRUCK_TAGS.has(el.name)) || !isStalePrice(el, card)) continue;
    const amount = parsePrice(visibleText(el))?.amount;
    if (amount !== undefined && amount > current) return { amount, el };
  }
  return undefined;
}

const DESCRIPTION_CLASS = /desc|summary|excerpt/i;

/**
 * The innermost element marked as the current price ("price-box" holds "old-price" and
 * "special-price"; the latter is wanted); "was" prices and struck-through ones are skipped.
 */
function priceElement(card: Element, inside: Element[]): Element | null {
  const marked = inside.filter((el) => isPriceMarked(el) && !isStalePrice(el, card));
  // Linear, not pairwise: a wrapper around a whole grid can hold thousands of marked elements.
  const holdsAnother = new Set<AnyNode>();
  for (const el of marked) {
    for (let current = el.parent; current !== null && current !== card && !holdsAnother.has(current); current = current.parent) holdsAnother.add(current);
  }
  const innermost = marked.filter((el) => !holdsAnother.has(el));
  return innermost.find((el) => parsePrice(visibleText(el) || el.attribs['content']) !== null) ?? innermost[0] ?? null;
}

function isPriceMarked(el: Element): boolean {
  return PRICE_CLASS.test(el.attribs['class'] ?? '') || el.attribs['itemprop'] === 'price' || el.attribs['data-price'] !== undefined;
}

function isStalePrice(el: Element, card: Element): boolean {
  if (STRUCK_TAGS.has(el.name) || classWords(el).some((word) => STALE_PRICE_WORDS.has(word))) return true;
  return hasAncestorWithin(el, card, (ancestor) => STRUCK_TAGS.has(ancestor.name));
}

/** "price--old compareAtPrice" -> ["price", "old", "compare", "at", "price"]. */
function classWords(el: Element): string[] {
  return (el.attribs['class'] ?? '')
    .replace(/([a-z])([A-Z])/g, '$1-$2')
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter((word) => word !== '');
}

const STRUCK_TAGS: ReadonlySet<string> = new Set(['del', 's', 'strike']);

/** Without a price class: a short text node that reads as an amount with a currency ("USD 45", "¥3,000"). */
function loosePrice(card: Element): { text: string; el: Element } | null {
  const stack: AnyNode[] = [card];
  while (stack.length > 0) {
    const node = stack.pop()!;
    if (node.type === 'text') {
      const text = cleanText(node.data);
      if (text.length > 0 && text.length <= MAX_LOOSE_PRICE_CHARS && parsePrice(text)?.currency) {
        return { text, el: node.parent !== null && isElement(node.parent) ? node.parent : card };
      }
    } else if (node.type === 'tag' && !STRUCK_TAGS.has(node.name)) {
      for (let i = node.children.length - 1; i >= 0; i -= 1) stack.push(node.children[i]!);
    }
  }
  return null;
}

/** A heading, else something classed as a title or name, else a link whose text names something. */
function titleElement(card: Element, inside: Element[], priceEl: Element | null): Element | null {
  const apartFromPrice = (el: Element): boolean => priceEl === null || (!contains(el, priceEl, card) && !contains(priceEl, el, card));
  const usable = (test: (el: Element) => boolean): Element | undefined => inside.find((el) => test(el) && apartFromPrice(el) && visibleText(el) !== '');
  return (
    usable((el) => /^h[1-6]$/.test(el.name)) ??
    usable((el) => TITLE_CLASS.test(el.attribs['class'] ?? '') || el.attribs['itemprop'] === 'name') ??
    usable((el) => {
      if (!isLink(el)) return false;
      const text = visibleText(el);
      return text.length >= 3 && !ACTION_TEXT.test(text) && !parsePrice(text)?.currency;
    }) ??
    null
  );
}

const TITLE_CLASS = /title|name/i;

/** Full title: a link's title attribute holds it when the visible text is truncated. */
function titleOf(titleEl: Element): string {
  const link = titleEl.name === 'a' ? titleEl : descendants(titleEl).find((el) => el.name === 'a' && el.attribs['title'] !== undefined);
  return cleanText(link?.attribs['title']) || visibleText(titleEl);
}

/** The title's own link (around or inside it), else the card's first link. */
function linkOf(card: Element, inside: Element[], titleEl: Element): Element | undefined {
  return closestWithin(titleEl, card, isLink) ?? descendants(titleEl).find(isLink) ?? inside.find(isLink);
}

function isLink(el: Element): boolean {
  return el.name === 'a' && el.attribs['href'] !== undefined;
}

/** Whether `node` lies inside `ancestor`; the walk stops at the card, so it stays cheap on deep pages. */
function contains(ancestor: Element, node: AnyNode, card: Element): boolean {
  return hasAncestorWithin(node, card, (el) => el === ancestor);
}
