// A small news site on 127.0.0.1 for the article tests: a front page of teasers and a page per story, each story changeable between requests.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Story {
  slug: string;
  title: string;
  /** Paragraphs of the story's text. */
  paragraphs: string[];
  summary: string;
  authors: string[];
  published: string;
  modified?: string;
  /** The html lang of the page. */
  language: string;
  section: string;
  tags: string[];
  /** Raw HTML put inside the story's body as it is (hostile markup, a script...). */
  extraHtml?: string;
  /** On the front page. */
  listed?: boolean;
}

export interface NewsSite {
  /** Base URL with a trailing slash. */
  url: string;
  stories: Map<string, Story>;
  /** Other pages, served as they are, by path. */
  pages: Map<string, string>;
  storyUrl(slug: string): string;
  /** Requests per path. */
  hits: Map<string, number>;
  close(): Promise<void>;
}

const htmlText = (text: string) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

/** A story page as news sites write them: JSON-LD NewsArticle, Open Graph and article:* tags, a byline, the text, related links and comments. */
export function storyPage(story: Story, url: string, siteName = 'Harbour Gazette'): string {
  const jsonLd = {
    '@context': 'https://schema.org',
    '@type': 'NewsArticle',
    headline: story.title,
    description: story.summary,
    datePublished: story.published,
    ...(story.modified === undefined ? {} : { dateModified: story.modified }),
    author: story.authors.map((name) => ({ '@type': 'Person', name })),
    articleSection: story.section,
    keywords: story.tags.join(', '),
    inLanguage: story.language,
    mainEntityOfPage: url,
    url,
    publisher: { '@type': 'Organization', name: siteName },
  };
  return `<!doctype html>
<html lang="${story.language}">
<head>
<meta charset="utf-8">
<title>${htmlText(story.title)} | ${siteName}</title>
<link rel="canonical" href="${url}">
<meta name="description" content="${htmlText(story.summary)}">
<meta property="og:type" content="article">
<meta property="og:site_name" content="${siteName}">
<meta property="og:title" content="${htmlText(story.title)}">
<meta property="og:url" content="${url}">
<meta property="article:published_time" content="${story.published}">
<meta property="article:section" content="${htmlText(story.section)}">
${story.tags.map((t) => `<meta property="article:tag" content="${htmlText(t)}">`).join('\n')}
<script type="application/ld+json">${JSON.stringify(jsonLd).replace(/</g, '\\u003c')}</script>
</head>
<body>
<header class="masthead"><a href="/" class="logo">${siteName}</a><nav><a href="/">Home</a> <a href="/section/local">Local</a> <a href="/section/sport">Sport</a></nav></header>
<main>
<article class="story">
<h1>${htmlText(story.title)}</h1>
<p class="byline">By ${story.authors.map((a) => `<a rel="author" href="/authors/${encodeURIComponent(a)}">${htmlText(a)}</a>`).join(' and ')} · <time datetime="${story.published}">${story.published.slice(0, 10)}</time></p>
<div class="story-body">
${story.paragraphs.map((p) => `<p>${htmlText(p)}</p>`).join('\n')}
${story.extraHtml ?? ''}
</div>
<div class="share"><a href="https://share.example/?u=${encodeURIComponent(url)}">Share</a></div>
</article>
<aside class="related"><h2>Related stories</h2><ul><li><a href="/news/elsewhere-1">Another story from the coast</a></li><li><a href="/news/elsewhere-2">Council meets on Tuesday</a></li></ul></aside>
<section class="comments"><h2>Comments (1)</h2><article class="comment"><p>I saw it happen from the pier.</p></article></section>
</main>
<footer><p>© ${siteName}</p></footer>
</body>
</html>`;
}

/** The front page: one teaser per listed story, linking to its page. */
export function frontPage(stories: readonly Story[], base: string, siteName = 'Harbour Gazette'): string {
  const teasers = stories
    .map(
      (s) => `<div class="story-card">
  <h3 class="story-card__title"><a href="${base}news/${s.slug}">${htmlText(s.title)}</a></h3>
  <p class="story-card__summary">${htmlText(s.summary)}</p>
  <time datetime="${s.published}">${s.published.slice(0, 10)}</time>
</div>`,
    )
    .join('\n');
  return `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>${siteName} — news from the coast</title><meta property="og:type" content="website"><meta property="og:site_name" content="${siteName}"></head>
<body>
<header class="masthead"><a href="/" class="logo">${siteName}</a></header>
<main><section class="top-stories"><h2>Top stories</h2>
${teasers}
</section></main>
<footer><p>© ${siteName}</p></footer>
</body>
</html>`;
}

/** Words enough for the extractor to read a story's text as an article body. */
export function storyText(topic: string, paragraphs = 4): string[] {
  return Array.from(
    { length: paragraphs },
    (_, i) =>
      `Paragraph ${i + 1} about ${topic}: residents gathered along the front on Tuesday morning as the council's engineers ` +
      'measured the damage, walked the length of the promenade and spoke with the people whose homes and shops stand closest ' +
      'to the water, promising a full report before the end of the month and a public meeting soon after it.',
  );
}

export async function startNewsSite(initial: readonly Story[]): Promise<NewsSite> {
  const stories = new Map(initial.map((s) => [s.slug, s]));
  const hits = new Map<string, number>();
  const pages = new Map<string, string>();
  let base = '';
  const server: Server = createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://127.0.0.1').pathname;
    hits.set(path, (hits.get(path) ?? 0) + 1);
    const send = (status: number, body: string, type = 'text/html; charset=utf-8') => {
      res.writeHead(status, { 'content-type': type, 'content-length': Buffer.byteLength(body) });
      res.end(body);
    };
    if (path === '/robots.txt') return send(200, 'User-agent: *\nAllow: /\n', 'text/plain');
    if (path === '/')
      return send(
        200,
        frontPage(
          [...stories.values()].filter((s) => s.listed !== false),
          base,
        ),
      );
    const page = pages.get(path);
    if (page !== undefined) return send(200, page);
    const match = /^\/news\/([\w-]+)$/.exec(path);
    const story = match === null ? undefined : stories.get(match[1]!);
    if (story !== undefined) return send(200, storyPage(story, `${base}news/${story.slug}`));
    return send(404, '<!doctype html><title>Not found</title><p>Not found</p>');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  return {
    url: base,
    stories,
    pages,
    storyUrl: (slug) => `${base}news/${slug}`,
    hits,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
