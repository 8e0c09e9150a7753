// The one door for a run's writes: a transaction in which a run records what it saw (products, then articles), whose events are published once it has committed.
import type { Article } from '../articles/article-schema.js';
import type { ScrapedArticle } from '../articles/article-store.js';
import type { Database, Queryable } from '../db/queryable.js';
import type { Product } from '../products/product-schema.js';
import type { ScrapedProduct } from '../products/product-upsert.js';
import type { LiveEvents } from '../tracking/live-events.js';
import type { RunRef, StoredEvent } from '../tracking/tracking-store.js';
import type { ArticleRecorder } from './article-recorder.js';
import type { ProductRecorder } from './product-recorder.js';

/** What a run saw, as the stores keep it. */
export interface RunSighting {
  products: readonly ScrapedProduct[];
  articles: readonly ScrapedArticle[];
}

/** What a run's write stored. */
export interface WrittenRun {
  products: Product[];
  created: number;
  updated: number;
  articles: Article[];
  articlesCreated: number;
  articlesUpdated: number;
}

/** The writes a run makes inside the writer's transaction. */
export interface RunWrites {
  /**
   * Stores what `run` saw: its products with their history, events, alert firings and deliveries,
   * then its articles likewise. `complete`: the run read its source to the end, so the source's
   * products it did not see have missed a run.
   */
  record(seen: RunSighting, run: RunRef, options?: { complete?: boolean }): Promise<WrittenRun>;
  /** A run that ended well without writing products (a crawl's end): its source's unseen products missed it. */
  finish(run: RunRef): Promise<void>;
}

export interface RunWriter {
  /**
   * Runs `work` in one transaction, with the run's writes and the transaction for the caller's own
   * statements (a crawl page's bookkeeping). Every event written is published once the transaction
   * has committed; none when it rolls back.
   */
  transaction<T>(work: (writes: RunWrites, tx: Queryable) => Promise<T>): Promise<T>;
}

export interface RunWriterDeps {
  db: Database;
  products: Pick<ProductRecorder, 'recordScraped' | 'finishRun'>;
  articles: Pick<ArticleRecorder, 'recordArticles'>;
  live: Pick<LiveEvents, 'published'>;
}

export function createRunWriter(deps: RunWriterDeps): RunWriter {
  return {
    async transaction(work) {
      let events: StoredEvent[] = [];
      const result = await deps.db.transaction((tx) => {
        events = [];
        const writes: RunWrites = {
          async record(seen, run, options = {}) {
            const products = await deps.products.recordScraped(seen.products, run, tx, options);
            const articles = await deps.articles.recordArticles(seen.articles, run, tx);
            for (const event of products.events) events.push(event);
            for (const event of articles.events) events.push(event);
            return {
              products: products.products,
              created: products.created,
              updated: products.updated,
              articles: articles.articles,
              articlesCreated: articles.created,
              articlesUpdated: articles.updated,
            };
          },
          async finish(run) {
            for (const event of await deps.products.finishRun(run, tx)) events.push(event);
          },
        };
        return work(writes, tx);
      });
      deps.live.published(events);
      return result;
    },
  };
}
