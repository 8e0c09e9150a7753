// The auxiliary service's HTTP client for the main service: pooled keep-alive GETs with a deadline and a body cap.
import { Pool, errors as undiciErrors } from 'undici';
import { UpstreamFailed, UpstreamTimeout } from '../problems.js';

export interface MainResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
}

export interface MainClient {
  readonly url: string;
  /** GETs `path` with `query`, a raw query string passed on byte for byte (no leading `?`). */
  get(path: string, query?: string, options?: { requestId?: string }): Promise<MainResponse>;
  /** Resolves when the main service answers `GET /health` with 200 within `timeoutMs`; throws otherwise. */
  ping(timeoutMs?: number): Promise<void>;
  close(): Promise<void>;
}

export interface MainClientOptions {
  /** Largest body accepted from the main service (default 50 MiB): a runaway answer cannot exhaust memory. */
  maxBodyBytes?: number;
  /** Sockets kept open to the main service (default 32). */
  connections?: number;
}

const DEFAULT_MAX_BODY_BYTES = 50 * 1024 * 1024;

export function createMainClient(baseUrl: string, timeoutMs: number, options: MainClientOptions = {}): MainClient {
  const base = new URL(baseUrl);
  // A base URL may carry a path prefix (a reverse proxy mount); routes are appended to it.
  const prefix = base.pathname.replace(/\/+$/, '');
  const maxBodyBytes = options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
  const pool = new Pool(base.origin, {
    connections: options.connections ?? 32,
    // Keep sockets warm between proxied requests; the main service keeps them 72 s, so stay below that.
    keepAliveTimeout: 30_000,
    keepAliveMaxTimeout: 60_000,
    connect: { timeout: timeoutMs },
  });
  const unreachable = (cause: unknown) => new UpstreamFailed(`The main service at ${baseUrl} is unreachable.`, { cause });
  const tooSlow = (cause: unknown, ms: number) => new UpstreamTimeout(`The main service at ${baseUrl} did not answer within ${ms} ms.`, { cause });

  async function get(path: string, query = '', deadlineMs: number, requestId?: string): Promise<MainResponse> {
    const signal = AbortSignal.timeout(deadlineMs);
    const headers: Record<string, string> = { accept: 'application/json, application/problem+json' };
    // Lets one request be followed through the logs of both services.
    if (requestId) headers['x-request-id'] = requestId;
    try {
      const response = await pool.request({
        method: 'GET',
        path: prefix + path + (query ? `?${query}` : ''),
        headers,
        signal,
        headersTimeout: deadlineMs,
        bodyTimeout: deadlineMs,
      });
      const declared = Number(response.headers['content-length']);
      if (declared > maxBodyBytes) {
        response.body.destroy();
        throw new UpstreamFailed(`The main service at ${baseUrl} sent a body larger than ${maxBodyBytes} bytes.`);
      }
      const chunks: Buffer[] = [];
      let size = 0;
      for await (const chunk of response.body) {
        size += (chunk as Buffer).length;
        if (size > maxBodyBytes) {
          response.body.destroy();
          throw new UpstreamFailed(`The main service at ${baseUrl} sent a body larger than ${maxBodyBytes} bytes.`);
        }
        chunks.push(chunk as Buffer);
      }
      return { status: response.statusCode, headers: response.headers, body: Buffer.concat(chunks, size) };
    } catch (error) {
      if (error instanceof UpstreamFailed) throw error;
      if (isTimeout(error, signal)) throw tooSlow(error, deadlineMs);
      throw unreachable(error);
    }
  }

  return {
    url: baseUrl,
    get: (path, query, options) => get(path, query, timeoutMs, options?.requestId),
    async ping(pingTimeoutMs = timeoutMs) {
      const { status } = await get('/health', '', Math.min(pingTimeoutMs, timeoutMs));
      if (status !== 200) throw new UpstreamFailed(`The main service at ${baseUrl} reports itself unhealthy (HTTP ${status}).`);
    },
    async close() {
      await pool.close();
    },
  };
}

function isTimeout(error: unknown, signal: AbortSignal): boolean {
  if (signal.aborted) return true;
  return error instanceof undiciErrors.HeadersTimeoutError || error instanceof undiciErrors.BodyTimeoutError || (error as { name?: string } | null)?.name === 'TimeoutError';
}
