// Server-Sent Events: one writer for every live feed, bounded per client and in all, ending cleanly when the source ends or the client goes away or stops reading.
import { once } from 'node:events';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ServiceUnavailable, TooManyRequests } from '../problems.js';

export interface ServerEvent {
  event: string;
  data: unknown;
  id?: string;
}

export interface StreamLimits {
  /** Streams one client (address) may hold open at once (429 beyond). */
  perClient: number;
  /** Streams open at once in all (503 beyond). */
  total: number;
  /** How long a write may wait for a client to read before the stream is ended (a client that stopped reading). */
  stallMs: number;
}

/** Counts the open streams of one app, per client and in all. */
export interface StreamLimiter {
  /** Takes a place for `client`, or throws the problem that says why there is none; the result gives it back. */
  acquire(client: string): () => void;
  open(): number;
  readonly limits: StreamLimits;
}

export function createStreamLimiter(limits: StreamLimits): StreamLimiter {
  const byClient = new Map<string, number>();
  let total = 0;
  return {
    limits,
    open: () => total,
    acquire(client) {
      const mine = byClient.get(client) ?? 0;
      if (mine >= limits.perClient) {
        throw new TooManyRequests(`This client already has ${mine} live streams open (at most ${limits.perClient}); close one first.`, 5);
      }
      if (total >= limits.total) {
        throw new ServiceUnavailable(`The service has ${total} live streams open, its most; try again shortly.`, { retryAfterSeconds: 5 });
      }
      byClient.set(client, mine + 1);
      total++;
      let released = false;
      return () => {
        if (released) return;
        released = true;
        total--;
        const left = (byClient.get(client) ?? 1) - 1;
        if (left <= 0) byClient.delete(client);
        else byClient.set(client, left);
      };
    },
  };
}

/** A comment line now and then keeps proxies and load balancers from closing a quiet stream. */
const KEEPALIVE_MS = 15_000;

/**
 * Streams `source(signal)` to the client as text/event-stream. The signal aborts when the client
 * disconnects, so a source that waits (polls, listens) stops at once and costs nothing more. Writes
 * respect backpressure: the next event is taken from the source only once the client has read the
 * last one, and a client that reads nothing for `stallMs` is disconnected (its events stay in the
 * feed; it resumes with Last-Event-ID).
 */
export async function sendEvents(request: FastifyRequest, reply: FastifyReply, limiter: StreamLimiter, source: (signal: AbortSignal) => AsyncIterable<ServerEvent>): Promise<void> {
  const release = limiter.acquire(request.ip);
  const gone = new AbortController();
  const raw = reply.raw;
  request.raw.on('close', () => gone.abort());
  raw.on('close', () => gone.abort());
  reply.hijack();
  // The headers the service's hooks set (request id, security headers), plus the stream's own.
  raw.writeHead(200, {
    ...(reply.getHeaders() as Record<string, string>),
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-cache, no-transform',
    connection: 'keep-alive',
    'x-accel-buffering': 'no',
  });
  // HEAD: the stream's headers and no body. Node drops the writes of a HEAD answer, and with them the
  // headers, so the stream would hold its place and the client would wait for ever.
  if (request.method === 'HEAD') {
    release();
    raw.end();
    return;
  }
  /** Writes and, when the socket's buffer is full, waits for the client to read (or gives up on it). */
  const write = async (text: string): Promise<void> => {
    if (raw.write(text)) return;
    const stalled = AbortSignal.timeout(limiter.limits.stallMs);
    try {
      await once(raw, 'drain', { signal: AbortSignal.any([gone.signal, stalled]) });
    } catch {
      if (stalled.aborted && !gone.signal.aborted) request.log.info({ stallMs: limiter.limits.stallMs }, 'event stream closed: the client stopped reading');
      gone.abort();
      raw.destroy();
    }
  };
  const keepalive = setInterval(() => {
    if (!raw.writableNeedDrain) raw.write(': keep-alive\n\n');
  }, KEEPALIVE_MS);
  keepalive.unref();
  try {
    await write('retry: 2000\n\n');
    for await (const { event, data, id } of source(gone.signal)) {
      if (gone.signal.aborted) break;
      await write(`${id === undefined ? '' : `id: ${id}\n`}event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
    }
  } catch (error) {
    if (!gone.signal.aborted) {
      request.log.warn({ err: error }, 'event stream failed');
      raw.write(`event: error\ndata: ${JSON.stringify({ detail: `The stream ended (${(error as Error).message}); reconnect to resume.` })}\n\n`);
    }
  } finally {
    clearInterval(keepalive);
    release();
    gone.abort();
    raw.end();
  }
}
