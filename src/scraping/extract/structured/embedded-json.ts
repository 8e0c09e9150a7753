// JSON a page embeds for its own scripts (__NEXT_DATA__, window.__INITIAL_STATE__, dataLayer, Shopify's `var meta`), found and parsed within fixed bounds.
import type { Element } from 'domhandler';
import type { Page } from '../page.js';

export interface EmbeddedJson {
  data: unknown;
  /** Which script and which assignment, for locators ("script[12] dataLayer"). */
  locator: string;
}

/** One state blob above this is not parsed: a page's own product is never that far in. */
const MAX_JSON_CHARS = 1_000_000;
/** All blobs of a page together. */
const MAX_TOTAL_CHARS = 3_000_000;
/** Assignments looked at per script. */
const MAX_ASSIGNMENTS_PER_SCRIPT = 8;

/** `window.__INITIAL_STATE__ =`, `__NEXT_DATA__ =`, `dataLayer = [`, `dataLayer.push(`, `var meta =`. */
const ASSIGNMENT = /(?:window\.)?(__[A-Z][A-Z_]{0,40}__|dataLayer|meta)\s*(?:=|\.push\()\s*(?=[[{])/g;

/** The JSON documents the page's scripts carry, each parsed once; scripts that are not JSON are skipped. */
export function embeddedJson(page: Page): EmbeddedJson[] {
  const found: EmbeddedJson[] = [];
  let budget = MAX_TOTAL_CHARS;
  let index = -1;
  for (const el of page.elements) {
    if (el.name !== 'script') continue;
    index += 1;
    const type = (el.attribs['type'] ?? '').toLowerCase();
    if (type.includes('ld+json') || (type !== '' && !type.includes('json') && !type.includes('javascript'))) continue;
    const text = scriptText(el);
    if (text.length === 0 || text.length > MAX_JSON_CHARS * 2) continue;
    if (type.includes('json')) {
      if (text.length > MAX_JSON_CHARS || text.length > budget) continue;
      budget -= text.length;
      const data = parse(text);
      if (data !== undefined) found.push({ data, locator: `script[${index}]${el.attribs['id'] ? `#${el.attribs['id']}` : ''}` });
      continue;
    }
    const pattern = new RegExp(ASSIGNMENT.source, 'g');
    let seen = 0;
    for (let match = pattern.exec(text); match !== null && seen < MAX_ASSIGNMENTS_PER_SCRIPT; match = pattern.exec(text), seen += 1) {
      const start = match.index + match[0].length;
      const end = matchingBracket(text, start, Math.min(MAX_JSON_CHARS, budget));
      if (end === -1) continue;
      budget -= end - start;
      const data = parse(text.slice(start, end + 1));
      if (data !== undefined) found.push({ data, locator: `script[${index}] ${match[1]}` });
      pattern.lastIndex = end + 1;
    }
  }
  return found;
}

function scriptText(el: Element): string {
  let text = '';
  for (const child of el.children) if (child.type === 'text') text += child.data;
  return text.trim();
}

function parse(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

/**
 * The index of the bracket that closes the one at `start`, skipping strings; -1 when it is not
 * closed within `limit` characters. One pass, so linear in what it reads.
 */
function matchingBracket(text: string, start: number, limit: number): number {
  let depth = 0;
  let inString = false;
  const stop = Math.min(text.length, start + limit);
  for (let i = start; i < stop; i += 1) {
    const char = text.charCodeAt(i);
    if (inString) {
      if (char === 92)
        i += 1; // backslash: skip the escaped character
      else if (char === 34) inString = false;
      continue;
    }
    if (char === 34) inString = true;
    else if (char === 123 || char === 91) depth += 1;
    else if (char === 125 || char === 93) {
      depth -= 1;
      if (depth === 0) return i;
    }
  }
  return -1;
}
