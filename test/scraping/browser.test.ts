// The headless-browser renderer against a local site: scripts run, requests are guarded, failures map to problems.
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { BadRequest, BlockedTarget, HttpProblem, ServiceUnavailable, UpstreamFailed, UpstreamTimeout } from '../../src/problems.js';
import { createGuardedLookup } from '../../src/scraping/address-guard.js';
import { createBrowserRenderer, findChromium, type BrowserRenderer } from '../../src/scraping/browser.js';

// These tests need a real Chromium (CI installs Debian's); without one they fail rather than skip.
const executablePath = findChromium(process.env.CHROMIUM_PATH, process.env.PATH ?? '');
const USER_AGENT = 'data-aggregator-test/1.0 (+https://example.invalid/bot)';

interface Site {
  origin: string;
  /** Requests per path (query string dropped). */
  hits: Map<string, number>;
  /** Connections the "forbidden" server accepted: must stay 0. */
  forbiddenConnections(): number;
  forbiddenOrigin: string;
  lastUserAgent: string | undefined;
  /** The Cookie header of each request to /state. */
  cookiesSeen: string[];
  close(): Promise<void>;
}

function html(body: string, head = ''): string {
  return `<!doctype html><html><head><meta charset="utf-8"><title>t</title>${head}</head><body>${body}</body></html>`;
}

/**
 * Runs `work` with the browser process stopped (SIGSTOP: contexts can neither open nor close) and
 * returns how long it took. SIGKILL works on a stopped process, but one the renderer did not kill is
 * never left stopped behind.
 */
async function whileFrozen(pid: number, work: () => Promise<unknown>): Promise<number> {
  process.kill(pid, 'SIGSTOP');
  const started = Date.now();
  try {
    await work();
  } finally {
    try {
      process.kill(pid, 'SIGCONT');
    } catch {
      // Already gone: the renderer killed it, as it should.
    }
  }
  return Date.now() - started;
}

async function listen(server: http.Server): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
}

async function startSite(): Promise<Site> {
  const hits = new Map<string, number>();
  const held = new Set<http.ServerResponse>();
  let forbiddenConnections = 0;
  let lastUserAgent: string | undefined;
  const cookiesSeen: string[] = [];

  // A second server standing in for an internal address the guard refuses: nothing may reach it.
  const forbidden = http.createServer((_req, res) => res.end('internal secrets'));
  forbidden.on('connection', () => {
    forbiddenConnections += 1;
  });
  const forbiddenPort = await listen(forbidden);
  const forbiddenOrigin = `http://127.0.0.1:${forbiddenPort}`;

  const pages: Record<string, (req: http.IncomingMessage, res: http.ServerResponse) => void> = {
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
      send(res, html('<p>wait</p>', `<script>setTimeout(() => { const e = document.createElement('section'); e.id = 'late'; e.textContent = 'arrived'; document.body.append(e); }, 500);</script>`)),
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
    '/late-escape': (_req, res) =>
      send(res, html('<p>harmless at first</p>', `<script>setTimeout(() => { location.href = '/redirect-forbidden'; }, 100);</script>`)),
    '/missing': (_req, res) => send(res, html('gone'), 'text/html', 404),
    '/report.pdf': (_req, res) => send(res, '%PDF-1.4 not really', 'application/pdf'),
    '/photo': (_req, res) => send(res, 'not really a png', 'image/png'),
    '/hang': (_req, res) => {
      // Headers never come: the browser waits until our deadline.
      held.add(res);
    },
    '/spin': (_req, res) =>
      send(res, html('<p>spinning</p>', `<script>document.addEventListener('DOMContentLoaded', () => setTimeout(() => { for (;;) {} }, 0));</script>`)),
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
    const handler = pages[pathname];
    if (handler === undefined) send(res, html('no such page'), 'text/html', 404);
    else handler(req, res);
  });
  const port = await listen(server);

  return {
    origin: `http://127.0.0.1:${port}`,
    hits,
    forbiddenConnections: () => forbiddenConnections,
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

function send(res: http.ServerResponse, body: string, type = 'text/html; charset=utf-8', status = 200): void {
  res.writeHead(status, { 'content-type': type, 'content-length': Buffer.byteLength(body) }).end(body);
}

function isProblem(type: new (...args: never[]) => Error, pattern?: RegExp) {
  return (error: unknown): boolean => {
    assert.ok(error instanceof type, `expected ${type.name}, got ${String(error)}`);
    if (pattern !== undefined) assert.match(error.message, pattern);
    return true;
  };
}

async function freePort(): Promise<number> {
  const server = http.createServer();
  const port = await listen(server);
  await new Promise((r) => server.close(r));
  return port;
}

describe('browser renderer', () => {
  let site: Site;
  let renderer: BrowserRenderer;
  const guardCalls: string[] = [];
  // Allows the test site except the paths and the server a real guard would refuse.
  const guardRequest = async (url: string): Promise<boolean> => {
    guardCalls.push(url);
    return !url.includes('/secret') && !url.includes('/blocked-frame') && !url.includes(site.forbiddenOrigin.replace('http://', ''));
  };

  before(async () => {
    site = await startSite();
    renderer = createBrowserRenderer({ executablePath, guardRequest, userAgent: USER_AGENT });
  });

  after(async () => {
    await renderer.close();
    await site.close();
  });

  test('renders script-inserted product cards that the raw HTML does not contain, in one browser reused across renders', async (t) => {
    assert.match((await renderer.status()).detail, /^not started: /);
    const raw = await (await fetch(`${site.origin}/dynamic`)).text();
    assert.doesNotMatch(raw, /class="product-card"/);

    let started = Date.now();
    const first = await renderer.render(`${site.origin}/dynamic`, { timeoutMs: 15_000 });
    const coldMs = Date.now() - started;
    started = Date.now();
    const second = await renderer.render(`${site.origin}/dynamic`, { timeoutMs: 15_000 });
    const warmMs = Date.now() - started;
    t.diagnostic(`cold render (with launch) ${coldMs} ms, warm render ${warmMs} ms`);

    for (const page of [first, second]) {
      assert.equal(page.status, 200);
      assert.equal(page.url, `${site.origin}/dynamic`);
      assert.match(page.contentType, /^text\/html/);
      assert.equal(page.html.match(/class="product-card"/g)?.length, 3);
      assert.match(page.html, /Red kettle<\/h2><span class="price">£19\.99/);
    }
    assert.equal(renderer.launches, 1);
    await renderer.idle();
    assert.equal(renderer.openContexts(), 0);
    assert.ok(renderer.spareContexts() <= 1, 'at most one spare context');
    const status = await renderer.status();
    assert.equal(status.available, true);
    assert.match(status.detail, /^chromium \d+\.\d+.* \(running\)$/);
    t.diagnostic(status.detail);
  });

  test('every render gets a context nobody used: no cookie or localStorage from the one before', async () => {
    for (let n = 0; n < 3; n += 1) {
      const page = await renderer.render(`${site.origin}/state`, { timeoutMs: 10_000, waitFor: '#state' });
      assert.match(page.html, /<p id="state">cookie=;storage=<\/p>/, `render ${n + 1} saw state left by an earlier one`);
    }
    assert.deepEqual(site.cookiesSeen, ['', '', ''], 'no Cookie header was sent');
    await renderer.idle();
    assert.equal(renderer.openContexts(), 0);
    assert.equal(renderer.spareContexts(), 1, 'one context is kept ready for the next render');
  });

  test('sends the configured User-Agent and reports the URL after redirects', async () => {
    await renderer.render(`${site.origin}/plain?n=ua`, { timeoutMs: 10_000 });
    assert.equal(site.lastUserAgent, USER_AGENT);
    const page = await renderer.render(`${site.origin}/redirect-ok`, { timeoutMs: 10_000 });
    assert.equal(page.url, `${site.origin}/dynamic`);
    assert.match(page.html, /Blue mug/);
  });

  test('waitFor finds a selector that appears after 500 ms', async () => {
    const page = await renderer.render(`${site.origin}/late`, { timeoutMs: 10_000, waitFor: '#late' });
    assert.match(page.html, /<section id="late">arrived<\/section>/);
  });

  test('waitFor keeps waiting across a navigation and reads the page the selector appears on', async () => {
    const page = await renderer.render(`${site.origin}/moves-on`, { timeoutMs: 10_000, waitFor: '#late' });
    assert.equal(page.url, `${site.origin}/late`);
    assert.match(page.html, /<section id="late">arrived<\/section>/);
    assert.doesNotMatch(page.html, /leaving/);
  });

  test('waitFor a selector that never appears fails with UpstreamTimeout naming it, within about 2 s', async () => {
    // Starting the browser is not part of a page's time budget; measure the page alone.
    await renderer.render(`${site.origin}/plain?n=warm`, { timeoutMs: 10_000, waitFor: 'h1' });
    const started = Date.now();
    await assert.rejects(renderer.render(`${site.origin}/late`, { timeoutMs: 1_500, waitFor: '.never-there' }), isProblem(UpstreamTimeout, /\.never-there/));
    const elapsed = Date.now() - started;
    assert.ok(elapsed < 2_500, `took ${elapsed} ms`);
    await renderer.idle();
    assert.equal(renderer.openContexts(), 0);
    assert.ok(renderer.spareContexts() <= 1, 'at most one spare context');
  });

  test('an invalid waitFor selector is a BadRequest', async () => {
    await assert.rejects(renderer.render(`${site.origin}/late`, { timeoutMs: 5_000, waitFor: 'div[' }), isProblem(BadRequest, /div\[/));
  });

  test('the guard keeps fetch() and iframe requests from ever leaving the browser; images and fonts are never requested', async () => {
    const page = await renderer.render(`${site.origin}/guarded`, { timeoutMs: 10_000 });
    assert.match(page.html, /data:ok-data/);
    assert.match(page.html, /secret-blocked/);
    assert.doesNotMatch(page.html, /TOP SECRET/);
    assert.equal(site.hits.get('/guarded'), 1);
    assert.equal(site.hits.get('/allowed-data'), 1);
    assert.equal(site.hits.get('/secret'), undefined);
    assert.equal(site.hits.get('/blocked-frame'), undefined);
    assert.equal(site.hits.get('/pixel.png'), undefined);
    assert.equal(site.hits.get('/font.woff2'), undefined);
    assert.ok(guardCalls.some((url) => url.endsWith('/secret')), 'the guard was asked about /secret');
  });

  test('redirects, cross-port requests and WebSockets into a refused address never connect', async () => {
    const page = await renderer.render(`${site.origin}/sneaky`, { timeoutMs: 10_000 });
    assert.match(page.html, /rendered/);
    const forbiddenHost = site.forbiddenOrigin.replace('http://', '');
    assert.ok(guardCalls.includes(`${site.forbiddenOrigin}/admin`), 'the redirect hop was put to the guard');
    assert.ok(guardCalls.includes(`https://${forbiddenHost}/`), 'the WebSocket tunnel was put to the guard');
    assert.ok((site.hits.get('/redirect-forbidden') ?? 0) >= 1, 'the redirecting URL itself was allowed');
    assert.equal(site.forbiddenConnections(), 0);
  });

  test('a main document that redirects into a refused address is a BlockedTarget, and the target is never contacted', async () => {
    await assert.rejects(renderer.render(`${site.origin}/redirect-forbidden`, { timeoutMs: 10_000 }), isProblem(BlockedTarget, /\/admin/));
    await assert.rejects(renderer.render(`${site.origin}/redirect-twice`, { timeoutMs: 10_000 }), isProblem(BlockedTarget));
    assert.equal(site.forbiddenConnections(), 0);
    await renderer.idle();
    assert.equal(renderer.openContexts(), 0);
    assert.ok(renderer.spareContexts() <= 1, 'at most one spare context');
  });

  test('a page that later navigates itself into a refused address is a BlockedTarget', async () => {
    await assert.rejects(renderer.render(`${site.origin}/late-escape`, { timeoutMs: 10_000 }), isProblem(BlockedTarget, /\/admin/));
    assert.equal(site.forbiddenConnections(), 0);
  });

  test('a main document the guard refuses is a BlockedTarget and the server sees no request', async () => {
    const blockAll = createBrowserRenderer({ executablePath, guardRequest: async () => false, userAgent: USER_AGENT });
    try {
      const before = site.hits.get('/plain') ?? 0;
      await assert.rejects(blockAll.render(`${site.origin}/plain?n=blocked`, { timeoutMs: 5_000 }), isProblem(BlockedTarget));
      assert.equal(site.hits.get('/plain') ?? 0, before);
      assert.equal(blockAll.launches, 0, 'a refused target does not even start the browser');
    } finally {
      await blockAll.close();
    }
  });

  test('a guard that throws an HttpProblem for the page passes it on (e.g. an unresolvable name is a 502)', async () => {
    const throwing = createBrowserRenderer({
      executablePath,
      guardRequest: async () => {
        throw new UpstreamFailed('Could not resolve host nowhere.invalid.');
      },
      userAgent: USER_AGENT,
    });
    try {
      await assert.rejects(throwing.render('http://nowhere.invalid/', { timeoutMs: 5_000 }), isProblem(UpstreamFailed, /resolve/));
    } finally {
      await throwing.close();
    }
  });

  test('a trusted render may use its own origin even where the guard refuses everything', async () => {
    const blockAll = createBrowserRenderer({ executablePath, guardRequest: async () => false, userAgent: USER_AGENT });
    try {
      const page = await blockAll.render(`${site.origin}/dynamic`, { timeoutMs: 10_000, trusted: true });
      assert.match(page.html, /Tea tin/);
    } finally {
      await blockAll.close();
    }
  });

  test('a 404 main document is UpstreamFailed', async () => {
    await assert.rejects(renderer.render(`${site.origin}/missing`, { timeoutMs: 5_000 }), isProblem(UpstreamFailed, /404/));
  });

  test('non-HTML main documents (PDF, image) are UpstreamFailed', async () => {
    await assert.rejects(renderer.render(`${site.origin}/report.pdf`, { timeoutMs: 5_000 }), isProblem(UpstreamFailed, /pdf|download/i));
    await assert.rejects(renderer.render(`${site.origin}/photo`, { timeoutMs: 5_000 }), isProblem(UpstreamFailed, /image\/png/));
    await renderer.idle();
    assert.equal(renderer.openContexts(), 0);
    assert.ok(renderer.spareContexts() <= 1, 'at most one spare context');
  });

  test('a port nobody listens on is UpstreamFailed', async () => {
    const port = await freePort();
    await assert.rejects(renderer.render(`http://127.0.0.1:${port}/`, { timeoutMs: 5_000 }), isProblem(UpstreamFailed, /refused/));
  });

  test('a page that never answers is UpstreamTimeout in under 3 s, and the next render still works', async () => {
    const started = Date.now();
    await assert.rejects(renderer.render(`${site.origin}/hang`, { timeoutMs: 1_000 }), isProblem(UpstreamTimeout));
    const elapsed = Date.now() - started;
    assert.ok(elapsed < 3_000, `took ${elapsed} ms`);
    const page = await renderer.render(`${site.origin}/plain?n=after-hang`, { timeoutMs: 5_000 });
    assert.match(page.html, /after-hang/);
    await renderer.idle();
    assert.equal(renderer.openContexts(), 0);
    assert.ok(renderer.spareContexts() <= 1, 'at most one spare context');
  });

  test('a page whose script never yields hits the hard deadline, and the next render still works', async () => {
    const started = Date.now();
    await assert.rejects(renderer.render(`${site.origin}/spin`, { timeoutMs: 1_000 }), isProblem(UpstreamTimeout));
    const elapsed = Date.now() - started;
    assert.ok(elapsed < 5_000, `took ${elapsed} ms`);
    const page = await renderer.render(`${site.origin}/plain?n=after-spin`, { timeoutMs: 10_000 });
    assert.match(page.html, /after-spin/);
  });

  test('a browser that stops answering is killed after the deadline, and the next render starts a new one', async () => {
    await renderer.render(`${site.origin}/plain?n=before-freeze`, { timeoutMs: 10_000, waitFor: 'h1' });
    const pid = renderer.browserPid();
    assert.ok(pid !== undefined);
    const launchesBefore = renderer.launches;
    const elapsed = await whileFrozen(pid, () =>
      assert.rejects(renderer.render(`${site.origin}/plain?n=frozen`, { timeoutMs: 1_000 }), isProblem(UpstreamTimeout)),
    );
    assert.ok(elapsed < 6_000, `took ${elapsed} ms`);
    const page = await renderer.render(`${site.origin}/plain?n=after-freeze`, { timeoutMs: 10_000 });
    assert.match(page.html, /after-freeze/);
    assert.equal(renderer.launches, launchesBefore + 1);
    assert.notEqual(renderer.browserPid(), pid);
  });

  test('two renders into a frozen browser, one on the spare and one opening its own context, both fail in time', async () => {
    await renderer.render(`${site.origin}/plain?n=before-freeze-2`, { timeoutMs: 10_000, waitFor: 'h1' });
    await renderer.idle();
    const pid = renderer.browserPid();
    assert.ok(pid !== undefined);
    const launchesBefore = renderer.launches;
    const elapsed = await whileFrozen(pid, async () => {
      // The first takes the ready spare and hangs in navigation; the second must open a context of its own and hangs there.
      const results = await Promise.allSettled([
        renderer.render(`${site.origin}/plain?n=frozen-a`, { timeoutMs: 1_000 }),
        renderer.render(`${site.origin}/plain?n=frozen-b`, { timeoutMs: 1_000 }),
      ]);
      for (const result of results) {
        assert.equal(result.status, 'rejected');
        assert.ok((result as PromiseRejectedResult).reason instanceof HttpProblem);
      }
    });
    assert.ok(elapsed < 8_000, `took ${elapsed} ms`);
    const page = await renderer.render(`${site.origin}/plain?n=after-freeze-2`, { timeoutMs: 10_000 });
    assert.match(page.html, /after-freeze-2/);
    assert.equal(renderer.launches, launchesBefore + 1, 'the frozen browser was replaced');
  });

  test('a browser that crashed between renders is replaced by the next render', async () => {
    await renderer.render(`${site.origin}/plain?n=before-crash`, { timeoutMs: 10_000, waitFor: 'h1' });
    const pid = renderer.browserPid();
    assert.ok(pid !== undefined);
    const launchesBefore = renderer.launches;
    process.kill(pid, 'SIGKILL');
    for (let waited = 0; renderer.browserPid() !== undefined && waited < 5_000; waited += 50) {
      await new Promise((r) => setTimeout(r, 50));
    }
    assert.equal(renderer.browserPid(), undefined, 'the renderer noticed the crash');
    const page = await renderer.render(`${site.origin}/plain?n=after-crash`, { timeoutMs: 10_000, waitFor: 'h1' });
    assert.match(page.html, /after-crash/);
    assert.equal(renderer.launches, launchesBefore + 1);
  });

  test('20 sequential renders leave no open contexts', async () => {
    const launchesBefore = renderer.launches;
    for (let n = 0; n < 20; n += 1) {
      // waitFor skips the network-idle pause, which is not what this test is about.
      const page = await renderer.render(`${site.origin}/plain?n=seq-${n}`, { timeoutMs: 5_000, waitFor: 'h1' });
      assert.match(page.html, new RegExp(`seq-${n}<`));
    }
    await renderer.idle();
    assert.equal(renderer.openContexts(), 0);
    assert.ok(renderer.spareContexts() <= 1, 'at most one spare context');
    assert.equal(renderer.launches, launchesBefore);
  });

  test('renders beyond maxConcurrentPages wait their turn in FIFO order', async () => {
    const single = createBrowserRenderer({ executablePath, guardRequest, userAgent: USER_AGENT, maxConcurrentPages: 1 });
    try {
      const finished: number[] = [];
      await Promise.all(
        [0, 1, 2].map((n) => single.render(`${site.origin}/slow?n=${n}`, { timeoutMs: 10_000 }).then(() => finished.push(n))),
      );
      assert.deepEqual(finished, [0, 1, 2]);
      assert.equal(single.launches, 1, 'concurrent first renders share one launch');
    } finally {
      await single.close();
    }
  });

  test('a render that waits longer than its timeout for a page slot is a 503 with Retry-After 2; close() refuses the waiters', async () => {
    const single = createBrowserRenderer({ executablePath, guardRequest, userAgent: USER_AGENT, maxConcurrentPages: 1 });
    try {
      const plainBefore = site.hits.get('/plain') ?? 0;
      const holding = single.render(`${site.origin}/hang`, { timeoutMs: 3_000 });
      holding.catch(() => undefined);
      await assert.rejects(single.render(`${site.origin}/plain?n=busy`, { timeoutMs: 300 }), (error: unknown) => {
        assert.ok(error instanceof ServiceUnavailable, `expected ServiceUnavailable, got ${String(error)}`);
        assert.match(error.message, /All 1 browser pages stayed busy for 300 ms/);
        assert.equal(error.headers['retry-after'], '2');
        return true;
      });
      const waiting = assert.rejects(single.render(`${site.origin}/plain?n=waiting`, { timeoutMs: 10_000 }), isProblem(ServiceUnavailable, /shutting down/));
      // Long enough for the render to pass the guard and queue for the slot.
      await new Promise((r) => setTimeout(r, 50));
      await single.close();
      await waiting;
      await assert.rejects(holding, isProblem(ServiceUnavailable));
      assert.equal(site.hits.get('/plain') ?? 0, plainBefore, 'neither waiting render reached the site');
    } finally {
      await single.close();
    }
  });
});

describe('browser renderer connect-time address check', () => {
  let site: Site;
  // The URL-level guard says yes to everything: only the connect-time lookup stands in the way.
  const guardRequest = async (): Promise<boolean> => true;
  const renderers: BrowserRenderer[] = [];
  const rendererWith = (lookup: ReturnType<typeof createGuardedLookup>): BrowserRenderer => {
    const renderer = createBrowserRenderer({ executablePath, guardRequest, connectLookup: lookup, userAgent: USER_AGENT });
    renderers.push(renderer);
    return renderer;
  };
  /** Stands in for DNS: every name points at the loopback test servers; `asked` records who asked. */
  const asked: string[] = [];
  const resolve = async (hostname: string): Promise<string[]> => {
    asked.push(hostname);
    return ['127.0.0.1'];
  };

  before(async () => {
    site = await startSite();
  });

  after(async () => {
    await Promise.all(renderers.map((renderer) => renderer.close()));
    await site.close();
  });

  test('a host name that the guard allows but that resolves to a blocked address is refused at connect time; the server sees nothing', async () => {
    const renderer = rendererWith(createGuardedLookup({ allowPrivate: false, resolve }));
    const port = new URL(site.origin).port;
    const before = site.hits.get('/plain') ?? 0;
    await assert.rejects(
      renderer.render(`http://rebind.test:${port}/plain?n=rebind`, { timeoutMs: 10_000 }),
      isProblem(BlockedTarget, /^http:\/\/rebind\.test:\d+\/plain\?n=rebind is not an allowed target/),
    );
    assert.equal(site.hits.get('/plain') ?? 0, before);
    assert.ok(asked.includes('rebind.test'), 'the proxy resolved the name through the guarded lookup');
  });

  test('fetch() and WebSockets to such a name never connect either', async () => {
    // "localhost" resolves to loopback in real DNS too, so without the connect-time check these would connect.
    const renderer = rendererWith(createGuardedLookup({ allowPrivate: false, resolve }));
    asked.length = 0;
    const page = await renderer.render(`${site.origin}/by-name`, { timeoutMs: 10_000 });
    assert.match(page.html, /rendered/);
    assert.ok(asked.includes('localhost'), 'the proxy resolved the name through the guarded lookup');
    assert.equal(site.forbiddenConnections(), 0);
  });

  test('the proxy dials the address the lookup checked (the name exists only in the injected resolver)', async () => {
    const renderer = rendererWith(createGuardedLookup({ allowPrivate: false, resolve, isBlocked: () => false }));
    const port = new URL(site.origin).port;
    const page = await renderer.render(`http://rebind.test:${port}/plain?n=via-lookup`, { timeoutMs: 10_000, waitFor: 'h1' });
    assert.match(page.html, /via-lookup/);
  });

  test('a trusted render dials its own origin without the connect-time check, since the demo site may be private', async () => {
    const renderer = rendererWith(createGuardedLookup({ allowPrivate: false, resolve }));
    const trustedUrl = `http://localhost:${new URL(site.origin).port}/plain?n=trusted`;
    await assert.rejects(renderer.render(trustedUrl, { timeoutMs: 10_000 }), isProblem(BlockedTarget));
    const page = await renderer.render(trustedUrl, { timeoutMs: 10_000, waitFor: 'h1', trusted: true });
    assert.match(page.html, /trusted/);
  });
});

describe('browser renderer without a browser', () => {
  test('no executable found is ServiceUnavailable naming CHROMIUM_PATH, and status says so without launching', async () => {
    const renderer = createBrowserRenderer({ executablePath: undefined, guardRequest: async () => true, userAgent: USER_AGENT });
    await assert.rejects(renderer.render('http://127.0.0.1:9/', { timeoutMs: 1_000 }), isProblem(ServiceUnavailable, /CHROMIUM_PATH/));
    assert.deepEqual(await renderer.status(), { available: false, detail: 'not found: set CHROMIUM_PATH' });
    assert.equal(renderer.launches, 0);
    await renderer.close();
  });

  test('a configured path that does not exist is ServiceUnavailable naming CHROMIUM_PATH', async () => {
    const renderer = createBrowserRenderer({ executablePath: '/nonexistent/chrome', guardRequest: async () => true, userAgent: USER_AGENT });
    await assert.rejects(renderer.render('http://127.0.0.1:9/', { timeoutMs: 1_000 }), isProblem(ServiceUnavailable, /\/nonexistent\/chrome.*CHROMIUM_PATH/));
    assert.equal((await renderer.status()).available, false);
    await renderer.close();
  });

  test('findChromium takes an executable explicit path and ignores one that does not exist', () => {
    const searchPath = process.env.PATH ?? '';
    assert.equal(findChromium(process.execPath, searchPath), process.execPath);
    assert.equal(findChromium('/nonexistent/chrome', searchPath), findChromium(undefined, searchPath));
    assert.equal(findChromium('/nonexistent/chrome', ''), findChromium(undefined, ''));
  });
});

describe('browser renderer close()', () => {
  test('close() twice is fine, and renders after close are refused with ServiceUnavailable', async () => {
    const site = await startSite();
    const renderer = createBrowserRenderer({ executablePath, guardRequest: async () => true, userAgent: USER_AGENT });
    try {
      await renderer.render(`${site.origin}/plain?n=x`, { timeoutMs: 10_000 });
      await renderer.close();
      await renderer.close();
      assert.deepEqual(await renderer.status(), { available: false, detail: 'closed' });
      await assert.rejects(renderer.render(`${site.origin}/plain?n=y`, { timeoutMs: 1_000 }), isProblem(ServiceUnavailable));
      await renderer.idle();
    assert.equal(renderer.openContexts(), 0);
    assert.ok(renderer.spareContexts() <= 1, 'at most one spare context');
    } finally {
      await renderer.close();
      await site.close();
    }
  });
});
