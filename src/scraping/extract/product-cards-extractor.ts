// Heuristic for shops without structured data: finds repeated "cards" (same tag and class) that each show a title and a price.
import type { CheerioAPI } from 'cheerio';
import type { AnyNode, Element } from 'domhandler';
import { parsePrice } from '../price.js';
import { absoluteUrl, cleanText, closestWithin, hasAncestorWithin, isElement, pageChrome, priceFromText, subtreeSizes, visibleText } from './dom-helpers.js';
import type { ExtractContext, ExtractedItem, Extractor } from './types.js';

/** Fewer than this many priced cards is a coincidence, not a listing. */
const MIN_PRICED_CARDS = 2;

/** Class names that mark a price, and the ones that mark a price that no longer applies. */
const PRICE_CLASS = /price|cost|amount/i;
const STALE_PRICE_CLASS = /old|was|regular|strike|compare|before|original|rrp|list-price/i;

/**
 * How many elements the heuristic may inspect per page. Listings cost about their own size, so
 * real pages stay far below it; pathological nesting (every level a group) would be quadratic.
 */
const WORK_BUDGET = 3_000_000;

/** A loose price written as bare text must be short: a sentence that mentions "$5 billion" is not a price tag. */
const MAX_LOOSE_PRICE_CHARS = 30;

/** Link texts that are calls to action, never a product's name. */
const ACTION_TEXT = /^(?:add to (?:cart|basket|bag)|buy(?: now)?|view(?: details)?|details|more(?: info)?|read more|shop now|quick view|select options|in stock|out of stock)$/i;

const SKIPPED_TAGS: ReadonlySet<string> = new Set(['html', 'head', 'body', 'script', 'style', 'noscript', 'template', 'meta', 'link', 'br', 'img', 'svg', 'option']);

interface Card {
  element: Element;
  item: ExtractedItem;
}

interface Group {
  depth: number;
  /** Document order of the group's first member, to break ties the same way every time. */
  order: number;
  cards: Card[];
  priced: number;
}

export const productCardsExtractor: Extractor = {
  name: 'product-cards',
  extract({ $, pageUrl }: ExtractContext): ExtractedItem[] {
    const root = $.root().get(0);
    if (root === undefined) return [];
    const chrome = pageChrome(root);
    const sizes = subtreeSizes(root);
    const analysed: Group[] = [];
    let budget = WORK_BUDGET;
    // Bigger groups first: when the budget runs out, what is left unexamined is least likely a listing.
    for (const group of candidateGroups($).sort((a, b) => b.members.length - a.members.length || a.depth - b.depth)) {
      const cost = group.members.reduce((sum, el) => sum + (sizes.get(el) ?? 1), 0);
      if (cost > budget) continue;
      budget -= cost;
      analysed.push(analyseGroup($, group, pageUrl, chrome));
    }
    const best = bestGroup(analysed);
    return best === null ? [] : best.cards.map((card) => card.item);
  },
};

/**
 * Elements with the same tag and first class at the same depth under same-looking parents. Grouping
 * across parents lets a grid split into rows (".row > .col") still count as one listing.
 */
function candidateGroups($: CheerioAPI): Array<{ depth: number; order: number; members: Element[] }> {
  const depths = new Map<AnyNode, number>();
  const groups = new Map<string, { depth: number; order: number; members: Element[] }>();
  for (const el of $('body *').toArray()) {
    const parent = el.parent;
    const depth = (parent === null ? 0 : depths.get(parent) ?? 0) + 1;
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

function analyseGroup($: CheerioAPI, group: { depth: number; order: number; members: Element[] }, pageUrl: string, chrome: ReadonlySet<Element>): Group {
  const cards = group.members
    .filter((el) => !chrome.has(el))
    .flatMap((el) => {
      const item = cardItem($, el, pageUrl);
      return item === null ? [] : [{ element: el, item }];
    });
  return { depth: group.depth, order: group.order, cards, priced: cards.filter((c) => c.item.price !== null).length };
}

/**
 * The group with the most priced cards. On a tie the outermost wins (a card and its inner body
 * hold the same products, and the card also holds the link and image), then the first in the page.
 */
function bestGroup(groups: Group[]): Group | null {
  const ranked = groups
    .filter((g) => g.priced >= MIN_PRICED_CARDS)
    .sort((a, b) => b.priced - a.priced || a.depth - b.depth || a.order - b.order);
  return ranked[0] ?? null;
}

/** A card's item, or null when it lacks a title or anything in the place of a price. */
function cardItem($: CheerioAPI, card: Element, pageUrl: string): ExtractedItem | null {
  const priceEl = priceElement($, card);
  const priceText = priceEl === null ? loosePriceText(card) : visibleText(priceEl) || priceEl.attribs['content'] || '';
  if (priceText === '') return null;
  const titleEl = titleElement($, card, priceEl);
  if (titleEl === null) return null;
  const title = titleOf($, titleEl);
  if (title === '' || title === priceText) return null;
  const description = $(card).find('[class*="desc"], [class*="summary"], [class*="excerpt"]').first().get(0);
  return {
    title,
    ...priceFromText(priceText),
    url: absoluteUrl(linkOf($, card, titleEl), pageUrl),
    description: description === undefined ? null : visibleText(description) || null,
  };
}

/** The innermost element marked as the current price; "was" prices and struck-through ones are skipped. */
function priceElement($: CheerioAPI, card: Element): Element | null {
  const marked = $(card)
    .find('*')
    .toArray()
    .filter((el) => isPriceMarked(el) && !isStalePrice(el, card));
  const innermost = marked.filter((el) => !marked.some((other) => other !== el && contains(el, other, card)));
  return innermost.find((el) => parsePrice(visibleText(el) || el.attribs['content']) !== null) ?? innermost[0] ?? null;
}

function isPriceMarked(el: Element): boolean {
  return PRICE_CLASS.test(el.attribs['class'] ?? '') || el.attribs['itemprop'] === 'price' || el.attribs['data-price'] !== undefined;
}

function isStalePrice(el: Element, card: Element): boolean {
  if (STALE_PRICE_CLASS.test(el.attribs['class'] ?? '') || STRUCK_TAGS.has(el.name)) return true;
  return hasAncestorWithin(el, card, (ancestor) => STRUCK_TAGS.has(ancestor.name));
}

const STRUCK_TAGS: ReadonlySet<string> = new Set(['del', 's', 'strike']);

/** Without a price class: a short text node that reads as an amount with a currency ("USD 45", "¥3,000"). */
function loosePriceText(card: Element): string {
  const stack: AnyNode[] = [card];
  while (stack.length > 0) {
    const node = stack.pop()!;
    if (node.type === 'text') {
      const text = cleanText(node.data);
      if (text.length > 0 && text.length <= MAX_LOOSE_PRICE_CHARS && parsePrice(text)?.currency) return text;
    } else if (node.type === 'tag' && !STRUCK_TAGS.has(node.name)) {
      for (let i = node.children.length - 1; i >= 0; i -= 1) stack.push(node.children[i]!);
    }
  }
  return '';
}

/** A heading, else something classed as a title or name, else a link whose text names something. */
function titleElement($: CheerioAPI, card: Element, priceEl: Element | null): Element | null {
  const usable = (el: Element): boolean => (priceEl === null || (!contains(el, priceEl, card) && !contains(priceEl, el, card))) && visibleText(el) !== '';
  const inCard = (selector: string): Element[] => $(card).find(selector).toArray().filter(usable);
  const heading = inCard('h1, h2, h3, h4, h5, h6')[0];
  if (heading !== undefined) return heading;
  const named = inCard('[class*="title"], [class*="name"], [itemprop="name"]')[0];
  if (named !== undefined) return named;
  return (
    inCard('a[href]').find((a) => {
      const text = visibleText(a);
      return text.length >= 3 && !ACTION_TEXT.test(text) && !parsePrice(text)?.currency;
    }) ?? null
  );
}

/** Full title: a link's title attribute holds it when the visible text is truncated. */
function titleOf($: CheerioAPI, titleEl: Element): string {
  const link = titleEl.name === 'a' ? $(titleEl) : $(titleEl).find('a[title]').first();
  return cleanText(link.attr('title')) || visibleText(titleEl);
}

/** The title's own link, else the card's first link, else the card itself when it is a link. */
function linkOf($: CheerioAPI, card: Element, titleEl: Element): string | undefined {
  const isLink = (el: Element): boolean => el.name === 'a' && el.attribs['href'] !== undefined;
  return (
    closestWithin(titleEl, card, isLink)?.attribs['href'] ??
    $(titleEl).find('a[href]').first().attr('href') ??
    $(card).find('a[href]').first().attr('href')
  );
}

/** Whether `node` lies inside `ancestor`; the walk stops at the card, so it stays cheap on deep pages. */
function contains(ancestor: Element, node: AnyNode, card: Element): boolean {
  return hasAncestorWithin(node, card, (el) => el === ancestor);
}
