// Extracts blog/news listings: repeated <article>s, or repeated list items/cards, each with a linked heading, and a summary, image and date when shown.
import type { CheerioAPI } from 'cheerio';
import type { AnyNode, Element } from 'domhandler';
import { absoluteUrl, closestWithin, descendants, hasAncestorWithin, isElement, outermostArticles, textField, visibleText } from '../dom-helpers.js';
import type { Page } from '../page.js';
import type { ArticleCandidate, ArticleCandidateFields } from '../types.js';
import type { ArticleExtractor } from '../extractor.js';

/** One linked heading is a page's own title; a listing repeats them. */
const MIN_ARTICLES = 2;

const HEADINGS = 'h1, h2, h3, h4, h5, h6';
const SUMMARY = '[class*="summary"], [class*="excerpt"], [class*="teaser"], [class*="desc"], [class*="lead"], p';

/** Elements the group search may inspect per page; see the same guard in the product-cards heuristic. */
const WORK_BUDGET = 3_000_000;

export const articleListExtractor: ArticleExtractor = {
  source: 'article-list',
  extract(page: Page): ArticleCandidate[] {
    const { root, chrome } = page;
    const fromArticles = itemsOf(page, outermostArticles(root, chrome));
    if (fromArticles.length >= MIN_ARTICLES) return fromArticles;
    const sizes = page.subtreeSizes;
    let budget = WORK_BUDGET;
    let best: ArticleCandidate[] = [];
    for (const members of siblingGroups(root, chrome).sort((a, b) => b.length - a.length)) {
      const cost = members.reduce((sum, el) => sum + (sizes.get(el) ?? 1), 0);
      if (cost > budget) continue;
      budget -= cost;
      const items = itemsOf(page, members);
      if (items.length > best.length) best = items;
    }
    return best.length >= MIN_ARTICLES ? best : [];
  },
};

/** Children sharing tag and class under one parent (li of a ul, cards of a grid), outside page furniture. */
function siblingGroups(root: AnyNode, chrome: ReadonlySet<Element>): Element[][] {
  const groups: Element[][] = [];
  for (const parent of descendants(root)) {
    if (chrome.has(parent)) continue;
    const bySignature = new Map<string, Element[]>();
    for (const child of parent.children) {
      if (!isElement(child)) continue;
      const key = `${child.name}.${child.attribs['class'] ?? ''}`;
      const members = bySignature.get(key);
      if (members === undefined) bySignature.set(key, [child]);
      else members.push(child);
    }
    for (const members of bySignature.values()) if (members.length >= MIN_ARTICLES) groups.push(members);
  }
  return groups;
}

function itemsOf(page: Page, entries: Element[]): ArticleCandidate[] {
  return entries.flatMap((el) => {
    const item = entryItem(page, el);
    return item === null ? [] : [item];
  });
}

/** An entry counts when a heading carries a link (inside it, or wrapping it). */
function entryItem(page: Page, entry: Element): ArticleCandidate | null {
  const { $ } = page;
  const heading = $(entry)
    .find(HEADINGS)
    .toArray()
    .find((h) => linkOf($, h, entry) !== undefined && visibleText(h) !== '');
  if (heading === undefined) return null;
  const summary = $(entry)
    .find(SUMMARY)
    .toArray()
    .find((el) => !hasAncestorWithin(el, entry, isHeading) && $(el).find(HEADINGS).length === 0 && visibleText(el) !== '');
  const title = textField(visibleText(heading), page.cssPath(heading));
  if (title === undefined) return null;
  const url = absoluteUrl(linkOf($, heading, entry), page.url);
  const fields: ArticleCandidateFields = { title };
  if (url !== null) fields.url = { value: url, locator: `${page.cssPath(heading)} a[href]` };
  const description = summary === undefined ? undefined : textField(visibleText(summary), page.cssPath(summary));
  if (description !== undefined) fields.description = description;
  const image = $(entry)
    .find('img')
    .toArray()
    .map((img) => ({ img, src: imageSource(img, page.url) }))
    .find((i) => i.src !== null);
  if (image !== undefined) fields.image_url = { value: image.src!, locator: `${page.cssPath(image.img)}[src]` };
  const time = $(entry).find('time[datetime]').first().get(0);
  if (time !== undefined) fields.published_at = { value: time.attribs['datetime']!, locator: `${page.cssPath(time)}[datetime]` };
  return { source: 'article-list', locator: page.cssPath(entry), scope: 'item', fields };
}

/** An image's address: lazy-loading pages keep the real one in data-src (or the first of a srcset). */
function imageSource(img: Element, base: string): string | null {
  const { attribs } = img;
  const srcset = (attribs['data-srcset'] ?? attribs['srcset'])?.trim().split(/\s+/)[0];
  for (const candidate of [attribs['data-src'], attribs['data-lazy-src'], attribs['src'], srcset]) {
    if (candidate === undefined || candidate.startsWith('data:')) continue;
    const url = absoluteUrl(candidate, base);
    if (url !== null) return url;
  }
  return null;
}

function isHeading(el: Element): boolean {
  return /^h[1-6]$/.test(el.name);
}

/** The heading's link: inside it, or around it but still within the entry. */
function linkOf($: CheerioAPI, heading: Element, entry: Element): string | undefined {
  const around = closestWithin(heading, entry, (el) => el.name === 'a' && el.attribs['href'] !== undefined);
  return $(heading).find('a[href]').first().attr('href') ?? around?.attribs['href'];
}
