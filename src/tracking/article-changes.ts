// Change detection for articles, pure: an article's title and body against its latest revision -> the event that difference makes.

/** What an article was (its latest revision; null when it has none) and what a write left it as. */
export interface ArticleSighting {
  article_id: number;
  url: string;
  before: { title: string; body: string | null } | null;
  seen: { title: string; body: string | null; word_count: number | null };
}

export type ArticleField = 'title' | 'body';

export type ArticleChange =
  | { type: 'article.created'; data: { title: string; url: string; has_body: boolean; word_count: number | null } }
  | {
      type: 'article.updated';
      data: { changed: ArticleField[]; title: string; old_title?: string; url: string; word_count: number | null; body_filled?: boolean };
    };

/** Which of the tracked fields differ: the title, the body (a body first read counts: a listing's entry whose page was read). */
export function changedFields(before: ArticleSighting['before'], seen: ArticleSighting['seen']): ArticleField[] {
  if (before === null) return [];
  const changed: ArticleField[] = [];
  if (before.title !== seen.title) changed.push('title');
  if (before.body !== seen.body) changed.push('body');
  return changed;
}

/** The event of one sighting, or null when nothing tracked changed. */
export function detectArticleChange(sighting: ArticleSighting): ArticleChange | null {
  const { before, seen, url } = sighting;
  if (before === null) return { type: 'article.created', data: { title: seen.title, url, has_body: seen.body !== null, word_count: seen.word_count } };
  const changed = changedFields(before, seen);
  if (changed.length === 0) return null;
  return {
    type: 'article.updated',
    data: {
      changed,
      title: seen.title,
      ...(changed.includes('title') ? { old_title: before.title } : {}),
      url,
      word_count: seen.word_count,
      ...(before.body === null && seen.body !== null ? { body_filled: true } : {}),
    },
  };
}
