// Extracts the books.toscrape.com listing layout: article.product_pod cards with the full title in h3 a[title].
import type { Element } from 'domhandler';
import { absoluteUrl, descendants, hasAncestorWithin, priceFromText, visibleText } from './dom-helpers.js';
import type { ExtractContext, ExtractedItem, Extractor } from './types.js';

const hasClass = (el: Element, name: string): boolean => (el.attribs['class'] ?? '').split(/\s+/).includes(name);
const isHeading3 = (el: Element): boolean => el.name === 'h3';

export const booksListingExtractor: Extractor = {
  name: 'books-listing',
  extract({ $, pageUrl }: ExtractContext): ExtractedItem[] {
    return $('article.product_pod')
      .toArray()
      .map((card) => {
        // A walk of the card's few elements: per-card CSS queries (`h3 a`, `p.price_color`) compiled
        // their selectors anew for every card, two thirds of the time of a listing page.
        const inside = descendants(card);
        const link = inside.find((el) => el.name === 'a' && hasAncestorWithin(el, card, isHeading3));
        const price = inside.find((el) => el.name === 'p' && hasClass(el, 'price_color'));
        return {
          // The visible link text is cut to ~50 characters ("A Light in the ..."); the attribute has it all.
          title: link?.attribs['title']?.trim() || visibleText(link),
          ...priceFromText(visibleText(price)),
          url: absoluteUrl(link?.attribs['href'], pageUrl),
          description: null,
        };
      });
  },
};
