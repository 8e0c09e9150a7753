// Deep nesting bounded before parsing: a page nested 300,000 deep parses like one nested 512 deep.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { boundNesting, MAX_NESTING_DEPTH, WRAPPER_DEPTH } from '../../../src/scraping/extract/nesting-bound.js';
import { parsePage } from '../../../src/scraping/extract/page.js';
import { parseDocument, maxDepth } from '../../../src/scraping/extract/article/article-dom.js';

const nested = (depth: number, inner = 'deep text') => `${'<div>'.repeat(depth)}${inner}${'</div>'.repeat(depth)}`;

test('boundNesting keeps pages within the depth as they are and drops only the tags beyond it, text kept', () => {
  const cases: Array<[string, string, number, string]> = [
    ['shallow page: the same string', `<p>a</p>${nested(3)}`, 5, `<p>a</p>${nested(3)}`],
    ['beyond: tags dropped, text kept', nested(4, 'x'), 2, '<div><div>x</div></div>'],
    ['a sibling after the deep part stays a sibling', `<main>${nested(4, 'x')}<b>after</b></main>`, 2, '<main><div>x</div><b>after</b></main>'],
    ['void and self-closing elements do not nest', `${'<br><img src=x><input/>'.repeat(10)}<div/>`.repeat(3), 1, `${'<br><img src=x><input/>'.repeat(10)}<div/>`.repeat(3)],
    [
      'unclosed list items and paragraphs are siblings, not depth',
      `<ul>${'<li>item'.repeat(50)}</ul>${'<p>para'.repeat(50)}`,
      3,
      `<ul>${'<li>item'.repeat(50)}</ul>${'<p>para'.repeat(50)}`,
    ],
    [
      'markup inside scripts, styles and comments is text',
      `<script>"${'<div>'.repeat(9)}"</script><!-- ${'<div>'.repeat(9)} --><style>a{}</style>${nested(2)}`,
      2,
      `<script>"${'<div>'.repeat(9)}"</script><!-- ${'<div>'.repeat(9)} --><style>a{}</style>${nested(2)}`,
    ],
    ['a ">" inside a quoted attribute does not end the tag', `<div title="a>b">${nested(3, 'x')}</div>`, 2, '<div title="a>b"><div>x</div></div>'],
  ];
  for (const [name, html, depth, expected] of cases) assert.equal(boundNesting(html, depth).html, expected, name);
  // Between the wrapper depth and the hard one, only bare wrappers go: what carries attributes or meaning stays.
  assert.equal(
    boundNesting('<div><div><div><h1 class="t">A</h1><div class="k"><div><span>x</span></div></div></div></div></div>', 6, 2).html,
    '<div><div><h1 class="t">A</h1><div class="k">x</div></div></div>',
  );
  assert.equal(boundNesting(nested(4), 2).dropped, 4);
});

/** How deep elements nest under `node`, without recursion. */
function depthOf(root: { children?: unknown[] }): number {
  let deepest = 0;
  const stack: Array<[{ children?: unknown[] }, number]> = [[root, 0]];
  while (stack.length > 0) {
    const [node, depth] = stack.pop()!;
    deepest = Math.max(deepest, depth);
    for (const child of node.children ?? []) if ((child as { type?: string }).type === 'tag') stack.push([child as { children?: unknown[] }, depth + 1]);
  }
  return deepest;
}

test('a page nested 20,000 deep is parsed at most MAX_NESTING_DEPTH deep, for extraction and for the article body alike', () => {
  const html = `<html><head><title>Deep</title></head><body>${nested(20_000, 'the innermost words')}<p>after</p></body></html>`;
  const page = parsePage(html, 'https://shop.example/deep')!;
  assert.ok(depthOf(page.root as never) <= WRAPPER_DEPTH + 3, `parsed ${depthOf(page.root as never)} deep`);
  const classy = parsePage(`<body>${'<div class="x">'.repeat(20_000)}x${'</div>'.repeat(20_000)}</body>`, 'https://shop.example/deep')!;
  assert.ok(depthOf(classy.root as never) <= MAX_NESTING_DEPTH + 2, `parsed ${depthOf(classy.root as never)} deep`);
  assert.match(page.$('body').text(), /the innermost words/);
  assert.equal(page.$('body > p').text(), 'after');
  const document = parseDocument(html)!;
  assert.ok(maxDepth(document.body!) <= MAX_NESTING_DEPTH, `linkedom parsed ${maxDepth(document.body!)} deep`);
});
