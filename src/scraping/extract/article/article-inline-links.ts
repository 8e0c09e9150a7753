// Related links written into an article's own text ("Related: <link>", "READ MORE: <link>", "You may also like:" and a list of links): found and removed after the body is chosen.
import { isDomElement, TEXT_NODE, type DomElement, type DomNode } from './article-dom.js';

/** Blocks a related link sits in. */
const LINK_BLOCKS: ReadonlySet<string> = new Set(['p', 'h2', 'h3', 'h4', 'h5', 'h6', 'div']);
const LISTS: ReadonlySet<string> = new Set(['ul', 'ol']);

/** A related link is a headline: longer blocks are sentences that happen to be linked. */
const MAX_BLOCK_WORDS = 30;
/** The words outside the link: a label ("Related:", "READ MORE", "Leggi anche su:"). */
const MAX_LABEL_WORDS = 3;
/** A heading that may announce a list of links. */
const MAX_HEADING_WORDS = 6;
/** Share of a block's words inside links for it to be a link with a label. */
const MIN_LINKED_SHARE = 0.5;
/** A headline has a few words; a one-word link ("Ticketing: www.theatre.example") is information, not a story. */
const MIN_LINKED_WORDS = 3;

/**
 * Removes from `root` the blocks that are a short label and a link (a headline of another article),
 * and a list of links right after such a block. A list of links with no such block before it stays:
 * pages also link their own background pieces in the text, and a label alone ("Here's what to know:")
 * announces the text's own list as often as a list of links.
 * Returns how many blocks were removed.
 */
export function removeInlineRelatedLinks(root: DomElement): number {
  const blocks: DomElement[] = [];
  const stack: DomElement[] = [root];
  while (stack.length > 0) {
    const el = stack.pop()!;
    if (el !== root && (LINK_BLOCKS.has(el.localName) || LISTS.has(el.localName)) && !hasBlockChild(el)) {
      blocks.push(el);
      continue;
    }
    const children = el.children;
    for (let i = children.length - 1; i >= 0; i -= 1) stack.push(children[i]!);
  }
  let count = 0;
  let announcing = false;
  /** A short heading just before the current block, removed with the list of links it announces. */
  let heading: DomElement | null = null;
  for (const block of blocks) {
    const { words, linked, label } = linkWords(block);
    if (LISTS.has(block.localName)) {
      if (announcing && words > 0 && linked >= 0.9 * words) {
        block.remove();
        heading?.remove();
        count += heading === null ? 1 : 2;
      }
      announcing = false;
      heading = null;
      continue;
    }
    if (words <= MAX_BLOCK_WORDS && linked >= MIN_LINKED_WORDS && linked >= MIN_LINKED_SHARE * words && words - linked <= MAX_LABEL_WORDS && isLabel(label)) {
      block.remove();
      count += 1;
      announcing = true;
      heading = null;
      continue;
    }
    // A short heading with no link of its own ("More Great Stories") may announce a list of links too;
    // it goes only with the list, below.
    announcing = words > 0 && words <= MAX_HEADING_WORDS && linked === 0 && isHeading(block);
    if (announcing) heading = block;
  }
  return count;
}

/** Elements that sit inside a line of text; any other child makes its parent a container of blocks. */
const INLINE: ReadonlySet<string> = new Set([
  'a',
  'abbr',
  'b',
  'bdi',
  'bdo',
  'br',
  'cite',
  'code',
  'data',
  'del',
  'dfn',
  'em',
  'font',
  'i',
  'img',
  'ins',
  'kbd',
  'label',
  'mark',
  'q',
  's',
  'samp',
  'small',
  'span',
  'strike',
  'strong',
  'sub',
  'sup',
  'time',
  'u',
  'var',
  'wbr',
]);

/** A div (not a list) that holds other blocks is walked into, not judged whole. */
function hasBlockChild(el: DomElement): boolean {
  if (LISTS.has(el.localName)) return false;
  const children = el.children;
  for (let i = 0; i < children.length; i += 1) if (!INLINE.has(children[i]!.localName)) return true;
  return false;
}

/**
 * A label names what follows: it ends with a colon or a separator ("Related:", "Leggi anche su:",
 * "More |"), or it is written in capitals ("READ MORE"). Words before a link without either are
 * the start of a sentence ("Australian-born Assange faces <a>a charge…</a>.").
 */
function isLabel(label: string): boolean {
  const text = label.trim();
  if (text === '' || !/\p{L}/u.test(text)) return false;
  return /[:：|›»–—-]\s*$/.test(text) || (text === text.toUpperCase() && text !== text.toLowerCase());
}

/** A heading element, or a short line that does not end as a sentence does ("More Great Stories", not "He is held in London."). */
function isHeading(block: DomElement): boolean {
  return /^h[2-6]$/.test(block.localName) || !/[.!?…:;]["”’)]?$/.test((block.textContent ?? '').trim());
}

/** Words in `el`, how many of them sit inside links, and the text before its first link. */
function linkWords(el: DomElement): { words: number; linked: number; label: string } {
  let words = 0;
  let linked = 0;
  let label = '';
  let seenLink = false;
  const stack: Array<{ node: DomNode; inLink: boolean }> = [{ node: el, inLink: false }];
  while (stack.length > 0) {
    const { node, inLink } = stack.pop()!;
    if (node.nodeType === TEXT_NODE) {
      const n = (node.textContent ?? '').split(/\s+/).filter((w) => /[\p{L}\p{N}]/u.test(w)).length;
      words += n;
      if (inLink) linked += n;
      if (inLink) seenLink = true;
      else if (!seenLink) label += node.textContent ?? '';
      continue;
    }
    if (!isDomElement(node)) continue;
    const link = inLink || (node.localName === 'a' && node.hasAttribute('href'));
    const children = node.childNodes;
    // Pushed last child first, so nodes come off the stack in document order.
    for (let i = children.length - 1; i >= 0; i -= 1) stack.push({ node: children[i]!, inLink: link });
  }
  return { words, linked, label };
}
