// Extracts schema.org Products marked up with HTML microdata (itemscope/itemtype/itemprop), offers nested or flat.
import type { CheerioAPI } from 'cheerio';
import type { Element } from 'domhandler';
import { absoluteUrl, isElement, priceFromData, priceFromText, visibleText } from './dom-helpers.js';
import type { ExtractContext, ExtractedItem, Extractor } from './types.js';

/** More product scopes than any real page has; each costs a walk of its subtree, so hostile nesting is cut off. */
const MAX_PRODUCTS = 2000;

const PRODUCT_TYPE = /(?:^|[/#])(?:Product|ProductGroup|ProductModel|IndividualProduct)$/i;

export const microdataExtractor: Extractor = {
  name: 'microdata',
  extract({ $, pageUrl }: ExtractContext): ExtractedItem[] {
    return $('[itemscope][itemtype]')
      .toArray()
      .filter((el) => isProduct(el) && !isPropertyOfProduct(el))
      .slice(0, MAX_PRODUCTS)
      .flatMap((el) => {
        const item = productItem($, el, pageUrl);
        return item === null ? [] : [item];
      });
  },
};

function isProduct(el: Element): boolean {
  return (el.attribs['itemtype'] ?? '').split(/\s+/).some((type) => PRODUCT_TYPE.test(type));
}

/** A product nested as a property of another product (isRelatedTo, isAccessoryOrSparePartFor) is not a listing item. */
function isPropertyOfProduct(el: Element): boolean {
  if (el.attribs['itemprop'] === undefined) return false;
  for (let current = el.parent; current !== null; current = current.parent) {
    if (isElement(current) && current.attribs['itemscope'] !== undefined) return isProduct(current);
  }
  return false;
}

function productItem($: CheerioAPI, scope: Element, pageUrl: string): ExtractedItem | null {
  const props = ownProperties($, scope);
  const nameEl = props.get('name');
  const title = textValue(nameEl);
  if (title === '') return null;
  const offer = props.get('offers');
  const offerProps = offer !== undefined && offer.attribs['itemscope'] !== undefined ? ownProperties($, offer) : new Map<string, Element>();
  const priceEl = offerProps.get('price') ?? offerProps.get('lowPrice') ?? props.get('price') ?? props.get('lowPrice');
  const currencyEl = offerProps.get('priceCurrency') ?? props.get('priceCurrency');
  return {
    title,
    ...priceFields(priceEl, currencyEl === undefined ? null : textValue(currencyEl)),
    // Shops often link the name instead of marking a url property.
    url: urlValue(props.get('url'), pageUrl) ?? urlValue(offerProps.get('url'), pageUrl) ?? linkAround($, nameEl, pageUrl),
    description: textValue(props.get('description')) || null,
  };
}

/**
 * Shows the price as written (the element's text, e.g. "$1,299.99") but takes the amount from the
 * machine-readable `content` attribute when there is one, since that is unambiguous ("1299.99").
 */
function priceFields(priceEl: Element | undefined, currency: string | null): Pick<ExtractedItem, 'price_text' | 'price' | 'currency'> {
  if (priceEl === undefined) return priceFromData(null, currency);
  const shown = visibleText(priceEl);
  const content = priceEl.attribs['content'];
  if (content === undefined) return priceFromData(shown, currency);
  const fromContent = priceFromData(content, currency);
  const currencyShown = priceFromText(shown).currency;
  return { ...fromContent, price_text: shown || fromContent.price_text, currency: fromContent.currency ?? currencyShown };
}

/**
 * The first element for each itemprop that belongs to `scope` itself, not to an item nested in it.
 * An element that is both itemprop and itemscope (offers) is a property of the outer scope.
 */
function ownProperties($: CheerioAPI, scope: Element): Map<string, Element> {
  const props = new Map<string, Element>();
  for (const el of $(scope).find('[itemprop]').toArray()) {
    if (nearestScope(el) !== scope) continue;
    for (const name of (el.attribs['itemprop'] ?? '').split(/\s+/)) {
      if (name !== '' && !props.has(name)) props.set(name, el);
    }
  }
  return props;
}

function nearestScope(el: Element): Element | null {
  for (let current = el.parent; current !== null; current = current.parent) {
    if (isElement(current) && current.attribs['itemscope'] !== undefined) return current;
  }
  return null;
}

function linkAround($: CheerioAPI, el: Element | undefined, pageUrl: string): string | null {
  if (el === undefined) return null;
  const link = $(el).closest('a[href]').attr('href') ?? $(el).find('a[href]').first().attr('href');
  return absoluteUrl(link, pageUrl);
}

/** A textual property's value: `content` (meta), a machine value (time, data), else the text. */
function textValue(el: Element | undefined): string {
  if (el === undefined) return '';
  const attr = el.name === 'time' ? 'datetime' : el.name === 'data' || el.name === 'meter' ? 'value' : 'content';
  return el.attribs[attr]?.trim() ?? visibleText(el);
}

/** A URL property's value per the microdata spec: href or src for links and media, else as text; made absolute. */
function urlValue(el: Element | undefined, pageUrl: string): string | null {
  if (el === undefined) return null;
  const attr = URL_ATTRIBUTES.get(el.name);
  return absoluteUrl(attr === undefined ? textValue(el) : el.attribs[attr], pageUrl);
}

const URL_ATTRIBUTES: ReadonlyMap<string, string> = new Map([
  ['a', 'href'], ['area', 'href'], ['link', 'href'], ['img', 'src'], ['source', 'src'], ['iframe', 'src'], ['video', 'src'], ['audio', 'src'],
]);
