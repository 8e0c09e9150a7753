// Reads RDFa (Lite: vocab/typeof/property/resource, prefixed or full IRIs) into schema.org items.
import type { Element } from 'domhandler';
import { isElement, URL_ATTRIBUTES } from '../dom-helpers.js';
import type { Page } from '../page.js';
import { markupValue, readSchemaOrg, type SdoNode, type SdoReading, type SdoValue } from './schema-org.js';
import type { Candidate } from '../types.js';
import type { Extractor } from '../extractor.js';

/** Typed resources read per page at most. */
const MAX_ITEMS = 5000;

export const rdfaExtractor: Extractor = {
  source: 'rdfa',
  extract(page: Page): Candidate[] {
    return readRdfa(page).candidates;
  },
};

export function readRdfa(page: Page): SdoReading {
  const typed = page.elements.filter((el) => el.attribs['typeof'] !== undefined).slice(0, MAX_ITEMS);
  if (typed.length === 0) return readSchemaOrg([], 'rdfa', page.url);
  const nodes = new Map<Element, SdoNode>();
  for (const el of typed) {
    nodes.set(el, { kind: 'node', types: terms(el.attribs['typeof']).map((t) => t.toLowerCase()), props: new Map(), locator: page.cssPath(el) });
  }
  const roots: SdoNode[] = [];
  // Document order: each property lands on the nearest typed ancestor (its subject), in page order.
  for (const el of page.elements) {
    const own = nodes.get(el);
    const property = el.attribs['property'];
    const subject = property === undefined && own === undefined ? undefined : subjectOf(el, nodes);
    if (own !== undefined && (property === undefined || subject === undefined)) roots.push(own);
    if (property === undefined || subject === undefined) continue;
    const value: SdoValue = own ?? textValue(el, page);
    for (const name of terms(property)) subject.props.set(name, [...(subject.props.get(name) ?? []), value]);
  }
  return readSchemaOrg(roots, 'rdfa', page.url);
}

/** The nearest ancestor that types a resource: the subject a property element speaks about. */
function subjectOf(el: Element, nodes: ReadonlyMap<Element, SdoNode>): SdoNode | undefined {
  for (let current = el.parent; current !== null; current = current.parent) {
    if (!isElement(current)) continue;
    const node = nodes.get(current);
    if (node !== undefined) return node;
  }
  return undefined;
}

/** "schema:Product https://schema.org/Offer name" -> ["Product", "Offer", "name"]. */
function terms(value: string | undefined): string[] {
  return (value ?? '')
    .split(/\s+/)
    .filter((t) => t !== '')
    .map((t) => t.replace(/^.*[/#:]/, ''));
}

/** `content` first, then `resource`/`href`/`src`, `datetime`, else the text. */
function textValue(el: Element, page: Page): SdoValue {
  const attribute =
    el.attribs['content'] !== undefined
      ? 'content'
      : el.attribs['resource'] !== undefined
        ? 'resource'
        : (URL_ATTRIBUTES.get(el.name) ?? (el.name === 'time' ? 'datetime' : undefined));
  return markupValue(el, attribute, page.cssPath(el));
}
