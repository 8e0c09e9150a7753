// What kind of writing a page that sells nothing is: a forum thread, documentation, a service page, by the
// structures those pages share (posts by several authors, a docs sidebar and table of contents, pricing
// plans and calls to action), their software's generator tag, their structured data and their URL's path.
import type { Element } from 'domhandler';
import type { Page } from '../page.js';

export interface GenreEvidence {
  /** The page's generator meta tag, lower-cased ('' when none). */
  generator: string;
  forum: {
    /** Blocks named as posts or messages, repeated. */
    posts: number;
    /** Distinct author names on those posts. */
    authors: number;
    /** DiscussionForumPosting, QAPage or Question in structured data. */
    schema: boolean;
    /** Forum software in the generator tag, or a thread's URL shape. */
    software: boolean;
    url: boolean;
  };
  docs: {
    /** Documentation software in the generator tag or in the page's class names. */
    software: boolean;
    url: boolean;
    /** A sidebar of links or a table of contents beside the text. */
    navigation: boolean;
    /** Code blocks (<pre>). */
    code: number;
    schema: boolean;
  };
  service: {
    url: boolean;
    /** Plans with prices per period, or a pricing section. */
    pricing: boolean;
    /** Prices stated per period ("$12/month", "€9 per user"): plans, not goods. */
    periodPrices: number;
    /** Calls to action: "Get started", "Book a demo", "Contact us"... */
    actions: number;
    /** <section>s or full-width blocks, each with its own heading. */
    sections: number;
    schema: boolean;
  };
}

const FORUM_SOFTWARE = /discourse|phpbb|vbulletin|xenforo|invision|mybb|flarum|nodebb|simple machines|smf|vanilla|khoros|lithium|jive|bbpress|fluxbb|punbb|askbot|misago/;
const DOCS_SOFTWARE =
  /sphinx|mkdocs|docusaurus|gitbook|vitepress|vuepress|docsify|antora|mintlify|nextra|starlight|readthedocs|read the docs|jsdoc|typedoc|doxygen|javadoc|rustdoc|hugo-book|docfx|confluence|mediawiki|dokuwiki/;
const DOCS_CLASSES =
  /(?:^|[\s_-])(?:rst-content|md-content|markdown-body|theme-doc|docs?-content|docs?-body|documentation|wy-nav|sphinxsidebar|bd-sidebar|docs?-sidebar|VPDoc|nextra|mw-parser-output|devsite)(?:$|[\s_-])/i;

/** Forums live on hosts named for them, under thread-shaped paths. */
const FORUM_HOST = /^(?:forums?|community|discuss|discussions|bbs|boards?)\./i;
const FORUM_PATH =
  /\/thread-\d|\/d\/\d|\/(?:t|threads?|topics?|forums?|community|discussions?|questions?|viewtopic|showthread|board|boards|comments)(?:[/.]|$)|[?&](?:t|topic|threadid)=\d/i;
const DOCS_PATH = /\/(?:docs?|documentation|reference|api|manual|guides?|handbook|wiki|learn|tutorials?|howto|kb|knowledge-?base|help|man|library|sdk|spec)(?:[/.]|$)/i;
const SERVICE_PATH =
  /\/(?:pricing|plans?|services?|solutions?|features?|platform|enterprise|industr(?:y|ies)|about(?:-us)?|contact(?:-us)?|company|careers|why-[\w-]+|use-cases?|customers|integrations|partners|teams?|what-we-do|our-[\w-]+)(?:[/.]|$)/i;

// A Question with its Answers is also how FAQ sections are marked up: only a thread's own types count.
const FORUM_TYPES = new Set(['discussionforumposting', 'qapage']);
const DOCS_TYPES = new Set(['techarticle', 'apireference', 'howto']);
const SERVICE_TYPES = new Set(['service', 'professionalservice', 'localbusiness', 'offercatalog', 'softwareapplication', 'webapplication', 'product']);

/** A post or message block: its class names say so (one token or one part of one). */
const POST_CLASS =
  /(?:^|[\s_-])(?:post|posts|message|messages|reply|replies|comment|answer|postbody|post-body|post-content|message-body|messagecontent|bbwrapper|topic-post|cooked|forum-post|thread-post|postcontainer|post-message|js-post)(?:$|[\s_-])/i;
const AUTHOR_CLASS = /(?:^|[\s_-])(?:author|username|user-name|poster|postauthor|post-author|user-info|userinfo|member|nick)(?:$|[\s_-])/i;

const ACTION_TEXT =
  /^(?:get started|start (?:free|now|your free trial|a free trial)|try (?:it )?(?:free|for free|now)|free trial|book a (?:demo|call|consultation)|request a (?:demo|quote|consultation)|schedule a (?:demo|call)|get a (?:quote|demo)|contact (?:us|sales)|talk to (?:sales|us|an expert)|sign up(?: free| now)?|buy now|subscribe now|learn more|see (?:pricing|plans)|get in touch)\b/i;
const PER_PERIOD = /(?:\/|per\s)\s*(?:mo|month|yr|year|user|seat)\b|\bmonthly\b|\bannually\b|\bbilled\b/i;

/** Elements to look at at most: the evidence is near the top of the tree, and a hostile page is large. */
const MAX_ELEMENTS = 40_000;

export function pageGenre(page: Page, schemaTypes: ReadonlySet<string>): GenreEvidence {
  const generator = (page.metaContent('generator') ?? '').toLowerCase();
  let path = '';
  let host = '';
  try {
    const url = new URL(page.url);
    path = url.pathname + url.search;
    host = url.hostname;
  } catch {
    // a page without a URL: its path says nothing
  }
  const postBlocks = new Map<string, number>();
  const authors = new Set<string>();
  let docsClass = false;
  let navigation = false;
  let code = 0;
  let actions = 0;
  let sections = 0;
  let pricing = false;
  let periodPrices = 0;
  const elements = page.elements;
  const count = Math.min(elements.length, MAX_ELEMENTS);
  for (let i = 0; i < count; i += 1) {
    const el = elements[i]!;
    const names = `${el.attribs['class'] ?? ''} ${el.attribs['id'] ?? ''}`;
    if (names.length > 1) {
      if (POST_CLASS.test(names) && el.name !== 'a' && el.name !== 'span' && el.name !== 'button') {
        const key = `${el.name}.${(el.attribs['class'] ?? '').trim().split(/\s+/)[0] ?? ''}`;
        postBlocks.set(key, (postBlocks.get(key) ?? 0) + 1);
      }
      if (AUTHOR_CLASS.test(names)) {
        const name = textOf(el, 60);
        if (name !== '') authors.add(name.toLowerCase());
      }
      if (!docsClass && DOCS_CLASSES.test(names)) docsClass = true;
      if (!navigation && /(?:^|[\s_-])(?:toc|table-of-contents|on-this-page|sidebar-nav|docs-nav|doc-nav|side-nav|sidenav|menu-docs)(?:$|[\s_-])/i.test(names)) navigation = true;
      if (!pricing && /(?:^|[\s_-])(?:pricing|price-table|pricing-table|plans|plan-card|pricing-card|tiers?)(?:$|[\s_-])/i.test(names)) pricing = true;
    }
    if (el.name === 'pre') code += 1;
    else if (el.name === 'section' && hasHeading(el)) sections += 1;
    else if ((el.name === 'a' || el.name === 'button') && !page.chrome.has(el)) {
      const text = textOf(el, 40);
      if (text !== '' && ACTION_TEXT.test(text)) actions += 1;
    } else if ((el.name === 'span' || el.name === 'p' || el.name === 'div' || el.name === 'strong') && el.children.length <= 3) {
      const text = textOf(el, 40);
      if (/[$€£¥]\s?\d/.test(text) && PER_PERIOD.test(text)) {
        pricing = true;
        periodPrices += 1;
      }
    }
  }
  const posts = Math.max(0, ...postBlocks.values());
  const types = (set: ReadonlySet<string>) => [...schemaTypes].some((t) => set.has(t));
  return {
    generator,
    forum: { posts, authors: authors.size, schema: types(FORUM_TYPES), software: FORUM_SOFTWARE.test(generator), url: FORUM_PATH.test(path) || FORUM_HOST.test(host) },
    docs: { software: DOCS_SOFTWARE.test(generator) || docsClass, url: DOCS_PATH.test(path), navigation, code, schema: types(DOCS_TYPES) },
    service: { url: SERVICE_PATH.test(path), pricing, periodPrices, actions, sections, schema: types(SERVICE_TYPES) },
  };
}

function hasHeading(el: Element): boolean {
  for (const child of el.children) {
    if (child.type !== 'tag') continue;
    if (/^h[1-4]$/.test(child.name)) return true;
    for (const grandchild of child.children) if (grandchild.type === 'tag' && /^h[1-4]$/.test(grandchild.name)) return true;
  }
  return false;
}

/** The element's text, whitespace collapsed, '' when longer than `max` (a wrapper, not a label). */
function textOf(el: Element, max: number): string {
  let text = '';
  const stack: Array<Element['children'][number]> = [...el.children].reverse();
  while (stack.length > 0) {
    const node = stack.pop()!;
    if (node.type === 'text') {
      text += node.data;
      if (text.length > max * 3) return '';
    } else if (node.type === 'tag') for (let i = node.children.length - 1; i >= 0; i -= 1) stack.push(node.children[i]!);
  }
  const squashed = text.replace(/\s+/g, ' ').trim();
  return squashed.length > max ? '' : squashed;
}
