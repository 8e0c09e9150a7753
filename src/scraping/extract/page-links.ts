// A page's links as a crawl and the pagination read them: its "next" page, and every link it may follow.
import type { Element } from 'domhandler';
import { absoluteUrl, isElement } from './dom-helpers.js';
import type { Page } from './page.js';

/**
 * The page's "next" link, absolute and http(s); never the page itself, which would loop a crawl.
 * In order of trust: a link inside `li.next` (the common pager), `a[rel~=next]`, `link[rel~=next]`.
 * One walk of the elements: three CSS queries over a whole page cost more than its extraction.
 */
export function findNextUrl(page: Page): string | null {
  const current = withoutHash(page.url);
  const pager: Element[] = [];
  const relAnchors: Element[] = [];
  const relLinks: Element[] = [];
  const isNext = (el: Element, attr: string) => /(?:^|\s)next(?:\s|$)/i.test(el.attribs[attr] ?? '');
  const hasPagerLi = page.elements.some((el) => el.name === 'li' && isNext(el, 'class'));
  for (const el of page.elements) {
    if (el.attribs['href'] === undefined) continue;
    if (el.name === 'a') {
      if (hasPagerLi && insidePagerItem(el, isNext)) pager.push(el);
      if (isNext(el, 'rel')) relAnchors.push(el);
    } else if (el.name === 'link' && isNext(el, 'rel')) {
      relLinks.push(el);
    }
  }
  for (const el of [...pager, ...relAnchors, ...relLinks]) {
    const url = absoluteUrl(el.attribs['href'], page.url);
    if (url !== null && withoutHash(url) !== current) return url;
  }
  return null;
}

/** The links a crawler may follow: a/area hrefs, made absolute, fragments dropped, rel=nofollow respected. */
export function pageLinks(page: Page): string[] {
  const links = new Set<string>();
  for (const el of page.elements) {
    if ((el.name !== 'a' && el.name !== 'area') || el.attribs['href'] === undefined) continue;
    if (/(?:^|\s)nofollow(?:\s|$)/i.test(el.attribs['rel'] ?? '')) continue;
    const url = absoluteUrl(el.attribs['href'], page.url);
    if (url !== null) links.add(withoutHash(url));
  }
  return [...links];
}

function insidePagerItem(el: Element, isNext: (el: Element, attr: string) => boolean): boolean {
  for (let current = el.parent; current !== null; current = current.parent) {
    if (isElement(current) && current.name === 'li' && isNext(current, 'class')) return true;
  }
  return false;
}

function withoutHash(url: string): string {
  try {
    const parsed = new URL(url);
    parsed.hash = '';
    return parsed.href;
  } catch {
    return url;
  }
}
