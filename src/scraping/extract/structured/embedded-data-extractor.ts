// What a page embeds about its own product for its scripts and forms: the cart form's product id, data attributes, analytics and app state.
import type { Element } from 'domhandler';
import { cleanText } from '../dom-helpers.js';
import { embeddedJson } from './embedded-json.js';
import { namesPage, pageNames } from '../visible/main-heading.js';
import type { Page } from '../page.js';
import { asIdentifier } from '../visible/product-codes.js';
import type { Candidate, CandidateFields, Located } from '../types.js';
import type { Extractor } from '../extractor.js';

/** Names of hidden form fields that carry the product's id ("ASIN", "product_id", "adno"). */
const ID_FIELD = /^(?:asin|sku|product[-_]?(?:id|code|sku|no|number)|products_id|productid|item[-_]?(?:id|no|number)|ad[-_]?(?:no|id)|article[-_]?(?:id|no|number))$/i;

/** Data attributes that state the product's code, anywhere on the page. */
const CODE_ATTRIBUTES = ['data-product-code', 'data-product-sku'];
/** Data attributes that carry an id, read only on the cart form and its controls (elsewhere they are variants' or other products'). */
const FORM_ID_ATTRIBUTES = ['data-sku', 'data-product-id', 'data-productid'];

/** Keys of a product object in analytics or app state that hold its code, most specific first. */
const CODE_KEYS = ['sku', 'articleNumber', 'article_number', 'productCode', 'product_code', 'item_id', 'id'];

/** JSON nodes walked per page at most. */
const MAX_NODES = 50_000;

export const embeddedDataExtractor: Extractor = {
  source: 'embedded-data',
  extract(page: Page): Candidate[] {
    const fields: CandidateFields = {};
    const sku = codeInForms(page) ?? codeInAttributes(page) ?? codeInState(page);
    if (sku !== undefined) fields.sku = sku;
    Object.assign(fields, priceInAttributes(page));
    return Object.keys(fields).length === 0 ? [] : [{ source: 'embedded-data', locator: 'data the page embeds for its scripts', scope: 'page', fields }];
  },
};

/** A hidden field of a form, or a data attribute of a cart form, that names the product's id. */
function codeInForms(page: Page): Located<string> | undefined {
  for (const el of page.elements) {
    if (el.name === 'input' && (el.attribs['type'] ?? '').toLowerCase() === 'hidden') {
      const name = el.attribs['name'] || el.attribs['id'] || '';
      const value = ID_FIELD.test(name) ? asIdentifier(el.attribs['value'] ?? '') : null;
      if (value !== null) return { value, locator: `input[name="${name}"]` };
    }
    if (el.name === 'form' && /cart|basket|bag/i.test(el.attribs['action'] ?? '')) {
      for (const attribute of FORM_ID_ATTRIBUTES) {
        const value = asIdentifier(el.attribs[attribute] ?? '');
        if (value !== null) return { value, locator: `${page.cssPath(el)}[${attribute}]` };
      }
    }
  }
  return undefined;
}

function codeInAttributes(page: Page): Located<string> | undefined {
  for (const el of page.elements) {
    for (const attribute of CODE_ATTRIBUTES) {
      const value = el.attribs[attribute] === undefined ? null : asIdentifier(el.attribs[attribute]);
      if (value !== null) return { value, locator: `${page.cssPath(el)}[${attribute}]` };
    }
  }
  return undefined;
}

/**
 * The page's product in analytics or app state: the enhanced-ecommerce detail product (or GA4's
 * only item), Shopify's product (its variants' shared sku), or an object with a sku whose name is
 * the page's.
 */
function codeInState(page: Page): Located<string> | undefined {
  const names = pageNames(page);
  let nodes = MAX_NODES;
  for (const { data, locator } of embeddedJson(page)) {
    const stack: Array<{ value: unknown; path: string }> = [{ value: data, path: '' }];
    while (stack.length > 0 && nodes-- > 0) {
      const { value, path } = stack.pop()!;
      if (value === null || typeof value !== 'object') continue;
      if (Array.isArray(value)) {
        for (let i = value.length - 1; i >= 0; i -= 1) stack.push({ value: value[i], path: `${path}[${i}]` });
        continue;
      }
      const object = value as Record<string, unknown>;
      const found = ecommerceProduct(object, path) ?? shopifyProduct(object, path) ?? namedProduct(object, path, names);
      if (found !== undefined) return { value: found.value, locator: `${locator} ${found.path}`.slice(0, 300) };
      for (const [key, child] of Object.entries(object)) if (child !== null && typeof child === 'object') stack.push({ value: child, path: `${path}.${key}` });
    }
  }
  return undefined;
}

interface Found {
  value: string;
  path: string;
}

/** `ecommerce.detail.products[0]` (Universal Analytics) or the one item of `ecommerce.items` (GA4). */
function ecommerceProduct(object: Record<string, unknown>, path: string): Found | undefined {
  const ecommerce = object['ecommerce'];
  if (ecommerce === null || typeof ecommerce !== 'object') return undefined;
  const e = ecommerce as Record<string, unknown>;
  const detail = e['detail'] as Record<string, unknown> | undefined;
  const products = Array.isArray(detail?.['products'])
    ? (detail['products'] as unknown[])
    : Array.isArray(e['items']) && (e['items'] as unknown[]).length === 1
      ? (e['items'] as unknown[])
      : [];
  const product = products[0];
  if (product === null || typeof product !== 'object') return undefined;
  const code = codeOf(product as Record<string, unknown>);
  return code === undefined ? undefined : { value: code.value, path: `${path}.ecommerce.${detail === undefined ? 'items' : 'detail.products'}[0].${code.key}` };
}

/** Shopify's product: the sku its variants share (one variant, or all alike). */
function shopifyProduct(object: Record<string, unknown>, path: string): Found | undefined {
  const product = object['product'];
  if (product === null || typeof product !== 'object') return undefined;
  const variants = (product as Record<string, unknown>)['variants'];
  if (!Array.isArray(variants) || variants.length === 0) return undefined;
  const skus = new Set(variants.map((v) => (v !== null && typeof v === 'object' ? (v as Record<string, unknown>)['sku'] : undefined)));
  const [only] = skus;
  const value = skus.size === 1 && typeof only === 'string' ? asIdentifier(only) : null;
  return value === null ? undefined : { value, path: `${path}.product.variants[0].sku` };
}

/** An object with a sku and the page's own name. */
function namedProduct(object: Record<string, unknown>, path: string, names: readonly string[]): Found | undefined {
  const sku = typeof object['sku'] === 'string' ? asIdentifier(object['sku']) : null;
  if (sku === null) return undefined;
  const name = object['name'] ?? object['title'];
  return typeof name === 'string' && namesPage(cleanText(name), names) ? { value: sku, path: `${path}.sku` } : undefined;
}

function codeOf(product: Record<string, unknown>): { key: string; value: string } | undefined {
  for (const key of CODE_KEYS) {
    const raw = product[key];
    const value = typeof raw === 'string' || typeof raw === 'number' ? asIdentifier(String(raw)) : null;
    if (value !== null) return { key, value };
  }
  return undefined;
}

/**
 * A price the page states in data attributes for its own scripts: Amazon's `data-asin-price` (with
 * its currency code), Magento's `data-price-type="finalPrice"`. Less trusted than what is shown.
 */
function priceInAttributes(page: Page): CandidateFields {
  for (const el of page.elements) {
    const located = attributePrice(page, el);
    if (located !== undefined) return located;
  }
  return {};
}

function attributePrice(page: Page, el: Element): CandidateFields | undefined {
  const [attribute, currencyAttribute] =
    el.attribs['data-asin-price'] !== undefined
      ? ['data-asin-price', 'data-asin-currency-code']
      : el.attribs['data-price-type'] === 'finalPrice'
        ? ['data-price-amount', undefined]
        : [undefined, undefined];
  const raw = attribute === undefined ? '' : (el.attribs[attribute] ?? '').trim();
  if (!/^\d{1,12}(?:\.\d{1,4})?$/.test(raw) || Number(raw) === 0) return undefined;
  const locator = `${page.cssPath(el)}[${attribute}]`;
  const fields: CandidateFields = { price: { value: Number(raw), locator }, price_text: { value: raw, locator } };
  const currency = currencyAttribute === undefined ? '' : (el.attribs[currencyAttribute] ?? '').trim().toUpperCase();
  if (/^[A-Z]{3}$/.test(currency)) fields.currency = { value: currency, locator: `${page.cssPath(el)}[${currencyAttribute}]` };
  return fields;
}
