// An article's body as HTML that is safe to show: an allowlist of text tags and attributes (sanitize-html), links and images made absolute http(s).
import sanitizeHtml from 'sanitize-html';
import { absoluteUrl } from '../dom-helpers.js';

/** What an article's text is written with; anything else is dropped and its text kept (or, for NEVER_TEXT, dropped too). */
const TAGS = [
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
];

/**
 * Elements whose content is code, a raw-text block or a foreign document, never the article's text: dropped
 * whole. sanitize-html's own list, plus the raw-text elements a browser parses differently from htmlparser2
 * (xmp, plaintext, noembed...), so nothing inside them can come back as markup.
 */
const NEVER_TEXT = [
  'script',
  'style',
  'textarea',
  'option',
  'noscript',
  'xmp',
  'plaintext',
  'noembed',
  'noframes',
  'iframe',
  'template',
  'title',
  'svg',
  'math',
  'object',
  'embed',
  'select',
  'button',
];

const LINK_REL = 'nofollow noopener noreferrer';

/**
 * Sanitized HTML of an article body: no script, style, event handler, inline style or class (but a code
 * block's `language-…`, which says how to read it), form or
 * frame; links only http(s) or mailto, images only http(s) (no data: URIs: a stored article points at
 * its images rather than carrying them), every URL absolute against `pageUrl`; h1 becomes h2 (the
 * headline is the article's title, shown apart). Pure.
 */
export function sanitizeBodyHtml(html: string, pageUrl: string): string {
  const clean = sanitizeHtml(html, {
    allowedTags: TAGS,
    allowedAttributes: {
      a: ['href', 'title', 'rel'],
      img: ['src', 'alt', 'title', 'width', 'height'],
      td: ['colspan', 'rowspan'],
      th: ['colspan', 'rowspan', 'scope'],
      ol: ['start', 'reversed'],
      time: ['datetime'],
      abbr: ['title'],
      q: ['cite'],
      blockquote: ['cite'],
      code: ['class'],
    },
    allowedClasses: { code: ['language-*', 'lang-*'] },
    allowedSchemes: ['http', 'https'],
    allowedSchemesByTag: { a: ['http', 'https', 'mailto'], img: ['http', 'https'] },
    allowProtocolRelative: false,
    disallowedTagsMode: 'discard',
    nonTextTags: NEVER_TEXT,
    parseStyleAttributes: false,
    transformTags: {
      h1: 'h2',
      a: (tagName, attribs) => {
        const href = linkTarget(attribs['href'], pageUrl);
        const out: sanitizeHtml.Attributes = href === null ? {} : { href, rel: LINK_REL };
        if (attribs['title'] !== undefined) out['title'] = attribs['title'];
        return { tagName, attribs: out };
      },
      img: (tagName, attribs) => {
        const src = imageSource(attribs, pageUrl);
        const out: sanitizeHtml.Attributes = src === null ? {} : { src };
        for (const name of ['alt', 'title', 'width', 'height']) if (attribs[name] !== undefined) out[name] = attribs[name]!;
        return { tagName, attribs: out };
      },
    },
    // An image that has no address left shows nothing; a link that has none is kept as its text.
    exclusiveFilter: (frame) => frame.tag === 'img' && frame.attribs['src'] === undefined,
  });
  return collapseLayout(clean);
}

/**
 * The indentation removed blocks leave behind ("\n    \n      \n") becomes one line break; text inside
 * <pre> keeps its spacing. Applied to sanitized output, so it only ever sees escaped text and known tags.
 */
function collapseLayout(html: string): string {
  return html
    .split(/(<pre>[\s\S]*?<\/pre>)/)
    .map((part, i) => (i % 2 === 1 ? part : part.replace(/\s*\n\s*/g, '\n')))
    .join('')
    .trim();
}

/** mailto: stays as it is; anything else resolves against the page and must be http(s). */
function linkTarget(href: string | undefined, pageUrl: string): string | null {
  const trimmed = href?.trim() ?? '';
  if (/^mailto:/i.test(trimmed)) return trimmed;
  return absoluteUrl(trimmed, pageUrl);
}

/** Lazy-loading pages keep the real address in data-src (or a srcset); a data: placeholder is no address. */
function imageSource(attribs: sanitizeHtml.Attributes, pageUrl: string): string | null {
  const srcset = (attribs['data-srcset'] ?? attribs['srcset'])?.trim().split(/\s+/)[0];
  for (const candidate of [attribs['data-src'], attribs['data-lazy-src'], attribs['data-original'], attribs['src'], srcset]) {
    if (candidate === undefined || /^\s*data:/i.test(candidate)) continue;
    const url = absoluteUrl(candidate, pageUrl);
    if (url !== null) return url;
  }
  return null;
}

/** Paragraphs of plain text (a JSON-LD articleBody) as HTML: escaped, one <p> each. */
export function paragraphsHtml(text: string): string {
  return text
    .split(/\n\s*\n/)
    .map((p) => `<p>${escapeHtml(p.trim()).replace(/\n/g, '<br>')}</p>`)
    .join('');
}

function escapeHtml(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}
