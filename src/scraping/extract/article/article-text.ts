// The plain text of an article's content: one paragraph per block, paragraphs separated by a blank line.
import { isDomElement, TEXT_NODE, type DomElement, type DomNode } from './article-dom.js';
import { BLOCKS } from './html-blocks.js';

/** Elements whose text no reader sees. */
export const SILENT: ReadonlySet<string> = new Set(['script', 'style', 'noscript', 'template', 'head', 'svg', 'math', 'button', 'select', 'textarea']);

/** Table cells sit side by side: a space between them, not a paragraph. */
const CELLS: ReadonlySet<string> = new Set(['td', 'th']);

/**
 * The text a reader sees in `root`, block by block. Adjacent blocks never run together ("<h3>Foo</h3><p>Bar"
 * reads "Foo", then "Bar"), which is where DOM `textContent` fails; a `<br>` is a line break inside a paragraph.
 */
export function blockText(root: DomElement): string {
  const paragraphs: string[] = [];
  let line = '';
  let lines: string[] = [];
  const endLine = () => {
    const text = line.replace(/\s+/g, ' ').trim();
    if (text !== '') lines.push(text);
    line = '';
  };
  const endParagraph = () => {
    endLine();
    if (lines.length > 0) paragraphs.push(lines.join('\n'));
    lines = [];
  };
  // Iterative: a marker string closes a block after its children.
  const stack: Array<DomNode | 'end-block' | 'end-cell'> = [root];
  while (stack.length > 0) {
    const node = stack.pop()!;
    if (node === 'end-block') {
      endParagraph();
      continue;
    }
    if (node === 'end-cell') {
      line += ' ';
      continue;
    }
    if (node.nodeType === TEXT_NODE) {
      line += node.textContent ?? '';
      continue;
    }
    if (!isDomElement(node)) continue;
    const name = node.localName;
    if (SILENT.has(name)) continue;
    if (name === 'br') {
      endLine();
      continue;
    }
    if (name === 'img' || name === 'hr') {
      if (name === 'hr') endParagraph();
      continue;
    }
    const block = BLOCKS.has(name);
    if (block) endParagraph();
    if (block) stack.push('end-block');
    else if (CELLS.has(name)) stack.push('end-cell');
    const children = node.childNodes;
    for (let i = children.length - 1; i >= 0; i -= 1) stack.push(children[i]!);
  }
  endParagraph();
  return paragraphs.join('\n\n');
}
