// Every page's main content, by the structure of its type: what a reader came for is in `content` and `markdown`,
// the site's furniture is not; and the page type the second look gives (forum, documentation, service).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { extract } from '../../../src/scraping/extract/index.js';
import { MAX_CONTENT_CHARS } from '../../../src/scraping/extract/content/page-content.js';

const chrome = {
  header: '<header><a href="/">Lakeside</a><nav><a href="/a">Alpha</a> <a href="/b">Beta</a> <a href="/c">Gamma</a> <a href="/d">Delta</a></nav></header>',
  footer: '<footer><p>© Lakeside Ltd</p><ul><li><a href="/privacy">Privacy</a></li><li><a href="/terms">Terms</a></li><li><a href="/jobs">Jobs</a></li></ul></footer>',
  cookie: '<div class="cookie-banner"><p>We use cookies to remember your basket.</p><button>Accept all</button></div>',
};
const page = (title: string, body: string, head = '') =>
  `<!doctype html><html><head><title>${title}</title>${head}</head><body>${chrome.header}${chrome.cookie}${body}${chrome.footer}</body></html>`;
const words = (topic: string, n: number) => Array.from({ length: n }, (_, i) => `${topic} detail number ${i} explained carefully for readers`).join(' ');

interface Case {
  name: string;
  url: string;
  html: string;
  type: string;
  has: string[];
  hasNot: string[];
  markdown?: string[];
}

const CASES: Case[] = [
  {
    name: 'a forum thread: every post, its replies too',
    url: 'https://talk.example/threads/quiet-pumps.4411/',
    type: 'forum',
    html: page(
      'Quiet pumps for a garden pond',
      `<main><h1>Quiet pumps for a garden pond</h1>${['moss', 'reed', 'heron', 'carp']
        .map(
          (who, i) =>
            `<article class="message post"><div class="message-user"><span class="username">${who}</span></div><div class="message-body"><p>Post ${i + 1} by ${who}: ${words(`pump ${i}`, 6)}</p></div></article>`,
        )
        .join('')}</main>`,
    ),
    has: ['Post 1 by moss', 'Post 2 by reed', 'Post 3 by heron', 'Post 4 by carp'],
    hasNot: ['We use cookies', 'Privacy', 'Alpha'],
  },
  {
    name: 'a documentation page: its text and code, without the sidebar and the table of contents',
    url: 'https://lakeside.example/docs/guides/install',
    type: 'documentation',
    html: page(
      'Install – Lakeside docs',
      `<div class="docs-sidebar"><ul>${['Intro', 'Install', 'Configure', 'Deploy', 'Upgrade', 'FAQ'].map((s) => `<li><a href="/docs/${s.toLowerCase()}">${s}</a></li>`).join('')}</ul></div>
       <div class="docs-content"><article><h1>Install</h1><p>${words('install', 8)}</p><h2>From a package</h2><p>${words('package', 6)}</p>
       <pre><code class="language-sh">npm install lakeside</code></pre><h2>From source</h2><p>${words('source', 6)}</p><pre><code>make build</code></pre><pre><code>make test</code></pre></article></div>
       <nav class="toc"><p>On this page</p><ul><li><a href="#a">From a package</a></li><li><a href="#b">From source</a></li></ul></nav>`,
    ),
    has: ['From a package', 'npm install lakeside', 'From source', 'install detail number 3'],
    hasNot: ['Configure', 'Upgrade', 'On this page'],
    markdown: ['## From a package', '```sh\nnpm install lakeside\n```'],
  },
  {
    name: 'a pricing page in sections: every plan and every section',
    url: 'https://lakeside.example/pricing',
    type: 'service',
    html: page(
      'Pricing – Lakeside',
      `<main><section><h2>Plans for every team</h2><p>Start free, upgrade when your lake grows.</p></section>
       <section class="pricing"><h2>Plans</h2>${['Pond $0/month', 'Lake $12/month', 'Sea $49/month']
         .map(
           (p) =>
             `<div class="plan-card"><h3>${p.split(' ')[0]}</h3><p class="price">${p.split(' ')[1]}</p><ul><li>Boats: ${p.length}</li><li>Support by e-mail</li></ul><a href="/signup">Get started</a></div>`,
         )
         .join('')}</section>
       <section><h2>Questions</h2><p>Can I change plans? Yes, at any time, and we count the days.</p></section></main>`,
    ),
    has: ['Plans for every team', 'Pond', '$12/month', 'Sea', 'Can I change plans?'],
    hasNot: ['We use cookies', 'Privacy'],
    markdown: ['## Plans', '### Lake'],
  },
  {
    name: 'a product with a specification table and tabs: the description and the specifications',
    url: 'https://shop.example/p/kettle-17',
    type: 'product',
    html: page(
      'Copper kettle 1.7 l',
      `<main><h1>Copper kettle 1.7 l</h1><span class="price">€64.90</span><button>Add to basket</button><p class="stock">In stock</p>
       <div class="tabs"><button>Description</button><button>Specifications</button></div>
       <div class="tab-panel"><p>A copper kettle that boils a litre in three minutes, with a whistle you can switch off.</p></div>
       <div class="tab-panel"><table><tr><th>Capacity</th><td>1.7 l</td></tr><tr><th>Power</th><td>2200 W</td></tr><tr><th>Weight</th><td>1.1 kg</td></tr></table></div></main>`,
    ),
    has: ['boils a litre in three minutes', 'Capacity', '2200 W', '€64.90'],
    hasNot: ['We use cookies', 'Privacy', 'Alpha'],
    markdown: ['| Capacity | 1.7 l |'],
  },
  {
    name: 'a collection with filters: every card, not the filters',
    url: 'https://shop.example/c/kettles',
    type: 'listing',
    html: page(
      'Kettles',
      `<aside class="filters"><h2>Filter</h2><ul>${['Copper', 'Steel', 'Glass', 'Under €50', 'Over €50'].map((f) => `<li><a href="?f=${f}">${f}</a></li>`).join('')}</ul></aside>
       <main><h1>Kettles</h1><div class="grid">${['Copper kettle', 'Steel kettle', 'Glass kettle', 'Travel kettle']
         .map((t, i) => `<div class="card"><a href="/p/${i}"><h3>${t}</h3></a><span class="price">€${40 + i * 10}.00</span><button>Add to basket</button></div>`)
         .join('')}</div></main>`,
    ),
    has: ['Copper kettle', 'Steel kettle', 'Glass kettle', 'Travel kettle', '€70.00'],
    hasNot: ['Under €50', 'Filter', 'We use cookies'],
  },
];

for (const c of CASES) {
  test(c.name, () => {
    const result = extract(c.html, c.url, { explain: true });
    assert.equal(result.page_type, c.type, JSON.stringify(result.explanation?.page_type.reasons));
    for (const text of c.has) assert.ok(result.content.includes(text), `content has "${text}":\n${result.content}`);
    for (const text of c.hasNot) assert.ok(!result.content.includes(text), `content has not "${text}":\n${result.content}`);
    for (const text of c.markdown ?? []) assert.ok(result.markdown.includes(text), `markdown has "${text}":\n${result.markdown}`);
    assert.ok(!/<\/?[a-z]+[\s>]/i.test(result.markdown), `markdown without HTML tags:\n${result.markdown}`);
  });
}

test('links and images in the Markdown are absolute, and a script link is left as its text', () => {
  const html = page(
    'Notes',
    `<main><h1>Notes</h1><p>${words('notes', 8)} See <a href="/guide">the guide</a> and <a href="javascript:alert(1)">this</a>.</p><p><img src="img/lake.png" alt="The lake at dawn"></p></main>`,
  );
  const { markdown } = extract(html, 'https://lakeside.example/about/notes', {});
  assert.match(markdown, /\[the guide\]\(https:\/\/lakeside\.example\/guide\)/);
  assert.match(markdown, /!\[The lake at dawn\]\(https:\/\/lakeside\.example\/about\/img\/lake\.png\)/);
  assert.ok(!markdown.includes('javascript:'));
});

test('a page without text has no content, and a huge one is cut at a paragraph within the bound', () => {
  assert.deepEqual([extract('<html><body></body></html>', 'https://x.example/').content], ['']);
  const para = `<p>${'lake '.repeat(199)}lake</p>`;
  const { content, markdown } = extract(page('Long', `<main>${para.repeat(400)}</main>`), 'https://x.example/long', {});
  for (const text of [content, markdown]) {
    assert.ok(text.length <= MAX_CONTENT_CHARS && text.length > MAX_CONTENT_CHARS / 2, String(text.length));
    assert.ok(text.endsWith('lake'));
  }
});

test('a stray <![CDATA[ in the HTML ends at its first ">" as browsers read it, not with the rest of the page', () => {
  const posts = ['wren', 'finch', 'robin'].map(
    (who, i) => `<div class="message post"><span class="username">${who}</span><p>Reply ${i + 1} from ${who}: ${words('feeder', 5)}</p></div>`,
  );
  const html = page('Bird feeders', `<main><h1>Bird feeders</h1>${posts[0]}<![CDATA[ if (a > b) ${posts[1]}${posts[2]}</main>`);
  const { content } = extract(html, 'https://forum.example/threads/bird-feeders.77/', {});
  for (const text of ['Reply 1 from wren', 'Reply 2 from finch', 'Reply 3 from robin']) assert.ok(content.includes(text), `${text} in:\n${content}`);
});
