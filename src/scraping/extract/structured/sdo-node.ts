// schema.org items as the three readers (JSON-LD, microdata, RDFa) build them, and the accessors every reading of them shares.
import type { Element } from 'domhandler';
import { absoluteUrl, cleanText, visibleText } from '../dom-helpers.js';
import type { Located } from '../types.js';

/** A property value: text (with what the page showed, for microdata and RDFa) or a nested item. */
export interface SdoText {
  kind: 'text';
  /** The machine value: a JSON string or number, a `content`/`href` attribute, else the text. */
  value: string;
  /** The text a reader sees, when it differs from the machine value ("$1,000.00" for content "1000.00"). */
  shown?: string;
  locator: string;
}

export interface SdoNode {
  kind: 'node';
  /** Local type names, lower-cased: "product", "offer", "aggregateoffer". */
  types: string[];
  /** Properties by local name as schema.org spells them ("priceCurrency"). */
  props: Map<string, SdoValue[]>;
  locator: string;
}

export type SdoValue = SdoText | SdoNode;

/**
 * A property written in markup (microdata, RDFa): the machine value from `attribute` (content, href,
 * datetime...) when the element has it, else its text; `shown` keeps the text a reader sees.
 */
export function markupValue(el: Element, attribute: string | undefined, locator: string): SdoText {
  const shown = el.name === 'meta' || el.name === 'link' ? undefined : visibleText(el);
  const value = (attribute === undefined ? undefined : el.attribs[attribute]?.trim()) ?? shown ?? '';
  return { kind: 'text', value, ...(shown !== undefined && shown !== value ? { shown } : {}), locator };
}

export function first(node: SdoNode, prop: string): SdoValue | undefined {
  return node.props.get(prop)?.[0];
}

export function has(node: SdoNode, prop: string): boolean {
  return (node.props.get(prop)?.length ?? 0) > 0;
}

export function text(value: SdoValue | undefined): Located<string> | null {
  if (value?.kind !== 'text') return null;
  const cleaned = cleanText(value.value);
  return cleaned === '' ? null : { value: cleaned, locator: value.locator };
}

export function nameOf(value: SdoValue | undefined): Located<string> | null {
  if (value === undefined) return null;
  return value.kind === 'node' ? text(first(value, 'name')) : text(value);
}

export function imageOf(value: SdoValue | undefined, pageUrl: string): Located<string> | null {
  if (value === undefined) return null;
  if (value.kind === 'node') return urlValue(first(value, 'url') ?? first(value, 'contentUrl'), pageUrl);
  return urlValue(value, pageUrl);
}

/**
 * `url`, else an `@id` that is a real address, made absolute. An @id's fragment only names the
 * node ("…/mug/#product"); the page is the part before it.
 */
export function urlOf(node: SdoNode, pageUrl: string): Located<string> | null {
  const url = urlValue(first(node, 'url'), pageUrl);
  if (url !== null) return url;
  const id = urlValue(first(node, '@id'), pageUrl);
  return id === null ? null : { value: id.value.replace(/#.*$/, ''), locator: id.locator };
}

export function urlValue(value: SdoValue | undefined, pageUrl: string): Located<string> | null {
  if (value?.kind !== 'text') return null;
  const url = absoluteUrl(value.value, pageUrl);
  return url === null ? null : { value: url, locator: value.locator };
}
