// Reads HTML microdata (itemscope/itemtype/itemprop, itemref) into schema.org items.
import type { AnyNode, Element } from 'domhandler';
import { isElement, URL_ATTRIBUTES } from '../dom-helpers.js';
import type { Page } from '../page.js';
import { markupValue, readSchemaOrg, type SdoNode, type SdoReading, type SdoValue } from './schema-org.js';
import type { Candidate } from '../types.js';
import type { Extractor } from '../extractor.js';

/** Item scopes read per page at most; each costs a walk of its subtree. */
const MAX_ITEMS = 5000;

export const microdataExtractor: Extractor = {
  source: 'microdata',
  extract(page: Page): Candidate[] {
    return readMicrodata(page).candidates;
  },
};

export function readMicrodata(page: Page): SdoReading {
  const scopes = page.elements.filter((el) => el.attribs['itemscope'] !== undefined).slice(0, MAX_ITEMS);
  if (scopes.length === 0) return readSchemaOrg([], 'microdata', page.url);
  const byId = new Map<string, Element>();
  for (const el of page.elements) {
    const id = el.attribs['id'];
    if (id !== undefined && !byId.has(id)) byId.set(id, el);
  }
  const built = new Map<Element, SdoNode>();
  const toNode = (scope: Element): SdoNode => {
    const known = built.get(scope);
    if (known !== undefined) return known;
    const node: SdoNode = { kind: 'node', types: typesOf(scope), props: new Map(), locator: page.cssPath(scope) };
    built.set(scope, node); // before the properties: an itemref cycle finds the node, not a loop
    let nameEl: Element | undefined;
    for (const el of propertyElements(scope, byId)) {
      const value: SdoValue = el.attribs['itemscope'] !== undefined ? toNode(el) : textValue(el, page);
      for (const name of (el.attribs['itemprop'] ?? '').split(/\s+/)) {
        if (name === '') continue;
        const key = name.replace(/^.*[/#]/, '');
        if (key === 'name') nameEl ??= el;
        node.props.set(key, [...(node.props.get(key) ?? []), value]);
      }
    }
    // Shops often link the name instead of marking a url property.
    const link = node.props.has('url') || nameEl === undefined ? undefined : linkAround(nameEl, scope);
    if (link !== undefined) node.props.set('url', [{ kind: 'text', value: link.attribs['href']!, locator: page.cssPath(link) }]);
    return node;
  };
  // Top-level items are the scopes that are not some other item's property.
  const roots = scopes.filter((el) => el.attribs['itemprop'] === undefined || nearestScope(el) === null).map(toNode);
  return readSchemaOrg(roots, 'microdata', page.url);
}

function typesOf(scope: Element): string[] {
  return (scope.attribs['itemtype'] ?? '')
    .split(/\s+/)
    .filter((t) => t !== '')
    .map((t) => t.replace(/^.*[/#]/, '').toLowerCase());
}

/**
 * The elements carrying this item's properties, in document order: its subtree and the subtrees of
 * its itemref ids, not descending into nested items (a nested item is itself one property).
 */
function propertyElements(scope: Element, byId: ReadonlyMap<string, Element>): Element[] {
  const found: Element[] = [];
  const starts: AnyNode[] = [...scope.children];
  for (const id of (scope.attribs['itemref'] ?? '').split(/\s+/)) {
    const referenced = id === '' ? undefined : byId.get(id);
    if (referenced !== undefined && referenced !== scope) starts.push(referenced);
  }
  const stack = starts.reverse();
  const seen = new Set<AnyNode>();
  while (stack.length > 0) {
    const node = stack.pop()!;
    if (seen.has(node)) continue;
    seen.add(node);
    if (!isElement(node)) continue;
    if (node.attribs['itemprop'] !== undefined) found.push(node);
    if (node.attribs['itemscope'] !== undefined) continue;
    for (let i = node.children.length - 1; i >= 0; i -= 1) stack.push(node.children[i]!);
  }
  return found;
}

/** The link around the name (up to the item's own element), or the first link inside it. */
function linkAround(nameEl: Element, scope: Element): Element | undefined {
  for (let current: AnyNode | null = nameEl; current !== null && current !== scope.parent; current = current.parent) {
    if (isElement(current) && current.name === 'a' && current.attribs['href'] !== undefined) return current;
  }
  const stack: AnyNode[] = [...nameEl.children];
  while (stack.length > 0) {
    const node = stack.shift()!;
    if (!isElement(node)) continue;
    if (node.name === 'a' && node.attribs['href'] !== undefined) return node;
    for (const child of node.children) stack.push(child);
  }
  return undefined;
}

function nearestScope(el: Element): Element | null {
  for (let current = el.parent; current !== null; current = current.parent) {
    if (isElement(current) && current.attribs['itemscope'] !== undefined) return current;
  }
  return null;
}

/**
 * A property's value per the microdata spec (href/src for links and media, datetime, value), with
 * a `content` attribute winning on any element, as shops put it on spans.
 */
function textValue(el: Element, page: Page): SdoValue {
  const attribute =
    el.attribs['content'] !== undefined
      ? 'content'
      : (URL_ATTRIBUTES.get(el.name) ?? (el.name === 'time' ? 'datetime' : el.name === 'data' || el.name === 'meter' ? 'value' : undefined));
  return markupValue(el, attribute, page.cssPath(el));
}
