// A page parsed once, with the lookups every source of evidence shares computed on first use.
import { load, type CheerioAPI } from 'cheerio';
import type { AnyNode, Element } from 'domhandler';
import { absoluteUrl, cleanText, descendants, isElement, pageChrome, subtreeSizes } from './dom-helpers.js';
import { boundNesting } from './nesting-bound.js';

export interface MetaTag {
  /** `property`, else `name`, lower-cased ("og:title", "product:price:amount"). */
  key: string;
  content: string;
  el: Element;
}

export interface Page {
  $: CheerioAPI;
  root: AnyNode;
  /** Absolute URL the HTML came from (after redirects); base for relative links. */
  url: string;
  /** Every element in document order. */
  readonly elements: readonly Element[];
  /** Navigation, sidebars, the site's header and footer. */
  readonly chrome: ReadonlySet<Element>;
  readonly meta: readonly MetaTag[];
  /** `<link rel=canonical>`, absolute. */
  readonly canonical: string | null;
  /** Number of elements in each element's subtree, for the heuristics' work budgets. */
  readonly subtreeSizes: ReadonlyMap<Element, number>;
  /** The first meta tag with this key, its content. */
  metaContent(key: string): string | undefined;
  /** A CSS path that selects `el` in this document (ids where they help, else :nth-of-type). */
  cssPath(el: Element): string;
}

/** Parses `html` once; null only when the parser itself fails (it tolerates any markup). */
export function parsePage(html: string, url: string): Page | null {
  let $: CheerioAPI;
  try {
    // htmlparser2 (cheerio's `xml` option with HTML rules) parses about 2.5x faster than parse5, the
    // parse being most of a crawl's CPU; the extractors need the element tree, not HTML5's repairs.
    // Nesting deeper than a browser keeps is flattened first: its parse would cost the square of its depth.
    $ = load(boundNesting(typeof html === 'string' ? html : '').html, { xml: { xmlMode: false, decodeEntities: true } });
  } catch {
    return null;
  }
  const root = $.root().get(0);
  if (root === undefined) return null;
  return createPage($, root, url);
}

function createPage($: CheerioAPI, root: AnyNode, url: string): Page {
  let elements: Element[] | undefined;
  let chrome: ReadonlySet<Element> | undefined;
  let meta: MetaTag[] | undefined;
  let canonical: string | null | undefined;
  let sizes: ReadonlyMap<Element, number> | undefined;
  const paths = new Map<Element, string>();

  const page: Page = {
    $,
    root,
    url,
    get elements() {
      return (elements ??= descendants(root));
    },
    get chrome() {
      return (chrome ??= pageChrome(root));
    },
    get subtreeSizes() {
      return (sizes ??= subtreeSizes(root));
    },
    get meta() {
      return (meta ??= readMeta(page.elements));
    },
    get canonical() {
      if (canonical === undefined) {
        const link = page.elements.find((el) => el.name === 'link' && /(?:^|\s)canonical(?:\s|$)/i.test(el.attribs['rel'] ?? ''));
        canonical = absoluteUrl(link?.attribs['href'], url);
      }
      return canonical;
    },
    metaContent(key) {
      return page.meta.find((m) => m.key === key)?.content;
    },
    cssPath(el) {
      return cssPathOf(el, paths);
    },
  };
  return page;
}

function readMeta(elements: readonly Element[]): MetaTag[] {
  const tags: MetaTag[] = [];
  for (const el of elements) {
    if (el.name !== 'meta') continue;
    // itemprop metas belong to microdata items, which their own extractor reads in context.
    const key = (el.attribs['property'] ?? el.attribs['name'] ?? '').trim().toLowerCase();
    const content = cleanText(el.attribs['content']);
    if (key !== '' && content !== '') tags.push({ key, content, el });
  }
  return tags;
}

const SIMPLE_ID = /^[A-Za-z][\w-]{0,80}$/;

/**
 * Memoised per element, so the paths of a listing's cards share their common prefix's work.
 * Iterative: hostile pages nest deeper than the call stack allows.
 */
function cssPathOf(el: Element, memo: Map<Element, string>): string {
  const pending: Element[] = [];
  let prefix = '';
  for (let current: Element | null = el; current !== null; ) {
    const known = memo.get(current);
    if (known !== undefined) {
      prefix = known;
      break;
    }
    pending.push(current);
    const id = current.attribs['id'];
    if (id !== undefined && SIMPLE_ID.test(id)) break; // an id anchors the path
    current = current.parent !== null && isElement(current.parent) ? current.parent : null;
  }
  for (let i = pending.length - 1; i >= 0; i -= 1) {
    const node = pending[i]!;
    const id = node.attribs['id'];
    const step = id !== undefined && SIMPLE_ID.test(id) ? `${node.name}#${id}` : `${node.name}${nthOfType(node)}`;
    prefix = step.includes('#') || prefix === '' ? step : `${prefix} > ${step}`;
    memo.set(node, prefix);
  }
  return prefix;
}

function nthOfType(el: Element): string {
  const parent = el.parent;
  if (parent === null || !('children' in parent)) return '';
  let index = 0;
  let count = 0;
  for (const sibling of parent.children) {
    if (!isElement(sibling) || sibling.name !== el.name) continue;
    count += 1;
    if (sibling === el) index = count;
  }
  return count > 1 ? `:nth-of-type(${index})` : '';
}
