// Server-Sent Events: one writer for every live feed, ending cleanly when the source ends or the client goes away.
import type { FastifyReply, FastifyRequest } from 'fastify';

export interface ServerEvent {
  event: string;
  data: unknown;
  id?: string;
}

/** A comment line now and then keeps proxies and load balancers from closing a quiet stream. */
const KEEPALIVE_MS = 15_000;

/**
 * Streams `source(signal)` to the client as text/event-stream. The signal aborts when the client
 * disconnects, so a source that waits (polls, listens) stops at once and costs nothing more.
 */
export async function sendEvents(request: FastifyRequest, reply: FastifyReply, source: (signal: AbortSignal) => AsyncIterable<ServerEvent>): Promise<void> {
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
  raw.write('retry: 2000\n\n');
  const keepalive = setInterval(() => raw.write(': keep-alive\n\n'), KEEPALIVE_MS);
  keepalive.unref();
  try {
    for await (const { event, data, id } of source(gone.signal)) {
      if (gone.signal.aborted) break;
      raw.write(`${id === undefined ? '' : `id: ${id}\n`}event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
    }
  } catch (error) {
    if (!gone.signal.aborted) {
      request.log.warn({ err: error }, 'event stream failed');
      raw.write(`event: error\ndata: ${JSON.stringify({ detail: 'The stream failed; reconnect to resume.' })}\n\n`);
    }
  } finally {
    clearInterval(keepalive);
    gone.abort();
    raw.end();
  }
}
