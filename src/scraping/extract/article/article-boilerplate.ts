// What surrounds an article's text on a news or blog page (share bars, bylines, captions, related links...): found by role, removed before the body is chosen.
import { classAndId, domElements, type DomDocument, type DomElement } from './article-dom.js';

/** A kind of page furniture, as explain names it. */
export type BoilerplateKind =
  | 'headline'
  | 'caption'
  | 'byline'
  | 'share'
  | 'newsletter'
  | 'related'
  | 'comments'
  | 'tags'
  | 'ad'
  | 'navigation'
  | 'header-footer'
  | 'notice'
  | 'hidden'
  | 'controls';

/** Tags that are never the article's text, whatever they hold. */
const TAGS: ReadonlyMap<string, BoilerplateKind> = new Map([
  ['nav', 'navigation'],
  ['aside', 'related'],
  ['figcaption', 'caption'],
  ['form', 'controls'],
  ['button', 'controls'],
  ['input', 'controls'],
  ['select', 'controls'],
  ['textarea', 'controls'],
  ['iframe', 'controls'],
  ['dialog', 'controls'],
  // The site's header and footer, and an article's own: its headline, standfirst and byline, its tags and share links.
  ['header', 'header-footer'],
  ['footer', 'header-footer'],
]);

/**
 * Class and id names of each kind, as one token or one part of a hyphenated or underscored name
 * ("share-bar", "post_tags", "c-byline__name"). Checked in this order; the first kind that matches wins.
 */
const NAMES: ReadonlyArray<readonly [BoilerplateKind, RegExp]> = [
  ['comments', part('comments?|comment-list|commentlist|disqus|respond|replies|discussion')],
  ['share', part('share|sharing|sharebar|sharetools|social-?share|social-?links|social-?icons|social-?buttons|addthis|sharedaddy|sociable')],
  ['newsletter', part('newsletter|subscribe|subscription|signup|sign-up|optin|opt-in|mailchimp|mc4wp')],
  [
    'related',
    part(
      'related|recommended|recommendations|more-stories|also-read|read-next|readnext|up-next|outbrain|taboola|recirc|recirculation|most-popular|most-read|trending|popular-posts|further-reading|breaking-now|breaking-news|latest-news|top-stories|more-news|headline-list',
    ),
  ],
  ['tags', part('tags|tag-list|taglist|post-tags|entry-tags|article-tags|tag-links|keywords|topics')],
  [
    'byline',
    part(
      'byline|by-line|author|authors|contributor|dateline|timestamp|published|pubdate|publish-date|post-date|entry-date|article-date|posted-on|entry-meta|post-meta|article-meta|meta-info|date|dates|datetime|publish-info|article-info|post-info|entry-info',
    ),
  ],
  ['caption', part('caption|figcaption|credit|credits|image-credit|photo-credit|wp-caption-text|gallery|slideshow|carousel|slider')],
  ['ad', part('ad|ads|advert|advertisement|advertising|adslot|ad-slot|adunit|ad-unit|dfp|gpt|sponsor|sponsored|promo|promotion')],
  ['navigation', part('breadcrumbs?|pagination|pager|toolbar|skip-link|skip-to-content')],
  ['notice', part('cookies?|cookie-law|cookie-notice|cookie-banner|consent|gdpr|notification-bar|notice-bar|alert-bar|modal|popup|pop-up|lightbox')],
  [
    'hidden',
    token(
      'hidden|hide|sr-only|visually-hidden|visuallyhidden|screen-reader-text|offscreen|noscript|[\\w-]*-noscript|print-only|printonly|print-header|print-footer|visible-print|show-for-print',
    ),
  ],
];

/** `names` as a whole class token only: "hidden" hides, "field-label-hidden" names something else. */
function token(names: string): RegExp {
  return new RegExp(`(?:^|\\s)(?:${names})(?:$|\\s)`);
}

/** `names` as a whole class token or a whole part of one (between start, end, "-", "_"). */
function part(names: string): RegExp {
  return new RegExp(`(?:^|[\\s_-])(?:${names})(?:$|[\\s_-])`);
}

const METADATA_PROPS = /^(?:author|creator|datePublished|dateModified|dateCreated|publisher|contributor)$/;

/** An element that holds this share of the page's prose is the article, whatever its class says. */
const MAX_PROSE_SHARE = 0.4;

export interface Removal {
  kind: BoilerplateKind;
  el: DomElement;
}

/**
 * The page furniture in `document`'s body, outermost elements only, in document order. An element is
 * furniture by its tag (nav, aside, figcaption, forms, the h1 headline), by a class or id naming its role,
 * or by being hidden; never when it holds most of the page's prose (a wrapper named "article-with-share")
 * or the element the page marks up as the article body.
 */
export function findBoilerplate(document: DomDocument): Removal[] {
  const body = document.body;
  if (body === null) return [];
  const elements = domElements(body);
  const prose = proseWords(elements);
  const total = prose.get(body) ?? 0;
  // The marked body and its ancestors; a walk up stops where an earlier one passed (linear in all).
  const marked = new Set<DomElement>();
  for (const el of elements) {
    if (isMarkedBody(el)) for (let up: DomElement | null = el; up !== null && !marked.has(up); up = up.parentElement) marked.add(up);
  }
  const headlines = headlinesOf(document, elements);
  const removals: Removal[] = [];
  const removed = new Set<DomElement>();
  for (const el of elements) {
    if (el.parentElement !== null && removed.has(el.parentElement)) {
      removed.add(el);
      continue;
    }
    if (el === body || marked.has(el)) continue;
    const kind = headlines.has(el) ? 'headline' : kindOf(el);
    if (kind === null) continue;
    if (kind !== 'headline' && total > 0 && (prose.get(el) ?? 0) > MAX_PROSE_SHARE * total) continue;
    removals.push({ kind, el });
    removed.add(el);
  }
  return removals;
}

/**
 * The page's headline: its first h1, and any h1 that repeats the page's title. Another h1 is a heading
 * inside the text, which some sites write with h1 too.
 */
function headlinesOf(document: DomDocument, elements: readonly DomElement[]): Set<DomElement> {
  // A page has one headline; past a few dozen h1s it is no page a reader reads.
  const h1s = elements
    .filter((el) => el.localName === 'h1')
    .slice(0, MAX_H1S)
    .filter((el) => squash(el.textContent) !== '');
  const title = squash(document.querySelectorAll('head > title')[0]?.textContent);
  const found = new Set<DomElement>(h1s.slice(0, 1));
  for (const h1 of h1s) {
    const text = squash(h1.textContent);
    if (title !== '' && (title.includes(text) || text.includes(title))) found.add(h1);
  }
  return found;
}

const MAX_H1S = 50;

function squash(text: string | null | undefined): string {
  return (text ?? '').replace(/\s+/g, ' ').trim().toLowerCase();
}

function kindOf(el: DomElement): BoilerplateKind | null {
  const byTag = TAGS.get(el.localName);
  if (byTag !== undefined) return byTag;
  if (el.hasAttribute('hidden') || /display\s*:\s*none|visibility\s*:\s*hidden/i.test(el.getAttribute('style') ?? '')) return 'hidden';
  // Metadata a page marks up inside its text (the date, the author) is shown beside the text, not in it.
  if (METADATA_PROPS.test(el.getAttribute('itemprop') ?? '')) return 'byline';
  if (el.localName === 'time' && !inRunningText(el)) return 'byline';
  // Only a leaf (or a leaf's wrapper) can be a bare label: asking every element for its text would be quadratic.
  if (isLeafish(el) && AD_LABEL.test(el.textContent ?? '')) return 'ad';
  const names = classAndId(el);
  if (names.trim() === '') return null;
  if (BOOTSTRAP_HIDDEN.test(names) && !BOOTSTRAP_SHOWN.test(names)) return 'hidden';
  for (const [kind, pattern] of NAMES) if (pattern.test(names)) return kind;
  return null;
}

/** Bootstrap's "d-none" hides an element unless a wider screen's class ("d-lg-block") shows it again. */
const BOOTSTRAP_HIDDEN = /(?:^|\s)d-none(?:$|\s)/;
const BOOTSTRAP_SHOWN = /(?:^|\s)d-(?:md|lg|xl|xxl)-(?!none)[a-z-]+(?:$|\s)/;

/** The label an ad slot shows while empty: the whole text of its element. */
const AD_LABEL = /^\s*(?:advert|advertisement|advertising|ad|ads|sponsored|anzeige|publicidad|publicité|pubblicità|реклама)\s*$/i;

function isLeafish(el: DomElement): boolean {
  const children = el.children;
  return children.length === 0 || (children.length === 1 && children[0]!.children.length === 0);
}

/** Blocks a <time> may sit in; real pages nest a few levels, hostile ones thousands. */
const MAX_TIME_ANCESTORS = 20;

/** A <time> inside a sentence ("on <time>May 3</time> the council...") is text; one on its own is a dateline. */
function inRunningText(el: DomElement): boolean {
  let steps = 0;
  for (let up = el.parentElement; up !== null && steps < MAX_TIME_ANCESTORS; up = up.parentElement, steps += 1) {
    if (up.localName === 'p' || up.localName === 'li' || up.localName === 'blockquote' || up.localName === 'td') return true;
    if (up.localName === 'div' || up.localName === 'section' || up.localName === 'article' || up.localName === 'header') return false;
  }
  return false;
}

/** The element the page marks up as the article's body (microdata or RDFa `articleBody`). */
export function isMarkedBody(el: DomElement): boolean {
  return /(?:^|\s)(?:\S*[/#:])?articleBody(?:\s|$)/.test(`${el.getAttribute('itemprop') ?? ''} ${el.getAttribute('property') ?? ''}`);
}

/** Words of paragraph text under each element (bottom-up over `elements`, which is in document order). */
function proseWords(elements: readonly DomElement[]): Map<DomElement, number> {
  const words = new Map<DomElement, number>();
  for (let i = elements.length - 1; i >= 0; i -= 1) {
    const el = elements[i]!;
    let own = words.get(el) ?? 0;
    if (el.localName === 'p') own = wordsIn(el.textContent ?? '');
    words.set(el, own);
    const parent = el.parentElement;
    if (parent !== null) words.set(parent, (words.get(parent) ?? 0) + own);
  }
  return words;
}

function wordsIn(text: string): number {
  const trimmed = text.trim();
  return trimmed === '' ? 0 : trimmed.split(/\s+/).length;
}
