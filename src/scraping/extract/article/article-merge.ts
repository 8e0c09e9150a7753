// The merge step for articles: candidates that describe the page's article become one, each field from the most trusted source that states it usably.
import { textStats } from '../../../text/text-stats.js';
import { MAX_DESCRIPTION_CHARS, MAX_TITLE_CHARS, cleanText, truncate } from '../dom-helpers.js';
import { authorNames, isoDate, languageTag, tagList } from './article-values.js';
import { boundedLocator } from '../merge.js';
import { paragraphsHtml } from './sanitize-body-html.js';
import type { ArticleCandidate, ArticleFieldName, ArticleFields, ExplainedArticle, ExtractedArticle, FieldDecision, FieldProvenance, Source } from '../types.js';

/**
 * Order of trust per field, most trusted first. Data the site publishes for machines (JSON-LD, microdata,
 * RDFa) comes first, then its share tags (Open Graph, article:*), then other meta tags (Dublin Core,
 * Twitter, names CMSs use), then what the visible page shows. Two fields differ: the title a reader
 * sees (the h1) is trusted over share tags, which often append the site's name; and the URL is the
 * canonical link's before anything else, as it is the article's identity.
 */
export const ARTICLE_TRUST: Readonly<Record<Exclude<ArticleFieldName, 'body' | 'body_html'>, readonly Source[]>> = {
  title: ['json-ld', 'microdata', 'rdfa', 'visible', 'opengraph', 'meta', 'article-list'],
  description: ['json-ld', 'microdata', 'rdfa', 'opengraph', 'meta', 'article-list'],
  authors: ['json-ld', 'microdata', 'rdfa', 'opengraph', 'meta', 'visible'],
  published_at: ['json-ld', 'microdata', 'rdfa', 'opengraph', 'meta', 'visible', 'article-list'],
  modified_at: ['json-ld', 'microdata', 'rdfa', 'opengraph', 'meta', 'visible'],
  language: ['json-ld', 'microdata', 'rdfa', 'meta', 'opengraph'],
  site_name: ['opengraph', 'json-ld', 'microdata', 'rdfa', 'meta'],
  image_url: ['json-ld', 'microdata', 'rdfa', 'opengraph', 'meta', 'article-list'],
  section: ['json-ld', 'microdata', 'rdfa', 'opengraph', 'meta'],
  tags: ['json-ld', 'microdata', 'rdfa', 'opengraph', 'meta'],
  url: ['meta', 'opengraph', 'json-ld', 'microdata', 'rdfa', 'article-list'],
};

/**
 * A body the page publishes as data (JSON-LD `articleBody`) is often cut to a teaser or padded with
 * other text; the text read from the page wins unless it holds less than this share of that body's words.
 */
const MIN_PAGE_BODY_SHARE = 0.4;
/** Bodies shorter than this are teasers, not a body to prefer. */
const MIN_DATA_BODY_WORDS = 80;
const MAX_URL_CHARS = 2048;
const MAX_SHORT_TEXT_CHARS = 200;

export interface MergedArticle {
  article: ExtractedArticle;
  explained?: ExplainedArticle;
}

/**
 * One article from the candidates that describe it: each field from the most trusted candidate whose
 * value is usable (a date that parses, a language tag that is one). The body comes from the page text
 * (`bodyHtml` is its HTML, already sanitized) unless the page's data holds a fuller one. Null without a title.
 */
export function mergeArticle(group: readonly ArticleCandidate[], bodyHtml: string | null, explain = false): MergedArticle | null {
  const chosen: Partial<ArticleFields> = {};
  const provenance: ExtractedArticle['provenance'] = {};
  const decisions: ExplainedArticle['fields'] = {};
  const record = (field: ArticleFieldName, from: ArticleCandidate, value: unknown, why: string, ordered: readonly ArticleCandidate[]) => {
    (chosen as Record<string, unknown>)[field] = value;
    const locator = from.fields[field]!.locator;
    provenance[field] = { source: from.source, locator: boundedLocator(locator) } satisfies FieldProvenance;
    if (!explain) return;
    decisions[field] = {
      chosen: { source: from.source, locator, value: preview(value) },
      why,
      others: ordered.flatMap((c) =>
        c === from || c.fields[field] === undefined ? [] : [{ source: c.source, locator: c.fields[field]!.locator, value: preview(c.fields[field]!.value) }],
      ),
    } satisfies FieldDecision;
  };

  for (const [field, order] of Object.entries(ARTICLE_TRUST) as Array<[keyof typeof ARTICLE_TRUST, readonly Source[]]>) {
    const ordered = group.filter((c) => c.fields[field] !== undefined && order.includes(c.source)).sort((a, b) => order.indexOf(a.source) - order.indexOf(b.source));
    const rejected: string[] = [];
    for (const [index, c] of ordered.entries()) {
      const value = finish(field, c.fields[field]!.value);
      if (value === null) {
        rejected.push(`${c.source} states "${String(c.fields[field]!.value).slice(0, 60)}", which is not a usable ${field.replace('_', ' ')}`);
        continue;
      }
      const others = new Set(
        ordered
          .slice(index + 1)
          .filter((o) => o.source !== c.source)
          .map((o) => o.source),
      );
      const lead =
        others.size > 0
          ? `${c.source} is trusted over ${[...others].join(', ')}`
          : rejected.length > 0
            ? `${c.source} states the only usable value`
            : `${c.source} is the only source that states it`;
      const why = [lead, ...rejected].join('; ');
      record(field, c, value, why, ordered);
      break;
    }
  }
  if (chosen.title === undefined) return null;

  const body = chooseBody(group);
  if (body !== null) {
    record(
      'body',
      body.from,
      body.text,
      body.why,
      group.filter((c) => c.fields.body !== undefined),
    );
    const html = body.from.source === 'article-body' ? bodyHtml : paragraphsHtml(body.text);
    if (html !== null && html !== '') {
      chosen.body_html = html;
      provenance.body_html = provenance.body;
    }
  }

  const article: ExtractedArticle = {
    url: chosen.url ?? null,
    title: chosen.title,
    body: chosen.body ?? null,
    body_html: chosen.body_html ?? null,
    description: chosen.description ?? null,
    authors: chosen.authors ?? [],
    published_at: chosen.published_at ?? null,
    modified_at: chosen.modified_at ?? null,
    language: chosen.language ?? null,
    site_name: chosen.site_name ?? null,
    image_url: chosen.image_url ?? null,
    section: chosen.section ?? null,
    tags: chosen.tags ?? [],
    word_count: chosen.body === undefined ? null : textStats(chosen.body, { topWords: 0 }).word_count,
    provenance,
  };
  if (!explain) return { article };
  return {
    article,
    explained: {
      title: article.title,
      fields: decisions,
      merged: group.map((c) => ({ source: c.source, locator: c.locator })),
    },
  };
}

/** The page's text, unless the page's data (articleBody) is a fuller body and the page text a fragment of it. */
function chooseBody(group: readonly ArticleCandidate[]): { from: ArticleCandidate; text: string; why: string } | null {
  const page = group.find((c) => c.source === 'article-body' && c.fields.body !== undefined);
  const data = group.find((c) => c.source !== 'article-body' && c.fields.body !== undefined);
  const words = (c: ArticleCandidate | undefined) => (c?.fields.body === undefined ? 0 : countWords(c.fields.body.value));
  if (page === undefined && data === undefined) return null;
  if (page === undefined) return { from: data!, text: data!.fields.body!.value, why: `only ${data!.source} states a body (the page's text could not be read as one)` };
  if (data === undefined) return { from: page, text: page.fields.body!.value, why: 'the main text of the page, with its furniture removed' };
  const pageWords = words(page);
  const dataWords = words(data);
  if (dataWords >= MIN_DATA_BODY_WORDS && pageWords < MIN_PAGE_BODY_SHARE * dataWords) {
    return { from: data, text: data.fields.body!.value, why: `the page's text (${pageWords} words) is a fragment of the ${data.source} articleBody (${dataWords} words)` };
  }
  return {
    from: page,
    text: page.fields.body!.value,
    why: `the page's text (${pageWords} words) is trusted over the ${data.source} articleBody (${dataWords} words), which sites often cut short or pad`,
  };
}

function countWords(text: string): number {
  return text.split(/\s+/).filter((w) => w !== '').length;
}

/** A value as stored, or null when it is not usable as this field. */
function finish(field: keyof typeof ARTICLE_TRUST, value: unknown): unknown {
  if (Array.isArray(value)) {
    const list = field === 'authors' ? authorNames(value as string[]) : tagList(value as string[]);
    return list.length === 0 ? null : list;
  }
  if (typeof value !== 'string') return null;
  switch (field) {
    case 'published_at':
    case 'modified_at':
      return isoDate(value);
    case 'language':
      return languageTag(value);
    case 'url':
    case 'image_url':
      return value.length <= MAX_URL_CHARS && /^https?:\/\//i.test(value) ? value : null;
    default: {
      const text = cleanText(value);
      if (text === '') return null;
      return truncate(text, field === 'title' ? MAX_TITLE_CHARS : field === 'description' ? MAX_DESCRIPTION_CHARS : MAX_SHORT_TEXT_CHARS);
    }
  }
}

/** Explain shows the start of a long text (a body) rather than all of it. */
function preview(value: unknown): unknown {
  return typeof value === 'string' && value.length > 300 ? `${value.slice(0, 300)}… (${value.length} characters)` : value;
}
