// Test helper: a local HTTP receiver on 127.0.0.1 standing in for a chat service; it keeps what arrives and answers as told.
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Received {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: Record<string, unknown>;
  raw: string;
}

export interface Receiver {
  /** `http://127.0.0.1:PORT` */
  base: string;
  received: Received[];
  /** What the next requests are answered with (status, headers, body). */
  answer: {
    status: number;
    headers?: Record<string, string>;
    body?: unknown /** Quote the request back (path, credentials, body), as careless services do in errors. */;
    echo?: boolean;
  };
  /** Parks every request until released (a delivery provably in flight). */
  hold(): { release(): void };
  /** Requests parked by `hold` right now. */
  waiting(): number;
  close(): Promise<void>;
}

export async function startReceiver(): Promise<Receiver> {
  const received: Received[] = [];
  let parked: Array<() => void> | null = null;
  const state: Receiver = {
    base: '',
    received,
    answer: { status: 200 },
    hold() {
      parked = [];
      return {
        release() {
          const waiting = parked ?? [];
          parked = null;
          for (const go of waiting) go();
        },
      };
    },
    waiting: () => parked?.length ?? 0,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      let body: Record<string, unknown> = {};
      try {
        body = JSON.parse(raw || '{}');
      } catch {
        body = {};
      }
      const answer = () => {
        received.push({ method: req.method ?? '', path: req.url ?? '', headers: req.headers, body, raw });
        const { status, headers, echo } = state.answer;
        const out = echo
          ? `cannot handle ${req.method} ${req.url} auth=${req.headers.authorization ?? ''} key=${req.headers['x-gotify-key'] ?? ''} body=${raw.slice(0, 2000)}`
          : state.answer.body;
        res.writeHead(status, { 'content-type': typeof out === 'string' ? 'text/plain' : 'application/json', ...headers });
        res.end(out === undefined ? '' : typeof out === 'string' ? out : JSON.stringify(out));
      };
      if (parked !== null) parked.push(answer);
      else answer();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  state.base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return state;
}
