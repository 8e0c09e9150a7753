// Scrape logs in MongoDB through the official driver (used when MONGODB_URL is set).
import { MongoClient, type Collection } from 'mongodb';
import { ConnectionString } from 'mongodb-connection-string-url';
import { redactDeep } from '../redact.js';
import { ServiceUnavailable } from '../problems.js';
import type { LogListQuery, ScrapeLog } from './log-schema.js';
import type { LogStore } from './log-store.js';

type LogDocument = Omit<ScrapeLog, 'id'> & { _id: string };

/** Connection and selection errors mean the store is down: 503, not 500. */
function unavailable(error: unknown): unknown {
  const name = (error as Error)?.name ?? '';
  if (/^Mongo(ServerSelection|Network|NetworkTimeout|NotConnected|TopologyClosed)Error$/.test(name)) {
    return new ServiceUnavailable('The document store (MongoDB) is unavailable; try again shortly.', {
      cause: error,
      retryAfterSeconds: 1,
    });
  }
  return error;
}

async function guarded<T>(operation: () => Promise<T>): Promise<T> {
  try {
    return await operation();
  } catch (error) {
    throw unavailable(error);
  }
}

const toLog = ({ _id, ...rest }: LogDocument): ScrapeLog => ({ id: _id, ...rest }) as ScrapeLog;

export function createMongoLogStore(url: string, options: { collection?: string; timeoutMs?: number } = {}): LogStore {
  const timeoutMs = options.timeoutMs ?? 3_000;
  // The driver connects lazily on the first operation and reconnects by itself.
  const client = new MongoClient(url, {
    serverSelectionTimeoutMS: timeoutMs,
    connectTimeoutMS: timeoutMs,
    appName: 'data-aggregator',
  });
  // The database named in the URL (default "data_aggregator"), read by the driver's own parser:
  // a URL with several hosts (a replica set) is not one `new URL` can read.
  const collection: Collection<LogDocument> = client
    .db(new ConnectionString(url).pathname.slice(1) || 'data_aggregator')
    .collection<LogDocument>(options.collection ?? 'scrape_logs');

  const filterOf = (query: LogListQuery) => {
    const filter: Record<string, string> = {};
    if (query.status !== undefined) filter.status = query.status;
    if (query.source_url !== undefined) filter.source_url = query.source_url;
    return filter;
  };

  return {
    backend: 'mongodb',
    init: () =>
      guarded(async () => {
        const created = await collection.createIndexes([
          { key: { started_at: -1, _id: -1 }, name: 'started_at' },
          { key: { status: 1, started_at: -1 }, name: 'status_started_at' },
          { key: { source_url: 1, started_at: -1 }, name: 'source_url_started_at' },
        ]);
        return `MongoDB indexes ensured on ${collection.collectionName}: ${created.join(', ')}`;
      }),
    insert: (document) =>
      guarded(async () => {
        const { id, ...rest } = redactDeep(document);
        // insertOne is atomic for a single document: no half-written logs.
        await collection.insertOne({ _id: id, ...rest });
      }),
    finish: (id, document) =>
      guarded(async () => {
        const { id: _id, ...fields } = redactDeep(document);
        await collection.updateOne({ _id: id }, { $set: fields });
      }),
    interruptRunning: (startedBefore, error) =>
      guarded(async () => {
        const result = await collection.updateMany(
          { status: 'running', started_at: { $lt: startedBefore } },
          { $set: { status: 'failed', error, finished_at: new Date().toISOString() } },
        );
        return result.modifiedCount;
      }),
    list: (query) =>
      guarded(async () => {
        const filter = filterOf(query);
        const [docs, total] = await Promise.all([
          collection.find(filter).sort({ started_at: -1, _id: -1 }).skip(query.offset).limit(query.limit).toArray(),
          collection.countDocuments(filter),
        ]);
        return { items: docs.map((d) => toLog(d as LogDocument)), total };
      }),
    get: (id) =>
      guarded(async () => {
        const doc = await collection.findOne({ _id: id });
        return doc ? toLog(doc as LogDocument) : undefined;
      }),
    ping: () =>
      guarded(async () => {
        await client.db('admin').command({ ping: 1 });
      }),
    close: () => client.close(),
  };
}
