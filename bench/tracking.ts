// Tracking benches: what history costs a re-scrape that changes nothing, and reading history and events at size.
import { createAlertEvaluator } from '../src/alerts/rules/alert-evaluator.js';
import { createChannelStore } from '../src/alerts/channels/channel-store.js';
import { createDeliveryStore } from '../src/alerts/delivery/delivery-store.js';
import { createFiringStore } from '../src/alerts/rules/firing-store.js';
import { createRuleStore } from '../src/alerts/rules/rule-store.js';
import { createTagStore } from '../src/tags/tag-store.js';
import { createPostgresDatabase } from '../src/db/database.js';
import type { ScrapedProduct } from '../src/products/product-upsert.js';
import { createProductStore } from '../src/products/product-store.js';
import { createProductRecorder } from '../src/recording/product-recorder.js';
import { createLiveEvents } from '../src/tracking/live-events.js';
import { createTracker } from '../src/tracking/tracking-store.js';
import { createWebhookDeliveries } from '../src/tracking/webhook-deliveries.js';
import { createWebhookStore } from '../src/tracking/webhook-store.js';
import { median } from './client.js';
import type { BenchDatabase } from './database.js';
import { measureOne, type LoadOptions, type LoadResult } from './http.js';

export interface RescrapeFigures {
  products: number;
  rounds: number;
  /** The upsert without tracking (what every scrape did before history existed), ms per batch. */
  plainMedianMs: number;
  /** The same upsert recording history and events for a run of a source, ms per batch. */
  trackedMedianMs: number;
  ratio: number;
  /** Rows the tracked re-scrapes added to price_observations and events: growth with repetition. */
  observationsAdded: number;
  eventsAdded: number;
}

export interface ReadFigures {
  endpoint: string;
  result: LoadResult;
}

const items = (prefix: string, count: number): ScrapedProduct[] =>
  Array.from({ length: count }, (_, i) => ({
    scrape_key: `https://bench.local/${prefix}/${i}`,
    title: `Bench lamp ${i}`,
    price: 10 + (i % 50),
    currency: 'GBP',
    description: null,
    source_url: `https://bench.local/${prefix}/${i}`,
    list_price: i % 3 === 0 ? 70 : null,
    availability: i % 7 === 0 ? 'out_of_stock' : 'in_stock',
    sku: `SKU-${i}`,
  }));

/**
 * A re-scrape of `count` unchanged products: the upsert as it was before tracking beside the same
 * batch with history and events, in alternating rounds on the same database.
 */
export async function measureRescrape(databaseUrl: string, count: number, rounds: number): Promise<RescrapeFigures> {
  const db = createPostgresDatabase(databaseUrl, { max: 2 });
  try {
    const tracker = createTracker(db, { goneAfterRuns: 3 });
    // Nothing subscribes in this database, so no delivery is ever queued: a queue that refuses shows it.
    const queue = {
      enqueue: async (_name: string, messages: readonly unknown[]) => {
        if (messages.length > 0) throw new Error('the re-scrape bench queued a delivery');
      },
    };
    const deliveries = createWebhookDeliveries({ webhooks: createWebhookStore(db), queue });
    // No rule exists either: what the write path pays for alerts when nobody set one up.
    const alerts = createAlertEvaluator({
      rules: createRuleStore(db),
      firings: createFiringStore(db),
      channels: createChannelStore(db),
      deliveries: createDeliveryStore(db),
      queue,
    });
    const products = createProductStore(db);
    const recorder = createProductRecorder({ db, products, tracker, deliveries, tags: createTagStore(db), alerts, live: createLiveEvents() });
    const plainItems = items('plain', count);
    const trackedItems = items('tracked', count);
    const source = 'https://bench.local/tracked';
    const plain = () => db.transaction((tx) => products.upsertScraped(plainItems, { runId: null, source: null }, tx));
    const tracked = (round: number) => db.transaction((tx) => recorder.recordScraped(trackedItems, { id: `bench-${round}`, source, kind: 'scrape' }, tx, { complete: true }));
    await plain();
    await tracked(0);
    const countRows = async () => {
      const [row] = await db.query<{ observations: number; events: number }>(
        'SELECT (SELECT count(*) FROM price_observations)::int AS observations, (SELECT count(*) FROM events)::int AS events',
      );
      return row!;
    };
    const before = await countRows();
    const plainMs: number[] = [];
    const trackedMs: number[] = [];
    for (let round = 1; round <= rounds; round++) {
      let started = performance.now();
      await plain();
      plainMs.push(performance.now() - started);
      started = performance.now();
      await tracked(round);
      trackedMs.push(performance.now() - started);
    }
    const after = await countRows();
    const plainMedianMs = median(plainMs);
    const trackedMedianMs = median(trackedMs);
    return {
      products: count,
      rounds,
      plainMedianMs,
      trackedMedianMs,
      ratio: trackedMedianMs / plainMedianMs,
      observationsAdded: after.observations - before.observations,
      eventsAdded: after.events - before.events,
    };
  } finally {
    await db.close();
  }
}

/**
 * One product with `points` history points and `events` change events in the database, written
 * by SQL (a year of hourly changes would take a year to scrape).
 */
export async function seedTracking(db: BenchDatabase, points: number, events: number): Promise<{ productId: number }> {
  const [product] = (
    await db.query(
      `INSERT INTO products (title, price, currency, scrape_key, source_url, last_seen_at, last_run, source_key)
       VALUES ('Bench history lamp', 10, 'GBP', 'https://bench.local/history', 'https://bench.local/history', now(), 'run-last', 'https://bench.local')
       RETURNING id`,
    )
  ).rows as Array<{ id: number }>;
  const id = product!.id;
  await db.query(
    `INSERT INTO price_observations (product_id, price, currency, list_price, availability, first_seen_at, first_run, last_seen_at, last_run, source)
     SELECT $1, 10 + (i % 17), 'GBP', NULL, CASE WHEN i % 5 = 0 THEN 'out_of_stock' ELSE 'in_stock' END,
            now() - make_interval(hours => $2 - i + 1), 'run-' || i,
            CASE WHEN i = $2 THEN NULL ELSE now() - make_interval(hours => $2 - i) - interval '1 minute' END,
            CASE WHEN i = $2 THEN NULL ELSE 'run-' || i END, 'scrape'
       FROM generate_series(1, $2) AS i`,
    [id, points],
  );
  await db.query(
    `INSERT INTO events (type, product_id, source, run_id, data, created_at)
     SELECT (ARRAY['price.changed', 'availability.changed', 'product.created', 'product.gone'])[1 + i % 4], $1, 'https://bench.local',
            'run-' || (i / 1000), jsonb_build_object('old', 10 + i % 7, 'new', 10 + i % 5, 'currency', 'GBP', 'via', 'scrape'),
            now() - make_interval(secs => ($2 - i) * 30)
       FROM generate_series(1, $2) AS i`,
    [id, events],
  );
  await db.query('ANALYZE products, price_observations, events');
  return { productId: id };
}

/** GET /products/{id}/history and GET /events pages at depth, each on its own, at `options.connections`. */
export async function measureTrackingReads(mainUrl: string, pid: number | undefined, productId: number, events: number, options: LoadOptions): Promise<ReadFigures[]> {
  const deepCursor = () => Math.floor(Math.random() * (events - 100));
  const specs: Array<{ endpoint: string; path: string; pathFor?: () => string }> = [
    { endpoint: 'GET /products/{id}/history (100 of 1000 points)', path: `/products/${productId}/history` },
    { endpoint: 'GET /products/{id}/history?limit=1000 (all points)', path: `/products/${productId}/history?limit=1000` },
    {
      endpoint: `GET /events?after={random}&limit=100 (of ${events.toLocaleString('en-US')})`,
      path: '/events?limit=100',
      pathFor: () => `/events?after=${deepCursor()}&limit=100`,
    },
    {
      endpoint: 'GET /events?type=price.changed&after={random}&limit=100',
      path: '/events?type=price.changed&limit=100',
      pathFor: () => `/events?type=price.changed&after=${deepCursor()}&limit=100`,
    },
  ];
  const figures: ReadFigures[] = [];
  for (const spec of specs) {
    const result = await measureOne(
      { base: mainUrl, method: 'GET', path: spec.path, ...(spec.pathFor ? { pathFor: spec.pathFor } : {}), ...(pid === undefined ? {} : { pid }) },
      options,
    );
    figures.push({ endpoint: spec.endpoint, result });
  }
  return figures;
}
