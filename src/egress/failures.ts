// What a failed fetch is called: every error a fetch can throw, turned into one of our problems.
import { HttpProblem, UpstreamFailed, UpstreamTimeout } from '../problems.js';

/** Turns whatever was thrown into one of our three problems, naming the page but never credentials. */
export function describeFailure(error: unknown, label: string, signal: AbortSignal): HttpProblem | Error {
  if (error instanceof HttpProblem) return error;
  if (signal.aborted) {
    const reason: unknown = signal.reason;
    // Our deadline aborts with an UpstreamTimeout; a caller's own signal keeps its own reason.
    if (reason instanceof Error) return reason;
    return new UpstreamFailed(`Fetching ${label} was aborted.`, { cause: reason });
  }
  const code = (error as { code?: unknown } | null)?.code;
  const message = error instanceof Error ? error.message : String(error);
  switch (code) {
    case 'UND_ERR_CONNECT_TIMEOUT':
    case 'UND_ERR_HEADERS_TIMEOUT':
    case 'UND_ERR_BODY_TIMEOUT':
      return new UpstreamTimeout(`${label} did not answer in time.`, { cause: error });
    case 'ECONNREFUSED':
      return new UpstreamFailed(`${label} refused the connection.`, { cause: error });
    case 'ECONNRESET':
    case 'EPIPE':
    case 'UND_ERR_SOCKET':
      return new UpstreamFailed(`${label} closed the connection unexpectedly.`, { cause: error });
    case 'ENETUNREACH':
    case 'EHOSTUNREACH':
      return new UpstreamFailed(`${label} is unreachable.`, { cause: error });
    case 'UND_ERR_HEADERS_OVERFLOW':
      return new UpstreamFailed(`${label} sent response headers that are too large.`, { cause: error });
  }
  if (typeof code === 'string' && code.startsWith('HPE_')) {
    return new UpstreamFailed(`${label} sent a malformed HTTP response.`, { cause: error });
  }
  if (typeof code === 'string' && (code.startsWith('ERR_TLS') || code.includes('CERT'))) {
    return new UpstreamFailed(`TLS with ${label} failed: ${message}`, { cause: error });
  }
  return new UpstreamFailed(`Could not fetch ${label}: ${message}`, { cause: error });
}
