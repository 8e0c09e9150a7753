// Reads <script type="application/ld+json"> blocks into schema.org items (with @id references resolved).
import type { Element } from 'domhandler';
import { decodeEntities } from '../dom-helpers.js';
import type { Page } from '../page.js';
import { readSchemaOrg, type SdoNode, type SdoReading, type SdoValue } from './schema-org.js';
import type { Candidate } from '../types.js';
import type { Extractor } from '../extractor.js';

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type JsonObject = { [key: string]: Json };

/** Bounds the walk: real pages nest a few levels; hostile ones could nest thousands. */
const MAX_DEPTH = 16;
/** Objects converted per page at most; a hostile block could hold millions. */
const MAX_NODES = 20_000;

export const jsonLdExtractor: Extractor = {
  source: 'json-ld',
  extract(page: Page): Candidate[] {
    return readJsonLd(page).candidates;
  },
};

/** The page's JSON-LD as the classifier and the merge step see it. */
export function readJsonLd(page: Page): SdoReading {
  const roots: SdoNode[] = [];
  const budget = { nodes: MAX_NODES };
  scriptBlocks(page).forEach((raw, block) => {
    const data = parseBlock(raw);
    if (data === undefined) return;
    const converter = createConverter(data, `ld+json[${block}] $`, budget);
    for (const node of converter.roots()) roots.push(node);
  });
  return readSchemaOrg(roots, 'json-ld', page.url);
}

function scriptBlocks(page: Page): string[] {
  return page.elements
    .filter((el) => el.name === 'script' && /ld\+json/i.test(el.attribs['type'] ?? ''))
    .map((el: Element) => el.children.map((child) => ('data' in child ? child.data : '')).join(''));
}

/**
 * JSON.parse with the wrappers CMSs add (HTML comments, CDATA) stripped and one retry without
 * trailing commas; undefined when the block is still not JSON, so one broken block skips alone.
 */
export function parseBlock(raw: string): Json | undefined {
  const unwrapped = stripClosingWrapper(raw.trim().replace(OPENING_WRAPPER, ''));
  for (const candidate of [unwrapped, unwrapped.replace(/,(\s*[}\]])/g, '$1')]) {
    try {
      return JSON.parse(candidate) as Json;
    } catch {
      // try the next repair, then give up on this block
    }
  }
  return undefined;
}

/** "<!--", "<![CDATA[", "//<![CDATA[", "/* <![CDATA[ *\/" before the JSON. */
const OPENING_WRAPPER = /^(?:\/\/|\/\*)?\s*(?:<!--|<!\[CDATA\[)\s*(?:\*\/)?/;

/** The closers ("-->", "//]]>", "/* ]]> *\/"), peeled by hand: an end-anchored regex rescans long whitespace quadratically. */
function stripClosingWrapper(text: string): string {
  let rest = text.trimEnd();
  if (rest.endsWith('*/')) rest = rest.slice(0, -2).trimEnd();
  const closer = ['-->', ']]>'].find((c) => rest.endsWith(c));
  if (closer === undefined) return text.trim();
  rest = rest.slice(0, -closer.length).trimEnd();
  if (rest.endsWith('//') || rest.endsWith('/*')) rest = rest.slice(0, -2);
  return rest.trim();
}

/**
 * Converts one block to schema.org nodes. Objects that carry an @id are indexed first, so a
 * reference (`"mainEntity": {"@id": "#product"}`) becomes the node defined elsewhere in the block,
 * keeping that node's own path as its locator.
 */
function createConverter(data: Json, base: string, budget: { nodes: number }) {
  const defined = new Map<string, { object: JsonObject; path: string }>();
  const index = (value: Json, path: string, depth: number): void => {
    if (depth > MAX_DEPTH || value === null || typeof value !== 'object') return;
    if (Array.isArray(value)) {
      for (const [i, item] of value.entries()) index(item, `${path}[${i}]`, depth + 1);
      return;
    }
    const id = value['@id'];
    if (typeof id === 'string' && value['@type'] !== undefined && !defined.has(id)) defined.set(id, { object: value, path });
    for (const [key, child] of Object.entries(value)) index(child, `${path}.${key}`, depth + 1);
  };
  index(data, base, 0);

  const built = new Map<JsonObject, SdoNode>();
  const toNode = (object: JsonObject, path: string, depth: number): SdoNode => {
    const known = built.get(object);
    if (known !== undefined) return known;
    const node: SdoNode = { kind: 'node', types: typesOf(object), props: new Map(), locator: path };
    built.set(object, node); // before the properties: a reference cycle finds the node, not a loop
    if (depth > MAX_DEPTH || --budget.nodes < 0) return node;
    for (const [key, value] of Object.entries(object)) {
      if (key === '@type' || key === '@context') continue;
      const name = key.startsWith('@') ? key : localName(key);
      const values = Array.isArray(value) ? value.flatMap((item, i) => toValues(item, `${path}.${key}[${i}]`, depth + 1)) : toValues(value, `${path}.${key}`, depth + 1);
      if (values.length > 0) node.props.set(name, [...(node.props.get(name) ?? []), ...values]);
    }
    return node;
  };
  const toValues = (value: Json, path: string, depth: number): SdoValue[] => {
    if (value === null) return [];
    if (typeof value === 'string') return [{ kind: 'text', value: decodeEntities(value), locator: path }];
    if (typeof value === 'number') return Number.isFinite(value) ? [{ kind: 'text', value: String(value), locator: path }] : [];
    if (typeof value === 'boolean') return [{ kind: 'text', value: String(value), locator: path }];
    if (Array.isArray(value)) return value.flatMap((item, i) => toValues(item, `${path}[${i}]`, depth + 1));
    if ('@value' in value) return toValues(value['@value'] ?? null, `${path}.@value`, depth + 1);
    const id = value['@id'];
    if (typeof id === 'string' && value['@type'] === undefined && Object.keys(value).length <= 2) {
      const target = defined.get(id);
      if (target !== undefined) return [toNode(target.object, target.path, depth)];
      return [{ kind: 'text', value: id, locator: `${path}.@id` }];
    }
    return [toNode(value, path, depth)];
  };
  return {
    roots(): SdoNode[] {
      const values = toValues(data, base, 0);
      return values.filter((v): v is SdoNode => v.kind === 'node');
    },
  };
}

/** "@type" may be a string, an array, or a full IRI like "http://schema.org/Product". */
function typesOf(object: JsonObject): string[] {
  const raw = object['@type'];
  const list = Array.isArray(raw) ? raw : raw === undefined ? [] : [raw];
  return list.filter((t): t is string => typeof t === 'string').map((t) => localName(t).toLowerCase());
}

function localName(iri: string): string {
  return iri.replace(/^.*[/#:]/, '');
}
