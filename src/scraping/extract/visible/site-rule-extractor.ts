// Reads the fields a user pinned for this site (site rules: a CSS selector or a JSON path per field), and which of them found nothing.
import type { Element } from 'domhandler';
import { absoluteUrl, cleanText, isElement, priceFromText, visibleText } from '../dom-helpers.js';
import { embeddedJson } from '../structured/embedded-json.js';
import type { Page } from '../page.js';
import { availabilityFromText } from '../structured/schema-org.js';
import { stockFromText } from './stock-text.js';
import { SITE_RULE_FIELDS, type Candidate, type CandidateFields, type SiteRuleField, type SiteRuleSpec } from '../types.js';

export interface SiteRuleReading {
  /** The fields the rule found, as one candidate of the page's product; null when none was found. */
  candidate: Candidate | null;
  /** Pinned fields that found nothing usable on this page: the site changed, or the rule is wrong. */
  missed: SiteRuleField[];
}

/** Longest text a pinned value may have: a selector on a whole section is not a value. */
const MAX_VALUE_CHARS = 2000;

export function readSiteRule(page: Page, rule: SiteRuleSpec): SiteRuleReading {
  const fields: CandidateFields = {};
  const missed: SiteRuleField[] = [];
  let documents: Array<{ data: unknown; locator: string }> | undefined;
  for (const name of SITE_RULE_FIELDS) {
    const where = rule.fields[name];
    if (where === undefined) continue;
    let found: { text: string; locator: string; el?: Element } | null = null;
    if (where.selector !== undefined) found = bySelector(page, where.selector);
    else if (where.json_path !== undefined) {
      documents ??= jsonDocuments(page);
      found = byJsonPath(documents, where.json_path);
    }
    if (found === null || !setField(fields, name, found, page)) missed.push(name);
  }
  const candidate: Candidate | null = Object.keys(fields).length === 0 ? null : { source: 'site-rule', locator: `site rule for ${rule.host_pattern}`, scope: 'page', fields };
  return { candidate, missed };
}

/** Puts one pinned value into its field; false when the value does not read as one (a price without a number). */
function setField(fields: CandidateFields, name: SiteRuleField, found: { text: string; locator: string; el?: Element }, page: Page): boolean {
  const { text, locator } = found;
  switch (name) {
    case 'title':
    case 'sku':
      if (text === '') return false;
      fields[name] = { value: text, locator };
      return true;
    case 'price': {
      const price = priceFromText(text, locator);
      if (price.price === undefined) return false;
      Object.assign(fields, price);
      return true;
    }
    case 'list_price': {
      const price = priceFromText(text, locator).price;
      if (price === undefined) return false;
      fields.list_price = price;
      return true;
    }
    case 'availability': {
      const value = availabilityFromText(text) ?? stockFromText(text)?.value ?? null;
      if (value === null) return false;
      fields.availability = { value, locator };
      return true;
    }
    case 'image': {
      const el = found.el;
      const raw = el === undefined ? text : (el.attribs['src'] ?? el.attribs['content'] ?? el.attribs['href'] ?? el.attribs['data-src'] ?? text);
      const url = absoluteUrl(raw, page.url);
      if (url === null) return false;
      fields.image_url = { value: url, locator };
      return true;
    }
  }
}

/** The first element the selector matches: its `content` (meta), else its visible text. */
function bySelector(page: Page, selector: string): { text: string; locator: string; el: Element } | null {
  let el: Element | undefined;
  try {
    el = page.$(selector).toArray().find(isElement);
  } catch {
    return null; // checked when the rule was saved; a css-select upgrade must not cost the page
  }
  if (el === undefined) return null;
  const text = cleanText(el.attribs['content'] ?? visibleText(el)) || cleanText(el.attribs['value']);
  return { text: text.slice(0, MAX_VALUE_CHARS), locator: page.cssPath(el), el };
}

/** The page's JSON: its JSON-LD blocks, then what it embeds for its scripts (__NEXT_DATA__, dataLayer …). */
function jsonDocuments(page: Page): Array<{ data: unknown; locator: string }> {
  const out: Array<{ data: unknown; locator: string }> = [];
  let index = -1;
  for (const el of page.elements) {
    if (el.name !== 'script' || !(el.attribs['type'] ?? '').toLowerCase().includes('ld+json')) continue;
    index += 1;
    let text = '';
    for (const child of el.children) if (child.type === 'text') text += child.data;
    try {
      out.push({ data: JSON.parse(text) as unknown, locator: `ld+json[${index}]` });
    } catch {
      // a broken block is skipped, as the JSON-LD reader skips it
    }
  }
  return [...out, ...embeddedJson(page)];
}

const STEP = /\.([A-Za-z_$@][\w$@-]*)|\['((?:[^'\\]|\\.)*)'\]|\[(\d{1,6})\]/y;

/** The first document where the path names a scalar (or an array whose first item is one). */
function byJsonPath(documents: ReadonlyArray<{ data: unknown; locator: string }>, path: string): { text: string; locator: string } | null {
  const steps: Array<string | number> = [];
  STEP.lastIndex = 1;
  for (let m = STEP.exec(path); m !== null; m = STEP.exec(path)) steps.push(m[3] !== undefined ? Number(m[3]) : (m[1] ?? m[2]!.replace(/\\(.)/g, '$1')));
  for (const { data, locator } of documents) {
    let current: unknown = data;
    for (const step of steps) {
      if (current === null || typeof current !== 'object') {
        current = undefined;
        break;
      }
      current = (current as Record<string | number, unknown>)[step];
    }
    if (Array.isArray(current)) current = current[0];
    if (typeof current === 'string' || typeof current === 'number' || typeof current === 'boolean') {
      const text = cleanText(String(current));
      if (text !== '') return { text: text.slice(0, MAX_VALUE_CHARS), locator: `${locator} ${path}` };
    }
  }
  return null;
}
