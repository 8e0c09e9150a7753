// Sanitized article HTML can never run script: hostile fixtures and random hostile markup, checked as a browser would parse the output.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { load } from 'cheerio';
import type { AnyNode, Element } from 'domhandler';
import fc from 'fast-check';
import { extract } from '../../../src/scraping/extract/index.js';
import { paragraphsHtml, sanitizeBodyHtml } from '../../../src/scraping/extract/article/sanitize-body-html.js';

const PAGE = 'https://news.example/2024/story';

const ALLOWED: Record<string, readonly string[]> = {
  a: ['href', 'title', 'rel'],
  img: ['src', 'alt', 'title', 'width', 'height'],
  td: ['colspan', 'rowspan'],
  th: ['colspan', 'rowspan', 'scope'],
  ol: ['start', 'reversed'],
  time: ['datetime'],
  abbr: ['title'],
  q: ['cite'],
  blockquote: ['cite'],
};
const TAGS = new Set([
  'p',
  'br',
  'hr',
  'h2',
  'h3',
  'h4',
  'h5',
  'h6',
  'blockquote',
  'pre',
  'code',
  'ul',
  'ol',
  'li',
  'dl',
  'dt',
  'dd',
  'em',
  'strong',
  'b',
  'i',
  'u',
  's',
  'del',
  'ins',
  'sub',
  'sup',
  'small',
  'mark',
  'abbr',
  'cite',
  'q',
  'time',
  'a',
  'img',
  'figure',
  'table',
  'caption',
  'thead',
  'tbody',
  'tfoot',
  'tr',
  'th',
  'td',
  'div',
  'span',
]);

/**
 * Parses `html` with parse5 (cheerio's default: the HTML5 algorithm browsers use) and fails on anything
 * that could run: an element or attribute outside the allowlist (script, style, iframe, on* handlers,
 * style=), or a URL that is not http(s) (mailto for links).
 */
function assertInert(html: string, input: string): void {
  const $ = load(html);
  const body = $('body').get(0)!;
  const stack: AnyNode[] = [...body.children];
  while (stack.length > 0) {
    const node = stack.pop()!;
    if (node.type === 'comment') assert.fail(`a comment survived in ${html} (from ${input})`);
    if (node.type !== 'tag' && node.type !== 'script' && node.type !== 'style') continue;
    const el = node as Element;
    assert.ok(TAGS.has(el.name), `<${el.name}> survived in ${html} (from ${input})`);
    for (const [name, value] of Object.entries(el.attribs)) {
      assert.ok(ALLOWED[el.name]?.includes(name), `${name}= on <${el.name}> survived in ${html} (from ${input})`);
      if (name === 'href' || name === 'src' || name === 'cite') {
        const protocol = new URL(value).protocol;
        const allowed = name === 'href' ? ['http:', 'https:', 'mailto:'] : ['http:', 'https:'];
        assert.ok(allowed.includes(protocol), `${name}="${value}" survived in ${html} (from ${input})`);
      }
    }
    stack.push(...el.children);
  }
  assert.doesNotMatch(html, /<\s*\/?\s*(?:script|style|iframe|object|embed|svg|math|form|base|meta|link)\b/i, input);
}

/** Each hostile fixture, and what of it should survive as text or markup (the rest must be gone). */
const HOSTILE: ReadonlyArray<readonly [string, string]> = [
  ['<p>Hi</p><script>alert(1)</script>', '<p>Hi</p>'],
  ['<p>Hi<img src=x onerror=alert(1)></p>', '<p>Hi<img src="https://news.example/2024/x" /></p>'],
  ['<a href="javascript:alert(1)">click</a>', '<a>click</a>'],
  ['<a href="JaVaScRiPt:alert(1)">click</a>', '<a>click</a>'],
  ['<a href=" javascript:alert(1)">click</a>', '<a>click</a>'],
  ['<a href="java&#x09;script:alert(1)">click</a>', '<a>click</a>'],
  ['<a href="&#106;avascript:alert(1)">click</a>', '<a>click</a>'],
  ['<a href="vbscript:msgbox(1)">click</a>', '<a>click</a>'],
  ['<a href="data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==">click</a>', '<a>click</a>'],
  ['<p><img src="data:image/svg+xml;base64,PHN2ZyBvbmxvYWQ9YWxlcnQoMSk+"></p>', '<p></p>'],
  ['<svg onload=alert(1)><script>alert(1)</script></svg><p>after</p>', '<p>after</p>'],
  ['<math><mtext><table><mglyph><style><img src=x onerror=alert(1)>', ''],
  ['<iframe src="javascript:alert(1)"></iframe><iframe srcdoc="<script>alert(1)</script>"></iframe>', ''],
  ['<object data="javascript:alert(1)"></object><embed src="javascript:alert(1)">', ''],
  ['<style>p{background:url(javascript:alert(1))}</style><p style="background:url(javascript:alert(1))">x</p>', '<p>x</p>'],
  ['<form action="javascript:alert(1)"><button formaction="javascript:alert(1)">go</button><input onfocus=alert(1) autofocus></form>', ''],
  ['<xmp><script>alert(1)</script></xmp>', ''],
  ['<noscript><p title="</noscript><img src=x onerror=alert(1)>"></noscript>', ''],
  ['<plaintext><script>alert(1)</script>', ''],
  ['<template><script>alert(1)</script></template>', ''],
  ['<!--<img src=x onerror=alert(1)>--><p>ok</p>', '<p>ok</p>'],
  ['<base href="javascript:alert(1)//"><meta http-equiv="refresh" content="0;url=javascript:alert(1)"><link rel="import" href="https://evil.example/x">', ''],
  ['<a href="https://ok.example/" onclick="alert(1)">ok</a>', '<a href="https://ok.example/" rel="nofollow noopener noreferrer">ok</a>'],
  ['<div onmouseover="alert(1)"><b onfocus=alert(1) tabindex=0>x</b></div>', '<div><b>x</b></div>'],
  ['<img src="https://ok.example/a.png" srcset="javascript:alert(1) 1x">', '<img src="https://ok.example/a.png" />'],
  ['<scr<script>ipt>alert(1)</script>', 'ipt&gt;alert(1)'],
  ['<video><source onerror="alert(1)"></video><audio src=x onerror=alert(1)></audio>', ''],
  ['<blockquote cite="javascript:alert(1)"><p>quoted</p></blockquote>', '<blockquote><p>quoted</p></blockquote>'],
  ['<h1 onclick="alert(1)">Headline</h1>', '<h2>Headline</h2>'],
  ['<p>Text mentioning &lt;script&gt;alert(1)&lt;/script&gt; stays text</p>', '<p>Text mentioning &lt;script&gt;alert(1)&lt;/script&gt; stays text</p>'],
  [
    '<a href="/relative/page">in site</a> <a href="mailto:desk@news.example">mail</a>',
    '<a href="https://news.example/relative/page" rel="nofollow noopener noreferrer">in site</a> <a href="mailto:desk@news.example" rel="nofollow noopener noreferrer">mail</a>',
  ],
  ['<img data-src="/img/real.jpg" src="data:image/gif;base64,R0lGODlhAQABAAAAACw=" alt="lazy">', '<img src="https://news.example/img/real.jpg" alt="lazy" />'],
];

describe('sanitized body_html can never run script', () => {
  for (const [hostile, expected] of HOSTILE) {
    test(`${hostile.slice(0, 70)} -> ${expected === '' ? '(nothing)' : expected.slice(0, 60)}`, () => {
      const out = sanitizeBodyHtml(hostile, PAGE);
      assertInert(out, hostile);
      assert.equal(out, expected);
    });
  }

  test('random hostile markup: the output is inert and sanitizing it again changes nothing', () => {
    const pieces = [
      '<script>alert(1)</script>',
      '<img src=x onerror=alert(1)>',
      '<a href="javascript:alert(1)">',
      '</a>',
      '<svg onload=alert(1)>',
      '<style>',
      '</style>',
      '<iframe src=javascript:alert(1)>',
      '<p onclick=alert(1)>',
      '</p>',
      '<!--',
      '-->',
      '<![CDATA[',
      ']]>',
      '<xmp>',
      '</xmp>',
      '<noscript>',
      '</noscript>',
      '<math><mtext>',
      '<table>',
      '<td>',
      '<a href="data:text/html,x">',
      '"',
      "'",
      '>',
      '<',
      '&#106;',
      '&lt;',
      'javascript:',
      ' onerror=',
      '<b style="x:expression(alert(1))">',
      '<textarea>',
      '</textarea>',
      'text ',
      '<img src="https://ok.example/i.png">',
      '<a href="https://ok.example/">',
      '<pre>',
      '</pre>',
      '\n  ',
    ];
    fc.assert(
      fc.property(fc.array(fc.oneof(fc.constantFrom(...pieces), fc.string({ maxLength: 6 })), { maxLength: 40 }), (parts) => {
        const hostile = parts.join('');
        const out = sanitizeBodyHtml(hostile, PAGE);
        assertInert(out, hostile);
        assert.equal(sanitizeBodyHtml(out, PAGE), out, `not stable: ${JSON.stringify(hostile)}`);
      }),
      { numRuns: 500, seed: 22 },
    );
  });

  test('a JSON-LD articleBody becomes escaped paragraphs, never markup', () => {
    const html = paragraphsHtml('First <script>alert(1)</script> line\nsecond line\n\nSecond paragraph & more');
    assert.equal(html, '<p>First &lt;script&gt;alert(1)&lt;/script&gt; line<br>second line</p><p>Second paragraph &amp; more</p>');
    assertInert(html, 'articleBody');
  });

  test('an article page whose text carries scripts and handlers yields an inert body_html and a body without code', () => {
    const paragraph = (n: number) =>
      `<p onclick="steal()">Paragraph ${n} of the council report explains, in plain words, how the new parking rules will work for residents and visitors alike.<script>steal(${n})</script></p>`;
    const page =
      '<html><head><meta property="og:type" content="article"><title>Parking rules</title></head><body><article><h1>Parking rules</h1>' +
      `<div class="text">${[1, 2, 3, 4, 5, 6].map(paragraph).join('')}<img src="x" onerror="steal()"><a href="javascript:steal()">read</a>` +
      '<iframe src="https://ads.example/frame"></iframe><style>p{color:red}</style></div></article></body></html>';
    const [article] = extract(page, PAGE).articles;
    assert.ok(article?.body_html !== null && article?.body_html !== undefined, 'the article has a body_html');
    assertInert(article.body_html, 'page');
    assert.doesNotMatch(article.body ?? '', /steal|color:red/);
    assert.match(article.body ?? '', /Paragraph 6 of the council report/);
  });
});
