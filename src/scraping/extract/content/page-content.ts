// A page's main content as text and Markdown: an article's body where the page is one, else the page minus its furniture.
import type { ExtractedArticle, PageType } from '../types.js';
import { extractArticleBody } from '../article/article-body.js';
import { sanitizeBodyHtml } from '../article/sanitize-body-html.js';
import { mainContent } from './main-content.js';
import { toMarkdown } from './markdown.js';

/**
 * Each of `content` and `markdown` keeps at most this many characters, cut at a paragraph: a page's main
 * content is rarely a tenth of it, and a log or an answer must stay bounded whatever a page holds.
 */
export const MAX_CONTENT_CHARS = 200_000;

export interface PageContent {
  content: string;
  markdown: string;
}

export function pageContent(html: string, pageType: PageType, pageUrl: string, article: ExtractedArticle | undefined): PageContent {
  if (pageType === 'article' && article?.body) return bounded({ content: article.body, markdown: toMarkdown(article.body_html ?? '') || article.body });
  // A manual's page reads like an article: its text block, without the sidebar and table of contents around it.
  if (pageType === 'documentation') {
    const body = extractArticleBody(html);
    if (body !== null) return bounded({ content: body.text, markdown: toMarkdown(sanitizeBodyHtml(body.html, pageUrl)) || body.text });
  }
  const main = mainContent(html, pageType, pageUrl);
  return main === null ? { content: '', markdown: '' } : bounded({ content: main.text, markdown: toMarkdown(main.html) });
}

function bounded(content: PageContent): PageContent {
  return { content: cut(content.content), markdown: cut(content.markdown) };
}

/** At most MAX_CONTENT_CHARS, ending at the last paragraph break before the bound when there is one. */
export function cut(text: string): string {
  if (text.length <= MAX_CONTENT_CHARS) return text;
  const head = text.slice(0, MAX_CONTENT_CHARS);
  const paragraph = head.lastIndexOf('\n\n');
  return paragraph > MAX_CONTENT_CHARS / 2 ? head.slice(0, paragraph) : head;
}
