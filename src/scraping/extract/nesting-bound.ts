// HTML nested deeper than a browser would build it, flattened before parsing: 300,000 nested <div>s
// cost htmlparser2 time quadratic in the depth (its open-element stack grows at the front).

/**
 * Past this depth (Chromium's parser limit, kMaximumHTMLParserDOMTreeDepth) bare wrappers (`<div>`,
 * `<span>`… without attributes: nothing extraction reads but their nesting) are dropped with their end
 * tags, their content kept; past MAX_NESTING_DEPTH every tag is. The cost of parsing is then bounded,
 * and a product marked up at the bottom of thousands of bare `<div>`s is still found.
 */
export const WRAPPER_DEPTH = 512;
export const MAX_NESTING_DEPTH = 1024;
const WRAPPERS = new Set([
  'div',
  'span',
  'section',
  'article',
  'main',
  'aside',
  'header',
  'footer',
  'nav',
  'font',
  'center',
  'b',
  'i',
  'u',
  'em',
  'strong',
  'small',
  'big',
  'blockquote',
  'ul',
  'ol',
  'table',
  'tbody',
  'tr',
  'td',
  'form',
  'fieldset',
  'a',
]);

/** Elements that never take an end tag: they do not nest. */
const VOID = new Set(['area', 'base', 'br', 'col', 'embed', 'hr', 'img', 'input', 'link', 'meta', 'param', 'source', 'track', 'wbr', 'keygen', 'command', 'basefont', 'frame']);
/** Elements whose end tag is optional (a sibling closes them): counting them would count siblings as depth. */
const OPTIONAL_END = new Set(['li', 'p', 'dt', 'dd', 'option', 'optgroup', 'tr', 'td', 'th', 'tbody', 'thead', 'tfoot', 'colgroup', 'caption', 'rb', 'rt', 'rtc', 'rp']);
/** Elements whose content is text up to their own end tag. */
const RAW_TEXT = new Set(['script', 'style', 'textarea', 'title', 'xmp', 'iframe', 'noembed', 'noframes', 'plaintext']);

const NAME = /[A-Za-z][^\s/>]*/y;
/** The end tag of each raw-text element, found from a position without lower-casing the page. */
const RAW_END = new Map([...RAW_TEXT].map((name) => [name, new RegExp(`</${name}`, 'gi')]));

/** Where the tag that starts at `from` (just after its name) ends: after its `>`, quotes respected. */
function tagEnd(html: string, from: number): number {
  let quote = '';
  for (let i = from; i < html.length; i++) {
    const c = html[i]!;
    if (quote !== '') {
      if (c === quote) quote = '';
    } else if (c === '"' || c === "'") quote = c;
    else if (c === '>') return i + 1;
  }
  return html.length;
}

/**
 * `html` with the tags that nest deeper than `maxDepth` removed (the same string when none does).
 * One pass, linear in the length: comments, doctype and raw text (scripts, styles) are skipped whole.
 */
export function boundNesting(html: string, maxDepth = MAX_NESTING_DEPTH, wrapperDepth = Math.min(WRAPPER_DEPTH, maxDepth)): { html: string; dropped: number } {
  const cut: Array<[number, number]> = [];
  // Each open counted tag, innermost last: true where it was dropped (so is its end tag).
  const open: boolean[] = [];
  let depth = 0;
  let i = html.indexOf('<');
  while (i !== -1 && i < html.length - 1) {
    const next = html[i + 1]!;
    let end: number;
    if (html.startsWith('<!--', i)) {
      const close = html.indexOf('-->', i + 4);
      end = close === -1 ? html.length : close + 3;
    } else if (next === '!' || next === '?') {
      end = tagEnd(html, i + 2);
    } else if (next === '/') {
      NAME.lastIndex = i + 2;
      const name = NAME.exec(html)?.[0].toLowerCase();
      end = tagEnd(html, i + 2);
      if (name !== undefined && !OPTIONAL_END.has(name) && !VOID.has(name) && open.length > 0) {
        if (open.pop()) cut.push([i, end]);
        else depth--;
      }
    } else {
      NAME.lastIndex = i + 1;
      const match = NAME.exec(html);
      if (match === null) {
        end = i + 1; // a "<" in text
      } else {
        const name = match[0].toLowerCase();
        end = tagEnd(html, NAME.lastIndex);
        const selfClosing = html[end - 2] === '/';
        if (RAW_TEXT.has(name)) {
          // Its text is no markup; its end tag is passed over with it.
          const closing = RAW_END.get(name)!;
          closing.lastIndex = end;
          const close = closing.exec(html)?.index;
          end = close === undefined ? html.length : tagEnd(html, close + 2);
        } else if (!VOID.has(name) && !OPTIONAL_END.has(name) && !selfClosing) {
          const bare = end === NAME.lastIndex + 1 && WRAPPERS.has(name);
          const drop = depth >= maxDepth || (depth >= wrapperDepth && bare);
          open.push(drop);
          if (drop) cut.push([i, end]);
          else depth++;
        }
      }
    }
    i = html.indexOf('<', end);
  }
  if (cut.length === 0) return { html, dropped: 0 };
  const parts: string[] = [];
  let from = 0;
  for (const [start, stop] of cut) {
    parts.push(html.slice(from, start));
    from = stop;
  }
  parts.push(html.slice(from));
  return { html: parts.join(''), dropped: cut.length };
}
