// The reader view of an article's sanitized HTML, rebuilt element by element from an inert parse: nothing of it can run, load or style the dashboard.
import { html } from '../lib/ui.js';
import { h } from 'preact';

/**
 * The service already sanitized the body (no script, style, handlers or unsafe URLs). The dashboard
 * does not take that on trust: the HTML is parsed into a document of its own that runs nothing, and
 * only the elements below are rebuilt, through Preact, with only the attributes named here. Every
 * other element gives its text alone; script, style and embedded content give nothing. Images are not
 * loaded (they would be requests to the article's site from the dashboard): each becomes a link to it.
 */
const KEEP = new Set([
  'p',
  'h2',
  'h3',
  'h4',
  'h5',
  'h6',
  'ul',
  'ol',
  'li',
  'blockquote',
  'pre',
  'code',
  'em',
  'strong',
  'b',
  'i',
  'u',
  's',
  'sub',
  'sup',
  'small',
  'mark',
  'q',
  'cite',
  'abbr',
  'br',
  'hr',
  'figure',
  'figcaption',
  'table',
  'thead',
  'tbody',
  'tfoot',
  'tr',
  'th',
  'td',
  'caption',
  'dl',
  'dt',
  'dd',
  'time',
]);
/** Headings of the article become one level below the screen's own h1 and h2. */
const HEADING = { h1: 'h3', h2: 'h3', h3: 'h4', h4: 'h5', h5: 'h6', h6: 'h6' };
const DROP = new Set([
  'script',
  'style',
  'noscript',
  'template',
  'iframe',
  'object',
  'embed',
  'frame',
  'frameset',
  'svg',
  'math',
  'form',
  'input',
  'button',
  'select',
  'textarea',
  'link',
  'meta',
  'base',
  'video',
  'audio',
  'source',
  'canvas',
]);
const ATTRIBUTES = { td: ['colspan', 'rowspan'], th: ['colspan', 'rowspan', 'scope'], time: ['datetime'], abbr: ['title'], ol: ['start'] };

/** An http(s) URL, or nothing: no javascript:, data: or relative surprises. */
function safeUrl(value) {
  try {
    const url = new URL(value);
    return url.protocol === 'http:' || url.protocol === 'https:' ? url.href : null;
  } catch {
    return null;
  }
}

function rebuild(node, key) {
  if (node.nodeType === 3) return node.data;
  if (node.nodeType !== 1) return null;
  const name = node.localName;
  if (DROP.has(name)) return null;
  const children = () => [...node.childNodes].map((child, i) => rebuild(child, i));
  if (name === 'a') {
    const href = safeUrl(node.getAttribute('href') ?? '');
    return href === null ? h('span', { key }, children()) : h('a', { key, href, target: '_blank', rel: 'noopener noreferrer nofollow' }, children());
  }
  if (name === 'img') {
    const src = safeUrl(node.getAttribute('src') ?? '');
    const alt = (node.getAttribute('alt') ?? '').trim();
    return src === null ? null : h('a', { key, href: src, target: '_blank', rel: 'noopener noreferrer nofollow', class: 'reader-image' }, `[image${alt ? `: ${alt}` : ''}]`);
  }
  const tag = HEADING[name] ?? (KEEP.has(name) ? name : null);
  if (tag === null) return children();
  const props = { key };
  for (const attribute of ATTRIBUTES[tag] ?? []) {
    const value = node.getAttribute(attribute);
    if (value !== null && /^[\w :.+-]{0,64}$/.test(value)) props[attribute] = value;
  }
  return h(tag, props, tag === 'br' || tag === 'hr' ? null : children());
}

/** The article's text as a reader would see it; `bodyHtml` is the API's sanitized HTML, `body` its plain text for when there is none. */
export function Reader({ bodyHtml, body }) {
  if (!bodyHtml) {
    return body ? html`<div class="reader">${body.split(/\n{2,}/).map((p, i) => html`<p key=${i}>${p}</p>`)}</div>` : null;
  }
  // A document of its own, with no window: parsed, never rendered, so nothing in it loads, runs or applies.
  const inert = document.implementation.createHTMLDocument('');
  inert.body.innerHTML = bodyHtml;
  return html`<div class="reader">${[...inert.body.childNodes].map((child, i) => rebuild(child, i))}</div>`;
}
