// Extracts the books.toscrape.com listing layout: article.product_pod cards with the full title in h3 a[title].
import { absoluteUrl, priceFromText, visibleText } from './dom-helpers.js';
import type { ExtractContext, ExtractedItem, Extractor } from './types.js';

export const booksListingExtractor: Extractor = {
  name: 'books-listing',
  extract({ $, pageUrl }: ExtractContext): ExtractedItem[] {
    return $('article.product_pod')
      .toArray()
      .map((el) => {
        const card = $(el);
        const link = card.find('h3 a').first();
        return {
          // The visible link text is cut to ~50 characters ("A Light in the ..."); the attribute has it all.
          title: link.attr('title')?.trim() || visibleText(link.get(0)),
          ...priceFromText(visibleText(card.find('p.price_color').first().get(0))),
          url: absoluteUrl(link.attr('href'), pageUrl),
          description: null,
        };
      });
  },
};
