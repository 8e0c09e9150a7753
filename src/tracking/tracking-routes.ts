// /products/{id}/history, /events and /events/stream: what changed, when, as JSON, CSV, NDJSON or a live stream.
import { Type } from 'typebox';
import type { App } from '../http/base-app.js';
import { exportFormat, sendExport } from '../http/formats.js';
import { sendEvents, type ServerEvent, type StreamLimiter } from '../http/sse.js';
import { NotFound } from '../problems.js';
import { ProductId } from '../products/product-schema.js';
import { canonicalUrl } from '../url-identity/url-key.js';
import type { LiveFeed } from './live-feed.js';
import { Event, EVENT_CSV_COLUMNS, EventListQuery, EventStreamQuery, History, HISTORY_CSV_COLUMNS, HistoryQuery } from './tracking-schema.js';
import type { EventQuery, StoredEvent, Tracker } from './tracking-store.js';

export interface TrackingRoutesDeps {
  tracker: Tracker;
  /** Live streams of this process, fed by one reader (live-feed.ts). */
  feed: LiveFeed;
  /** The app's bound on open streams. */
  streams: StreamLimiter;
}

const DEFAULT_PAGE = 100;
/** Rows per read when an export or a live stream catches up. */
const BATCH = 1000;

/** What one filter of the query string selects, as the store reads it. */
function eventFilter(query: { type?: string; product_id?: number; article_id?: number; source?: string }): Omit<EventQuery, 'limit' | 'after' | 'since'> {
  return {
    ...(query.type === undefined ? {} : { type: query.type.split(',') }),
    ...(query.product_id === undefined ? {} : { product_id: query.product_id }),
    ...(query.article_id === undefined ? {} : { article_id: query.article_id }),
    // Runs name their source in canonical form, so `…/shop/` and `…/shop` are one source.
    ...(query.source === undefined ? {} : { source: canonicalUrl(query.source) ?? query.source }),
  };
}

export function trackingRoutes(app: App, deps: TrackingRoutesDeps): void {
  const { tracker } = deps;

  app.get(
    '/products/:id/history',
    {
      schema: {
        tags: ['tracking'],
        summary: 'Price and stock history of a product',
        description:
          'One point per distinct state (price, currency, list price, availability), oldest first, with when and by which run ' +
          'it was first and last seen: a run that sees the same values only moves the last sighting. `from`/`to` select the ' +
          'states that overlap the range; the summary covers the whole range. `Accept: text/csv` answers the points as CSV.',
        params: ProductId,
        querystring: HistoryQuery,
        produces: ['application/json', 'text/csv'],
        response: { 200: History },
      },
    },
    async (request, reply) => {
      const { id } = request.params;
      const { from, to, limit, offset } = request.query;
      const range = { ...(from === undefined ? {} : { from }), ...(to === undefined ? {} : { to }) };
      const format = exportFormat(request);
      const page = await tracker.history(id, { ...range, limit: format === 'json' ? limit : BATCH, offset });
      if (page === undefined) throw new NotFound(`Product ${id} does not exist.`);
      reply.header('x-total-count', page.total);
      if (format === 'json') return { product_id: id, summary: page.summary, points: page.points };
      // An export carries every point of the range, read a batch at a time.
      async function* batches() {
        yield page!.points;
        for (let at = offset + BATCH; at < page!.total; at += BATCH) yield (await tracker.history(id, { ...range, limit: BATCH, offset: at }))?.points ?? [];
      }
      return sendExport(reply, format, HISTORY_CSV_COLUMNS, batches(), `product-${id}-history`);
    },
  );

  app.get(
    '/events',
    {
      schema: {
        tags: ['tracking'],
        summary: 'Change events, oldest first, paged by cursor',
        description:
          'product.created, price.changed, availability.changed, product.gone, article.created and article.updated, each written in the same ' +
          'transaction as the change it describes. Page with `after` (the last id you have): `Link: rel="next"` gives the next page ' +
          'while a page is full. The feed is in the order the writing transactions began, and an event joins it once every ' +
          'older transaction has ended, so a consumer that remembers the last id it read misses nothing (ids identify ' +
          'events; along the feed they mostly, not always, grow). ' +
          '`order=desc` reads newest first (a feed), paged with `before`. ' +
          '`Accept: text/csv` or `application/x-ndjson` streams every match (up to `limit` when given).',
        querystring: EventListQuery,
        produces: ['application/json', 'text/csv', 'application/x-ndjson'],
        response: { 200: Type.Array(Event) },
      },
    },
    async (request, reply) => {
      const query = request.query;
      const base = {
        ...eventFilter(query),
        ...(query.since === undefined ? {} : { since: query.since }),
        ...(query.after === undefined ? {} : { after: query.after }),
        ...(query.before === undefined ? {} : { before: query.before }),
        order: query.order ?? 'asc',
      } as const;
      const format = exportFormat(request);
      if (format !== 'json') {
        const cap = query.limit ?? Number.POSITIVE_INFINITY;
        async function* batches(): AsyncGenerator<StoredEvent[]> {
          let cursor: Partial<Pick<EventQuery, 'after' | 'before'>> = {};
          for (let sent = 0; sent < cap; ) {
            const rows = await tracker.events({ ...base, ...cursor, limit: Math.min(BATCH, cap - sent) });
            if (rows.length > 0) yield rows;
            sent += rows.length;
            if (rows.length < BATCH) return;
            const last = rows[rows.length - 1]!.id;
            cursor = base.order === 'desc' ? { before: last } : { after: last };
          }
        }
        return sendExport(reply, format, EVENT_CSV_COLUMNS, batches(), 'events');
      }
      const limit = query.limit ?? DEFAULT_PAGE;
      const rows = await tracker.events({ ...base, limit });
      const last = rows[rows.length - 1];
      if (rows.length === limit && last !== undefined) {
        const queryAt = request.url.indexOf('?');
        const params = new URLSearchParams(queryAt === -1 ? '' : request.url.slice(queryAt + 1));
        params.set(base.order === 'desc' ? 'before' : 'after', String(last.id));
        params.set('limit', String(limit));
        reply.header('link', `</events?${params.toString()}>; rel="next"`);
      }
      return rows;
    },
  );

  app.get(
    '/events/stream',
    {
      schema: {
        tags: ['tracking'],
        summary: 'Change events live, as Server-Sent Events, resumable',
        description:
          'Each event is sent with its id and its type as the SSE event name (`event: price.changed`). A client that ' +
          'reconnects sends `Last-Event-ID` (EventSource does so by itself) and gets every event after it, in order, before ' +
          'the live ones; `after` does the same for the first connection. Without either the stream starts with the next ' +
          'new event. Filters as for `GET /events`.',
        querystring: EventStreamQuery,
        headers: Type.Object({ 'last-event-id': Type.Optional(Type.String({ pattern: '^[0-9]{1,15}$', description: 'The last event id received' })) }),
        produces: ['text/event-stream'],
        response: { 200: { description: 'text/event-stream; one SSE event per change event', type: 'string' } },
      },
    },
    async (request, reply) => {
      const lastEventId = request.headers['last-event-id'];
      const cursor = lastEventId !== undefined ? Number(lastEventId) : (request.query.after ?? (await tracker.lastEventId()));
      const filter = eventFilter(request.query);
      await sendEvents(request, reply, deps.streams, async function* (signal): AsyncGenerator<ServerEvent> {
        for await (const event of deps.feed.follow(filter, cursor, signal)) yield { event: event.type, id: String(event.id), data: event };
      });
    },
  );
}
