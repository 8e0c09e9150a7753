// schema.org Article, NewsArticle, BlogPosting (and kin), however they were written, read into article candidates.
import { cleanText } from '../dom-helpers.js';
import { first, imageOf, nameOf, text, urlOf, urlValue, type SdoNode, type SdoValue } from './sdo-node.js';
import type { ArticleCandidate, ArticleCandidateFields, Located, Source } from '../types.js';

/** Types whose node is an article (the Article family, and reviews, which are articles about a thing). */
export const ARTICLE_TYPES: ReadonlySet<string> = new Set([
  'article',
  'newsarticle',
  'blogposting',
  'reportagenewsarticle',
  'opinionnewsarticle',
  'analysisnewsarticle',
  'backgroundnewsarticle',
  'reviewnewsarticle',
  'askpublicnewsarticle',
  'techarticle',
  'scholarlyarticle',
  'medicalscholarlyarticle',
  'report',
  'liveblogposting',
  'socialmediaposting',
  'discussionforumposting',
  'advertisercontentarticle',
  'satiricalarticle',
  'review',
  'criticreview',
  'employerreview',
  'userreview',
]);

export function isArticleNode(node: SdoNode): boolean {
  return node.types.some((t) => ARTICLE_TYPES.has(t));
}

/** More names than a byline holds; a list this long is a page's whole staff. */
const MAX_AUTHORS = 20;
const MAX_TAGS = 50;

/** An article candidate from one schema.org node; null without a headline, a name or a body. */
export function articleCandidate(node: SdoNode, source: Source, pageUrl: string, main: boolean): ArticleCandidate | null {
  const fields: ArticleCandidateFields = {};
  const title = text(first(node, 'headline')) ?? text(first(node, 'name')) ?? text(first(node, 'alternativeHeadline'));
  if (title !== null) fields.title = title;
  // A body written as text; markup would have `shown` text, which is the same words.
  const body = bodyText(first(node, 'articleBody') ?? first(node, 'reviewBody') ?? first(node, 'text'));
  if (body !== null) fields.body = body;
  if (fields.title === undefined && fields.body === undefined) return null;
  const description = text(first(node, 'description')) ?? text(first(node, 'abstract'));
  if (description !== null) fields.description = description;
  const authors = names([...(node.props.get('author') ?? []), ...(node.props.get('creator') ?? [])]);
  if (authors !== null) fields.authors = authors;
  const published = text(first(node, 'datePublished')) ?? text(first(node, 'dateCreated'));
  if (published !== null) fields.published_at = published;
  const modified = text(first(node, 'dateModified'));
  if (modified !== null) fields.modified_at = modified;
  const language = text(first(node, 'inLanguage'));
  if (language !== null) fields.language = language;
  const publisher = nameOf(first(node, 'publisher')) ?? nameOf(first(node, 'isPartOf'));
  if (publisher !== null) fields.site_name = publisher;
  const image = imageOf(first(node, 'image'), pageUrl) ?? imageOf(first(node, 'thumbnailUrl'), pageUrl);
  if (image !== null) fields.image_url = image;
  const section = text(first(node, 'articleSection'));
  if (section !== null) fields.section = section;
  const tags = keywords(node.props.get('keywords') ?? []);
  if (tags !== null) fields.tags = tags;
  // mainEntityOfPage names the page the article is the main thing on: its address when no url is given.
  const page = first(node, 'mainEntityOfPage');
  const url = urlOf(node, pageUrl) ?? (page?.kind === 'node' ? urlOf(page, pageUrl) : urlValue(page, pageUrl));
  if (url !== null) fields.url = url;
  const type = node.types.find((t) => ARTICLE_TYPES.has(t));
  return { source, locator: node.locator, scope: 'item', ...(main ? { main: true } : {}), ...(type === undefined ? {} : { type }), fields };
}

/** An articleBody keeps its paragraph breaks (JSON strings carry "\n"); only runs of spaces collapse. */
function bodyText(value: SdoValue | undefined): Located<string> | null {
  if (value?.kind !== 'text') return null;
  const paragraphs = (value.shown ?? value.value)
    .replace(/\u0000/g, '')
    .split(/\n\s*\n|\r\n\s*\r\n/)
    .map((p) =>
      p
        .split('\n')
        .map(cleanText)
        .filter((line) => line !== '')
        .join('\n'),
    )
    .filter((p) => p !== '');
  return paragraphs.length === 0 ? null : { value: paragraphs.join('\n\n'), locator: value.locator };
}

/** Authors as names: a Person's or Organization's `name`, or plain text; each once. */
function names(values: readonly SdoValue[]): Located<string[]> | null {
  const found: string[] = [];
  let locator: string | null = null;
  for (const value of values) {
    const name = nameOf(value);
    if (name === null || /^https?:\/\//i.test(name.value)) continue;
    if (!found.some((f) => f.toLowerCase() === name.value.toLowerCase())) found.push(name.value);
    locator ??= value.kind === 'node' ? value.locator : name.locator;
    if (found.length >= MAX_AUTHORS) break;
  }
  return locator === null ? null : { value: found, locator };
}

/** `keywords` is a list, or one text of comma-separated words. */
function keywords(values: readonly SdoValue[]): Located<string[]> | null {
  const found: string[] = [];
  let locator: string | null = null;
  for (const value of values) {
    const words = text(value);
    if (words === null) continue;
    locator ??= words.locator;
    for (const word of words.value.split(',').map(cleanText)) {
      if (word !== '' && !found.some((f) => f.toLowerCase() === word.toLowerCase())) found.push(word);
    }
    if (found.length >= MAX_TAGS) break;
  }
  return locator === null ? null : { value: found.slice(0, MAX_TAGS), locator };
}
