// Reads the books.toscrape.com listing layout: article.product_pod cards with the full title in h3 a[title].
import type { Element } from 'domhandler';
import { absoluteUrl, descendants, hasAncestorWithin, priceFromText, textField, visibleText, withFields } from '../dom-helpers.js';
import type { Page } from '../page.js';
import type { Candidate } from '../types.js';
import type { Extractor } from '../extractor.js';

const hasClass = (el: Element, name: string): boolean => (el.attribs['class'] ?? '').split(/\s+/).includes(name);
const isHeading3 = (el: Element): boolean => el.name === 'h3';

export const booksListingExtractor: Extractor = {
  source: 'books-listing',
  extract(page: Page): Candidate[] {
    return page.elements
      .filter((el) => el.name === 'article' && hasClass(el, 'product_pod'))
      .map((card) => {
        // A walk of the card's few elements: per-card CSS queries (`h3 a`, `p.price_color`) compiled
        // their selectors anew for every card, two thirds of the time of a listing page.
        const inside = descendants(card);
        const link = inside.find((el) => el.name === 'a' && hasAncestorWithin(el, card, isHeading3));
        const price = inside.find((el) => el.name === 'p' && hasClass(el, 'price_color'));
        const stock = inside.find((el) => el.name === 'p' && hasClass(el, 'availability'));
        const cardPath = page.cssPath(card);
        const linkPath = `${cardPath} h3 a`;
        const url = absoluteUrl(link?.attribs['href'], page.url);
        const fields = withFields(price === undefined ? {} : priceFromText(visibleText(price), `${cardPath} p.price_color`), {
          // The visible link text is cut to ~50 characters ("A Light in the ..."); the attribute has it all.
          title: textField(link?.attribs['title'], `${linkPath}[title]`) ?? textField(visibleText(link), linkPath),
          url: url === null ? undefined : { value: url, locator: `${linkPath}[href]` },
          availability: stock === undefined ? undefined : availabilityOfText(visibleText(stock), `${cardPath} p.availability`),
        });
        return { source: 'books-listing' as const, locator: cardPath, scope: 'item' as const, fields };
      });
  },
};

function availabilityOfText(text: string, locator: string) {
  if (/out of stock/i.test(text)) return { value: 'out_of_stock' as const, locator };
  if (/in stock/i.test(text)) return { value: 'in_stock' as const, locator };
  return undefined;
}
