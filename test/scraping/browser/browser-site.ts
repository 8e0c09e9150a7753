// The local site the browser tests render: scripted pages, guarded and refused paths, a "forbidden" server nothing may reach.
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { chromiumPath } from '../../helpers.js';

export type Handler = (req: http.IncomingMessage, res: http.ServerResponse) => void;

// These tests need a real Chromium (CI installs Debian's); without one their suites are skipped (`noChromium`), except under CI.
export const executablePath = chromiumPath;
export { noChromium } from '../../helpers.js';
export const USER_AGENT = 'data-aggregator-test/1.0 (+https://example.invalid/bot)';
/**
 * The deadline of a render a test expects to end by itself (with a page or a refusal), not at its
 * deadline: generous, since on a loaded machine (CI runs three test files at once, several starting
 * Chromium) a browser's start alone has taken over 10 s.
 */
export const RENDER_MS = 30_000;

export interface Site {
  origin: string;
  /** Requests per path (query string dropped). */
  hits: Map<string, number>;
  /** Connections the "forbidden" server accepted: must stay 0. */
  forbiddenConnections(): number;
  /** The client ports of those connections, in the order they were accepted. */
  forbiddenPeers(): number[];
  forbiddenOrigin: string;
  lastUserAgent: string | undefined;
  /** The Cookie header of each request to /state. */
  cookiesSeen: string[];
  close(): Promise<void>;
}

export function html(body: string, head = ''): string {
  return `<!doctype html><html><head><meta charset="utf-8"><title>t</title>${head}</head><body>${body}</body></html>`;
}

/**
 * Runs `work` with the browser process stopped (SIGSTOP: contexts can neither open nor close).
 * SIGKILL works on a stopped process, but one the renderer did not kill is never left stopped behind.
 */
export async function whileFrozen(pid: number, work: () => Promise<unknown>): Promise<void> {
  process.kill(pid, 'SIGSTOP');
  try {
    await work();
  } finally {
    try {
      process.kill(pid, 'SIGCONT');
    } catch {
      // Already gone: the renderer killed it, as it should.
    }
  }
}

export async function listen(server: http.Server): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
}

export async function startSite(extraPages: Record<string, Handler> = {}): Promise<Site> {
  const hits = new Map<string, number>();
  const held = new Set<http.ServerResponse>();
  const forbiddenPeers: number[] = [];
  let lastUserAgent: string | undefined;
  const cookiesSeen: string[] = [];

  // A second server standing in for an internal address the guard refuses: nothing may reach it.
  const forbidden = http.createServer((_req, res) => res.end('internal secrets'));
  forbidden.on('connection', (socket) => {
    forbiddenPeers.push(socket.remotePort ?? 0);
  });
  const forbiddenPort = await listen(forbidden);
  const forbiddenOrigin = `http://127.0.0.1:${forbiddenPort}`;

  const pages: Record<string, Handler> = {
    '/dynamic': (_req, res) =>
      send(
        res,
        html(
          '<main id="list"></main>',
          `<script>setTimeout(() => {
            const list = document.getElementById('list');
            for (const [name, price] of [['Red kettle', '£19.99'], ['Blue mug', '£4.50'], ['Tea tin', '£7.25']]) {
              const card = document.createElement('div');
              card.className = 'product-card';
              card.innerHTML = '<h2>' + name + '</h2><span class="price">' + price + '</span>';
              list.append(card);
            }
          }, 300);</script>`,
        ),
      ),
    '/late': (_req, res) =>
      send(
        res,
        html(
          '<p>wait</p>',
          `<script>setTimeout(() => { const e = document.createElement('section'); e.id = 'late'; e.textContent = 'arrived'; document.body.append(e); }, 500);</script>`,
        ),
      ),
    // Moves on to /late before the selector the caller waits for exists anywhere.
    '/moves-on': (_req, res) => send(res, html('<p>leaving</p>', `<script>setTimeout(() => { location.href = '/late'; }, 100);</script>`)),
    '/guarded': (_req, res) =>
      send(
        res,
        html(
          `<img src="/pixel.png" alt=""><iframe src="/blocked-frame"></iframe><div id="out"></div>
           <script>
             fetch('/secret').then((r) => r.text()).then((t) => { document.getElementById('out').textContent += 'secret:' + t; }, () => { document.getElementById('out').textContent += 'secret-blocked '; });
             fetch('/allowed-data').then((r) => r.text()).then((t) => { document.getElementById('out').textContent += 'data:' + t + ' '; });
           </script>`,
          '<style>body { font-family: "Nope"; } @font-face { font-family: "Nope"; src: url(/font.woff2); }</style>',
        ),
      ),
    '/allowed-data': (_req, res) => send(res, 'ok-data', 'text/plain'),
    '/secret': (_req, res) => send(res, 'TOP SECRET', 'text/plain'),
    '/blocked-frame': (_req, res) => send(res, html('frame')),
    '/pixel.png': (_req, res) => send(res, 'not really a png', 'image/png'),
    '/font.woff2': (_req, res) => send(res, 'not really a font', 'font/woff2'),
    '/redirect-forbidden': (_req, res) => {
      res.writeHead(302, { location: `${forbiddenOrigin}/admin` }).end();
    },
    '/redirect-twice': (_req, res) => {
      res.writeHead(302, { location: '/redirect-forbidden' }).end();
    },
    '/redirect-ok': (_req, res) => {
      res.writeHead(301, { location: '/dynamic' }).end();
    },
    '/sneaky': (_req, res) =>
      send(
        res,
        html(
          `<iframe src="/redirect-forbidden"></iframe><div id="out"></div>
           <script>
             fetch('/redirect-forbidden').catch(() => {});
             fetch('${forbiddenOrigin}/direct', { mode: 'no-cors' }).catch(() => {});
             try { new WebSocket('ws://127.0.0.1:${forbiddenPort}/socket'); } catch {}
             document.getElementById('out').textContent = 'rendered';
           </script>`,
        ),
      ),
    '/by-name': (_req, res) =>
      send(
        res,
        html(
          `<div id="out"></div>
           <script>
             fetch('http://localhost:${forbiddenPort}/direct', { mode: 'no-cors' }).catch(() => {});
             try { new WebSocket('ws://localhost:${forbiddenPort}/socket'); } catch {}
             document.getElementById('out').textContent = 'rendered';
           </script>`,
        ),
      ),
    '/late-escape': (_req, res) => send(res, html('<p>harmless at first</p>', `<script>setTimeout(() => { location.href = '/redirect-forbidden'; }, 100);</script>`)),
    '/missing': (_req, res) => send(res, html('gone'), 'text/html', 404),
    '/report.pdf': (_req, res) => send(res, '%PDF-1.4 not really', 'application/pdf'),
    '/photo': (_req, res) => send(res, 'not really a png', 'image/png'),
    '/hang': (_req, res) => {
      // Headers never come: the browser waits until our deadline.
      held.add(res);
    },
    '/slow': (_req, res) => {
      setTimeout(() => send(res, html('<p>slow</p>')), 200);
    },
    // What a page leaves behind (a cookie, localStorage) must not reach the next render.
    '/state': (req, res) => {
      cookiesSeen.push(req.headers.cookie ?? '');
      send(
        res,
        html(
          `<main></main><script>
            const seen = 'cookie=' + document.cookie + ';storage=' + (localStorage.getItem('k') ?? '');
            document.cookie = 'k=1; max-age=3600; path=/';
            localStorage.setItem('k', '1');
            document.querySelector('main').insertAdjacentHTML('beforeend', '<p id="state">' + seen + '</p>');
          </script>`,
        ),
      );
    },
    '/plain': (req, res) => {
      lastUserAgent = req.headers['user-agent'];
      send(res, html(`<h1>${new URL(req.url ?? '/', 'http://x').searchParams.get('n') ?? ''}</h1>`));
    },
  };

  const server = http.createServer((req, res) => {
    const pathname = new URL(req.url ?? '/', 'http://x').pathname;
    hits.set(pathname, (hits.get(pathname) ?? 0) + 1);
    const handler = extraPages[pathname] ?? pages[pathname];
    if (handler === undefined) send(res, html('no such page'), 'text/html', 404);
    else handler(req, res);
  });
  const port = await listen(server);

  return {
    origin: `http://127.0.0.1:${port}`,
    hits,
    forbiddenConnections: () => forbiddenPeers.length,
    forbiddenPeers: () => [...forbiddenPeers],
    forbiddenOrigin,
    cookiesSeen,
    get lastUserAgent() {
      return lastUserAgent;
    },
    async close() {
      for (const res of held) res.destroy();
      server.closeAllConnections();
      forbidden.closeAllConnections();
      await Promise.all([new Promise((r) => server.close(r)), new Promise((r) => forbidden.close(r))]);
    },
  };
}

export function send(res: http.ServerResponse, body: string, type = 'text/html; charset=utf-8', status = 200): void {
  res.writeHead(status, { 'content-type': type, 'content-length': Buffer.byteLength(body) }).end(body);
}

export function isProblem(type: new (...args: never[]) => Error, pattern?: RegExp) {
  return (error: unknown): boolean => {
    assert.ok(error instanceof type, `expected ${type.name}, got ${String(error)}`);
    if (pattern !== undefined) assert.match(error.message, pattern);
    return true;
  };
}

export async function freePort(): Promise<number> {
  const server = http.createServer();
  const port = await listen(server);
  await new Promise((r) => server.close(r));
  return port;
}
