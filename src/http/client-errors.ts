// Requests Node's HTTP parser refuses before Fastify sees them, answered as RFC 9457 problems like every other error.
import { STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';
import { HttpProblem } from '../problems.js';

/** What the parser refused, by its error code; anything else is a request that is not HTTP. */
const REFUSALS: Record<string, [status: number, slug: string, detail: string]> = {
  HPE_HEADER_OVERFLOW: [431, 'headers-too-large', 'The request line and headers are larger than this service reads (16 KiB in all); send a shorter URL or fewer headers.'],
  ERR_HTTP_REQUEST_TIMEOUT: [408, 'request-timeout', 'The request did not arrive in time.'],
};

/**
 * Fastify's `clientErrorHandler`: a URL or headers past Node's limit, a malformed request line or a client
 * too slow is answered as a problem, not in Fastify's own JSON shape (which a client of the contract cannot read).
 */
export function clientErrorHandler(error: Error & { code?: string }, socket: Duplex): void {
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  const [status, slug, detail] = REFUSALS[error.code ?? ''] ?? [400, 'bad-request', 'The request is not valid HTTP.'];
  const title = STATUS_CODES[status] ?? 'Bad Request';
  const body = JSON.stringify(new HttpProblem(status, slug, title, detail).toBody());
  if (!socket.writable) {
    socket.destroy(error);
    return;
  }
  // Ended, not destroyed at once: destroying drops what is not yet flushed, and the client sees a cut answer.
  // A client that reads nothing still loses the socket soon.
  setTimeout(() => socket.destroy(), 5_000).unref();
  socket.end(`HTTP/1.1 ${status} ${title}\r\nContent-Length: ${Buffer.byteLength(body)}\r\nContent-Type: application/problem+json\r\nConnection: close\r\n\r\n${body}`, () =>
    socket.destroy(),
  );
}
