// What a reader sees of an article besides its text: the headline (h1), the byline (rel=author, a "byline" element), the dates shown in <time>.
import type { AnyNode, Element } from 'domhandler';
import { cleanText, isElement, visibleText } from '../dom-helpers.js';
import type { Page } from '../page.js';
import type { ArticleCandidate, ArticleCandidateFields } from '../types.js';
import type { ArticleExtractor } from '../extractor.js';

/** Regions whose dates and names belong to other texts: comments, reviews, related stories, sidebars. */
const OTHER_TEXTS = /comment|review|related|recommend|sidebar|widget|teaser|promo|more-stories|popular|trending/i;
const BYLINE_CLASS = /(?:^|[\s_-])(?:byline|by-line|author-?name|author|contributor)(?:$|[\s_-])/i;
const UPDATED = /updat|modif|revis/i;
/** Bylines read per page; a page names its authors in one or two places. */
const MAX_BYLINES = 10;
/** How far up a region (comments, related) is looked for: real pages nest a few dozen levels, hostile ones thousands. */
const MAX_ANCESTORS = 60;
/** A byline is a name or a few; longer text in a byline element is a bio. */
const MAX_BYLINE_CHARS = 120;

export const visibleArticleExtractor: ArticleExtractor = {
  source: 'visible',
  extract(page: Page): ArticleCandidate[] {
    const fields: ArticleCandidateFields = {};
    const heading = page.elements.find((el) => el.name === 'h1' && !page.chrome.has(el) && visibleText(el) !== '');
    if (heading !== undefined) fields.title = { value: visibleText(heading), locator: page.cssPath(heading) };

    let published: Element | undefined;
    let modified: Element | undefined;
    const bylines: Element[] = [];
    const authorLinks: Element[] = [];
    for (const el of page.elements) {
      if (page.chrome.has(el)) continue;
      if (el.name === 'time' && el.attribs['datetime'] !== undefined) {
        if ((published !== undefined && modified !== undefined) || inOtherText(el)) continue;
        const role = `${el.attribs['class'] ?? ''} ${el.attribs['itemprop'] ?? ''} ${el.parent !== null && isElement(el.parent) ? (el.parent.attribs['class'] ?? '') : ''}`;
        if (UPDATED.test(role)) modified ??= el;
        else published ??= el;
      } else if ((el.attribs['rel'] ?? '').split(/\s+/).includes('author')) {
        if (authorLinks.length < MAX_BYLINES && !inOtherText(el)) authorLinks.push(el);
      } else if (BYLINE_CLASS.test(el.attribs['class'] ?? '')) {
        // The outermost byline element only: its name parts are inside it.
        if (bylines.length < MAX_BYLINES && !bylines.some((b) => contains(b, el)) && !inOtherText(el)) bylines.push(el);
      }
    }
    if (published !== undefined) fields.published_at = { value: published.attribs['datetime']!, locator: `${page.cssPath(published)}[datetime]` };
    if (modified !== undefined) fields.modified_at = { value: modified.attribs['datetime']!, locator: `${page.cssPath(modified)}[datetime]` };
    // rel=author links name the authors alone; a byline element's text also holds roles ("Morag Lindsay, Highlands reporter").
    const named = authorLinks.length > 0 ? authorLinks : bylines;
    const names = named.map(bylineName).filter((n) => n !== '');
    if (names.length > 0) fields.authors = { value: names, locator: page.cssPath(named[0]!) };
    return Object.keys(fields).length === 0 ? [] : [{ source: 'visible', locator: 'body', scope: 'page', fields }];
  },
};

/** The name in a byline element: its text without the dates shown in it ("By Jane Doe <time>May 3</time>"). */
function bylineName(el: Element): string {
  const parts: string[] = [];
  const stack: AnyNode[] = [el];
  while (stack.length > 0) {
    const node = stack.pop()!;
    if (node.type === 'text') parts.push(node.data);
    else if (isElement(node) && node.name !== 'time' && node.name !== 'script' && node.name !== 'style') {
      parts.push(' ');
      for (let i = node.children.length - 1; i >= 0; i -= 1) stack.push(node.children[i]!);
    }
    if (parts.length > 200) break;
  }
  const text = cleanText(parts.join(''))
    .replace(/\s*[|•·]\s*$/, '')
    .replace(/^(?:posted|written|published)\s+/i, '');
  return text.length > MAX_BYLINE_CHARS ? '' : text;
}

function contains(ancestor: Element, el: Element): boolean {
  let steps = 0;
  for (let up = el.parent; up !== null && steps < MAX_ANCESTORS; up = up.parent, steps += 1) if (up === ancestor) return true;
  return false;
}

function inOtherText(el: Element): boolean {
  let steps = 0;
  for (let up = el.parent; up !== null && steps < MAX_ANCESTORS; up = up.parent, steps += 1) {
    if (isElement(up) && OTHER_TEXTS.test(`${up.attribs['class'] ?? ''} ${up.attribs['id'] ?? ''}`)) return true;
  }
  return false;
}
