// The write path of articles, top to bottom: the article store, their tags, then revisions and change detection, then the events, then their webhook deliveries.
import type { Queryable } from '../db/queryable.js';
import type { Article } from '../articles/article-schema.js';
import type { ArticleStore, ScrapedArticle } from '../articles/article-store.js';
import type { ArticleRevisions } from '../tracking/article-revisions.js';
import type { RunRef, StoredEvent, Tracker } from '../tracking/tracking-store.js';
import type { WebhookDeliveries } from '../tracking/webhook-deliveries.js';
import type { TagStore } from '../tags/tag-store.js';

export interface RecordedArticles {
  articles: Article[];
  created: number;
  updated: number;
  /** The events the write appended: publish them once the transaction has committed. */
  events: StoredEvent[];
}

export interface ArticleRecorder {
  /**
   * In `tx` (the caller's: a run's or a crawl page's, the same that stores its products): stores the
   * articles `run` saw, a revision where a title or body changed, the events that makes, and a
   * webhook delivery per listening webhook.
   */
  recordArticles(items: readonly ScrapedArticle[], run: RunRef, tx: Queryable): Promise<RecordedArticles>;
}

export interface ArticleRecorderDeps {
  articles: Pick<ArticleStore, 'upsertScraped'>;
  revisions: Pick<ArticleRevisions, 'record'>;
  tracker: Pick<Tracker, 'append'>;
  deliveries: Pick<WebhookDeliveries, 'fanOut'>;
  /** Every article a run saw gets the run's tags and its source's, as its products do. */
  tags: Pick<TagStore, 'runTagging'>;
}

export function createArticleRecorder(deps: ArticleRecorderDeps): ArticleRecorder {
  return {
    async recordArticles(items, run, tx) {
      if (items.length === 0) return { articles: [], created: 0, updated: 0, events: [] };
      // Tags with the rows, in the upsert's statement.
      const tagging = await deps.tags.runTagging('article', run, tx);
      const stored = await deps.articles.upsertScraped(items, { runId: run.id, sourceUrl: run.source, sourceKey: run.source }, tx, tagging);
      // Revisions lock nothing new (the upsert holds the article rows); the events come last.
      const pending = await deps.revisions.record(
        stored.articles.map((a) => a.id),
        run,
        tx,
      );
      const events = pending.length === 0 ? [] : await deps.tracker.append(pending, tx);
      await deps.deliveries.fanOut(events, tx);
      return { articles: stored.articles, created: stored.created, updated: stored.updated, events };
    },
  };
}
