// What the visible page says about being an article: how much prose it holds and where, for the page classifier. One walk, no DOM beyond the parsed page.
import type { AnyNode, Element } from 'domhandler';
import { isElement, outermostArticles, visibleText } from '../dom-helpers.js';
import type { Page } from '../page.js';

export interface ProseEvidence {
  /** A long article body: an <article> with 150+ words of paragraphs, or 250+ words of paragraphs with a byline or date outside comments. */
  articleBody: boolean;
  /** Words in the largest block of prose: the paragraphs (and text between <br>s) that share one parent, outside page furniture. */
  longestBlock: number;
  /** Outermost <article> elements that each hold 150+ words of paragraphs: several are a listing of whole posts. */
  longArticles: number;
  /** Paragraph words of the page's <article> when it has exactly one (outside furniture), else 0. */
  soleArticleWords: number;
}

/** Paragraph words that make an <article> element (or a page, with a byline) a long body. */
const ARTICLE_WORDS = 150;
const PAGE_WORDS = 250;

/** Elements whose own text is laid out as prose (paragraphs, or lines between <br>s). */
const TEXT_BLOCKS: ReadonlySet<string> = new Set(['div', 'td', 'section', 'article', 'main', 'blockquote', 'center']);

export function proseEvidence(page: Page): ProseEvidence {
  let pageWords = 0;
  let dated = false;
  const blocks = new Map<Element, number>();
  const add = (el: Element, n: number) => blocks.set(el, (blocks.get(el) ?? 0) + n);
  // The outermost only: an article's nested articles (comments, quoted posts) are part of it.
  const outermost = outermostArticles(page.root, page.chrome).filter((el) => !/product/i.test(el.attribs['class'] ?? ''));
  const articleWords = outermost.map(paragraphWords);
  const articles = outermost.filter((_, i) => articleWords[i]! >= ARTICLE_WORDS);
  for (const el of page.elements) {
    if (page.chrome.has(el)) continue;
    if (el.name === 'p') {
      const n = words(visibleText(el));
      pageWords += n;
      if (el.parent !== null && isElement(el.parent)) add(el.parent, n);
    } else if (TEXT_BLOCKS.has(el.name) && hasBreaks(el)) {
      add(el, ownTextWords(el));
    }
    const byline = el.attribs['rel'] === 'author' || el.attribs['itemprop'] === 'author' || /(?:^|[\s_-])(?:byline|author)(?:$|[\s_-])/i.test(el.attribs['class'] ?? '');
    if (!dated && (byline || (el.name === 'time' && el.attribs['datetime'] !== undefined)) && !inReviews(el)) dated = true;
  }
  let longestBlock = 0;
  for (const n of blocks.values()) longestBlock = Math.max(longestBlock, n);
  return {
    articleBody: articles.length > 0 || (dated && pageWords >= PAGE_WORDS),
    longestBlock,
    longArticles: articles.length,
    soleArticleWords: outermost.length === 1 ? articleWords[0]! : 0,
  };
}

/** Text written straight into a block, lines split by <br> (older news CMSs write no <p>). */
function hasBreaks(el: Element): boolean {
  return el.children.some((c) => isElement(c) && c.name === 'br');
}

/** Words of the text nodes directly in `el` and in its inline children (links, emphasis), not in nested blocks. */
function ownTextWords(el: Element): number {
  let count = 0;
  const stack: AnyNode[] = [...el.children];
  while (stack.length > 0) {
    const node = stack.pop()!;
    if (node.type === 'text') count += words(node.data.replace(/\s+/g, ' ').trim());
    else if (isElement(node) && INLINE.has(node.name)) for (const child of node.children) stack.push(child);
  }
  return count;
}

const INLINE: ReadonlySet<string> = new Set(['a', 'b', 'strong', 'i', 'em', 'u', 'span', 'font', 'small', 'sup', 'sub', 'mark']);

function paragraphWords(article: Element): number {
  let count = 0;
  const stack: Element[] = [article];
  while (stack.length > 0) {
    const el = stack.pop()!;
    if (el.name === 'p') {
      count += words(visibleText(el));
      continue;
    }
    for (const child of el.children) if (isElement(child)) stack.push(child);
  }
  return count;
}

function inReviews(el: Element): boolean {
  for (let current = el.parent; current !== null; current = current.parent) {
    if (isElement(current) && /review|comment|rating|testimonial/i.test(`${current.attribs['class'] ?? ''} ${current.attribs['id'] ?? ''}`)) return true;
  }
  return false;
}

function words(text: string): number {
  return text === '' ? 0 : text.split(' ').length;
}
