// Reads items with CSS selectors the caller supplied ({item, title, price, description?, link?}).
import type { Cheerio } from 'cheerio';
import type { AnyNode, Element } from 'domhandler';
import { absoluteUrl, isElement, priceFromText, textField, visibleText, withFields } from '../dom-helpers.js';
import type { Page } from '../page.js';
import type { Candidate, Selectors } from '../types.js';
import type { Extractor } from '../extractor.js';

export const selectorsExtractor: Extractor = {
  source: 'selectors',
  extract(page: Page, selectors?: Selectors): Candidate[] {
    if (selectors === undefined) return [];
    const { $ } = page;
    const items =
      tryFind(() => $(selectors.item))
        ?.toArray()
        .filter(isElement) ?? [];
    // An item whose title selector finds nothing is no item: the caller's selectors then fall through to the other sources.
    return items.flatMap((el): Candidate[] => {
      const item = $(el);
      const base = page.cssPath(el);
      const titleEl = first(item, selectors.title);
      const priceEl = first(item, selectors.price);
      const descriptionEl = selectors.description ? first(item, selectors.description) : undefined;
      const at = (selector: string | undefined) => (selector === undefined || selector.trim() === '' ? base : `${base} ${selector}`);
      // Listing pages often truncate visible titles and keep the full one in the title attribute.
      const title = textField(titleEl?.attr('title'), `${at(selectors.title)}[title]`) ?? textField(visibleText(titleEl?.get(0)), at(selectors.title));
      // A price shown as an image or icon may carry its text in `content` (meta-like markup).
      const priceText = visibleText(priceEl?.get(0)) || priceEl?.attr('content') || null;
      const link = linkHref(item, titleEl, selectors.link);
      const url = absoluteUrl(link, page.url);
      const fields = withFields(priceFromText(priceText, at(selectors.price)), {
        title,
        url: url === null ? undefined : { value: url, locator: `${at(selectors.link ?? selectors.title)} [href]` },
        description: descriptionEl === undefined ? undefined : textField(visibleText(descriptionEl.get(0)), at(selectors.description)),
      });
      return title === undefined ? [] : [{ source: 'selectors', locator: base, scope: 'item', fields }];
    });
  },
};

/**
 * The item's link: the `link` selector if given (its href, or the href of a link inside or around
 * it), else the link around or inside the title, else the item's first link.
 */
function linkHref(item: Cheerio<Element>, titleEl: Cheerio<Element> | undefined, link: string | undefined): string | undefined {
  const anchor = (el: Cheerio<Element> | undefined): string | undefined =>
    el === undefined ? undefined : (el.attr('href') ?? el.find('a[href]').first().attr('href') ?? el.closest('a[href]').attr('href'));
  if (link) return anchor(first(item, link));
  return anchor(titleEl) ?? anchor(item.is('a[href]') ? item : item.find('a[href]').first());
}

/** The first match inside the item; an empty selector means the item itself (item "h3 a", title ""). */
function first(item: Cheerio<Element>, selector: string): Cheerio<Element> | undefined {
  if (selector.trim() === '') return item;
  const found = tryFind(() => item.find(selector).first());
  return found !== undefined && found.length > 0 ? found : undefined;
}

/** A caller's selector may be invalid CSS; css-select throws on those, and that means "nothing found". */
function tryFind<T extends AnyNode>(find: () => Cheerio<T>): Cheerio<T> | undefined {
  try {
    return find();
  } catch {
    return undefined;
  }
}
