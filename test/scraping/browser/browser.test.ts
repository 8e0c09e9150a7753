// The headless-browser renderer against a local site: scripts run, requests are guarded, failures map to problems.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { loadConfig } from '../../../src/config/config.js';
import { BadRequest, BlockedTarget, HttpProblem, RunCancelled, ServiceUnavailable, UpstreamFailed, UpstreamTimeout } from '../../../src/problems.js';
import { createGuardedLookup } from '../../../src/egress/address-guard.js';
import { createBrowserRenderer, findChromium, type BrowserRenderer } from '../../../src/scraping/browser/index.js';
import { createSafeFetcher } from '../../../src/egress/safe-fetch.js';
import type { PageFetcher } from '../../../src/egress/page-fetcher.js';
import { executablePath, freePort, noChromium, html, isProblem, RENDER_MS, send, startSite, USER_AGENT, whileFrozen, type Site } from './browser-site.js';
import { until } from '../../wait.js';

describe('browser renderer', { skip: noChromium }, () => {
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

    const first = await renderer.render(`${site.origin}/dynamic`, { timeoutMs: RENDER_MS });
    const second = await renderer.render(`${site.origin}/dynamic`, { timeoutMs: RENDER_MS });

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
      const page = await renderer.render(`${site.origin}/state`, { timeoutMs: RENDER_MS, waitFor: '#state' });
      assert.match(page.html, /<p id="state">cookie=;storage=<\/p>/, `render ${n + 1} saw state left by an earlier one`);
    }
    assert.deepEqual(site.cookiesSeen, ['', '', ''], 'no Cookie header was sent');
    await renderer.idle();
    assert.equal(renderer.openContexts(), 0);
    assert.equal(renderer.spareContexts(), 1, 'one context is kept ready for the next render');
  });

  test('sends the configured User-Agent and reports the URL after redirects', async () => {
    await renderer.render(`${site.origin}/plain?n=ua`, { timeoutMs: RENDER_MS });
    assert.equal(site.lastUserAgent, USER_AGENT);
    const page = await renderer.render(`${site.origin}/redirect-ok`, { timeoutMs: RENDER_MS });
    assert.equal(page.url, `${site.origin}/dynamic`);
    assert.match(page.html, /Blue mug/);
  });

  test('waitFor finds a selector that appears after 500 ms', async () => {
    const page = await renderer.render(`${site.origin}/late`, { timeoutMs: RENDER_MS, waitFor: '#late' });
    assert.match(page.html, /<section id="late">arrived<\/section>/);
  });

  test('waitFor keeps waiting across a navigation and reads the page the selector appears on', async () => {
    const page = await renderer.render(`${site.origin}/moves-on`, { timeoutMs: RENDER_MS, waitFor: '#late' });
    assert.equal(page.url, `${site.origin}/late`);
    assert.match(page.html, /<section id="late">arrived<\/section>/);
    assert.doesNotMatch(page.html, /leaving/);
  });

  test('an invalid waitFor selector is a BadRequest', async () => {
    await assert.rejects(renderer.render(`${site.origin}/late`, { timeoutMs: RENDER_MS, waitFor: 'div[' }), isProblem(BadRequest, /div\[/));
  });

  test('the guard keeps fetch() and iframe requests from ever leaving the browser; images and fonts are never requested', async () => {
    const page = await renderer.render(`${site.origin}/guarded`, { timeoutMs: RENDER_MS });
    assert.match(page.html, /data:ok-data/);
    assert.match(page.html, /secret-blocked/);
    assert.doesNotMatch(page.html, /TOP SECRET/);
    assert.equal(site.hits.get('/guarded'), 1);
    assert.equal(site.hits.get('/allowed-data'), 1);
    assert.equal(site.hits.get('/secret'), undefined);
    assert.equal(site.hits.get('/blocked-frame'), undefined);
    assert.equal(site.hits.get('/pixel.png'), undefined);
    assert.equal(site.hits.get('/font.woff2'), undefined);
    assert.ok(
      guardCalls.some((url) => url.endsWith('/secret')),
      'the guard was asked about /secret',
    );
  });

  test('redirects, cross-port requests and WebSockets into a refused address never connect', async () => {
    const page = await renderer.render(`${site.origin}/sneaky`, { timeoutMs: RENDER_MS });
    assert.match(page.html, /rendered/);
    const forbiddenHost = site.forbiddenOrigin.replace('http://', '');
    assert.ok(guardCalls.includes(`${site.forbiddenOrigin}/admin`), 'the redirect hop was put to the guard');
    assert.ok(guardCalls.includes(`https://${forbiddenHost}/`), 'the WebSocket tunnel was put to the guard');
    assert.ok((site.hits.get('/redirect-forbidden') ?? 0) >= 1, 'the redirecting URL itself was allowed');
    assert.equal(site.forbiddenConnections(), 0);
  });

  test('a main document that redirects into a refused address is a BlockedTarget, and the target is never contacted', async () => {
    await assert.rejects(renderer.render(`${site.origin}/redirect-forbidden`, { timeoutMs: RENDER_MS }), isProblem(BlockedTarget, /\/admin/));
    await assert.rejects(renderer.render(`${site.origin}/redirect-twice`, { timeoutMs: RENDER_MS }), isProblem(BlockedTarget));
    assert.equal(site.forbiddenConnections(), 0);
    await renderer.idle();
    assert.equal(renderer.openContexts(), 0);
    assert.ok(renderer.spareContexts() <= 1, 'at most one spare context');
  });

  test('a page that later navigates itself into a refused address is a BlockedTarget', async () => {
    await assert.rejects(renderer.render(`${site.origin}/late-escape`, { timeoutMs: RENDER_MS }), isProblem(BlockedTarget, /\/admin/));
    assert.equal(site.forbiddenConnections(), 0);
  });

  test('a main document the guard refuses is a BlockedTarget and the server sees no request', async () => {
    const blockAll = createBrowserRenderer({ executablePath, guardRequest: async () => false, userAgent: USER_AGENT });
    try {
      const before = site.hits.get('/plain') ?? 0;
      await assert.rejects(blockAll.render(`${site.origin}/plain?n=blocked`, { timeoutMs: RENDER_MS }), isProblem(BlockedTarget));
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
      await assert.rejects(throwing.render('http://nowhere.invalid/', { timeoutMs: RENDER_MS }), isProblem(UpstreamFailed, /resolve/));
    } finally {
      await throwing.close();
    }
  });

  test('a trusted render may use its own origin even where the guard refuses everything', async () => {
    const blockAll = createBrowserRenderer({ executablePath, guardRequest: async () => false, userAgent: USER_AGENT });
    try {
      const page = await blockAll.render(`${site.origin}/dynamic`, { timeoutMs: RENDER_MS, trusted: true });
      assert.match(page.html, /Tea tin/);
    } finally {
      await blockAll.close();
    }
  });

  test('a 404 main document is UpstreamFailed', async () => {
    await assert.rejects(renderer.render(`${site.origin}/missing`, { timeoutMs: RENDER_MS }), isProblem(UpstreamFailed, /404/));
  });

  test('non-HTML main documents (PDF, image) are UpstreamFailed', async () => {
    await assert.rejects(renderer.render(`${site.origin}/report.pdf`, { timeoutMs: RENDER_MS }), isProblem(UpstreamFailed, /pdf|download/i));
    await assert.rejects(renderer.render(`${site.origin}/photo`, { timeoutMs: RENDER_MS }), isProblem(UpstreamFailed, /image\/png/));
    await renderer.idle();
    assert.equal(renderer.openContexts(), 0);
    assert.ok(renderer.spareContexts() <= 1, 'at most one spare context');
  });

  test('a port nobody listens on is UpstreamFailed', async () => {
    const port = await freePort();
    await assert.rejects(renderer.render(`http://127.0.0.1:${port}/`, { timeoutMs: RENDER_MS }), isProblem(UpstreamFailed, /refused/));
  });

  test("a page that never answers is UpstreamTimeout at the render's timeout, and the next render still works", { timeout: 60_000 }, async () => {
    await assert.rejects(renderer.render(`${site.origin}/hang`, { timeoutMs: 1_000 }), isProblem(UpstreamTimeout, /within 1000 ms/));
    const page = await renderer.render(`${site.origin}/plain?n=after-hang`, { timeoutMs: RENDER_MS });
    assert.match(page.html, /after-hang/);
    await renderer.idle();
    assert.equal(renderer.openContexts(), 0);
    assert.ok(renderer.spareContexts() <= 1, 'at most one spare context');
  });

  test('a browser that stops answering is killed after the deadline, and the next render starts a new one', { timeout: 60_000 }, async () => {
    await renderer.render(`${site.origin}/plain?n=before-freeze`, { timeoutMs: RENDER_MS, waitFor: 'h1' });
    const pid = renderer.browserPid();
    assert.ok(pid !== undefined);
    const launchesBefore = renderer.launches;
    // Frozen, the browser answers nothing: only the renderer's own deadline can end the render.
    await whileFrozen(pid, () => assert.rejects(renderer.render(`${site.origin}/plain?n=frozen`, { timeoutMs: 1_000 }), isProblem(UpstreamTimeout, /within 1000 ms/)));
    const page = await renderer.render(`${site.origin}/plain?n=after-freeze`, { timeoutMs: RENDER_MS });
    assert.match(page.html, /after-freeze/);
    assert.equal(renderer.launches, launchesBefore + 1);
    assert.notEqual(renderer.browserPid(), pid);
  });

  test('two renders into a frozen browser, one on the spare and one opening its own context, both fail at their deadline', { timeout: 60_000 }, async () => {
    await renderer.render(`${site.origin}/plain?n=before-freeze-2`, { timeoutMs: RENDER_MS, waitFor: 'h1' });
    await renderer.idle();
    const pid = renderer.browserPid();
    assert.ok(pid !== undefined);
    const launchesBefore = renderer.launches;
    await whileFrozen(pid, async () => {
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
    const page = await renderer.render(`${site.origin}/plain?n=after-freeze-2`, { timeoutMs: RENDER_MS });
    assert.match(page.html, /after-freeze-2/);
    assert.equal(renderer.launches, launchesBefore + 1, 'the frozen browser was replaced');
  });

  test('a browser that crashed between renders is replaced by the next render', async () => {
    await renderer.render(`${site.origin}/plain?n=before-crash`, { timeoutMs: RENDER_MS, waitFor: 'h1' });
    const pid = renderer.browserPid();
    assert.ok(pid !== undefined);
    const launchesBefore = renderer.launches;
    process.kill(pid, 'SIGKILL');
    for (let waited = 0; renderer.browserPid() !== undefined && waited < 5_000; waited += 50) {
      await new Promise((r) => setTimeout(r, 50));
    }
    assert.equal(renderer.browserPid(), undefined, 'the renderer noticed the crash');
    const page = await renderer.render(`${site.origin}/plain?n=after-crash`, { timeoutMs: RENDER_MS, waitFor: 'h1' });
    assert.match(page.html, /after-crash/);
    assert.equal(renderer.launches, launchesBefore + 1);
  });

  test('20 sequential renders leave no open contexts', async () => {
    const launchesBefore = renderer.launches;
    for (let n = 0; n < 20; n += 1) {
      // waitFor skips the network-idle pause, which is not what this test is about.
      const page = await renderer.render(`${site.origin}/plain?n=seq-${n}`, { timeoutMs: RENDER_MS, waitFor: 'h1' });
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
      // The third waits for the launch and both renders before it: a generous timeout, since the order is what is checked.
      await Promise.all([0, 1, 2].map((n) => single.render(`${site.origin}/slow?n=${n}`, { timeoutMs: 60_000 }).then(() => finished.push(n))));
      assert.deepEqual(finished, [0, 1, 2]);
      assert.equal(single.launches, 1, 'concurrent first renders share one launch');
    } finally {
      await single.close();
    }
  });

  test('a render that waits longer than its timeout for a page slot is a 503 with Retry-After 2; close() refuses the waiters', { timeout: 60_000 }, async () => {
    const single = createBrowserRenderer({ executablePath, guardRequest, userAgent: USER_AGENT, maxConcurrentPages: 1 });
    try {
      const plainBefore = site.hits.get('/plain') ?? 0;
      const hangs = site.hits.get('/hang') ?? 0;
      // The one page slot is held by a page that is never answered, until close(): the 300 ms wait is all that can end.
      const holding = single.render(`${site.origin}/hang`, { timeoutMs: RENDER_MS });
      holding.catch(() => undefined);
      await until('the holding render to ask for its page', () => (site.hits.get('/hang') ?? 0) > hangs);
      await assert.rejects(single.render(`${site.origin}/plain?n=busy`, { timeoutMs: 300 }), (error: unknown) => {
        assert.ok(error instanceof ServiceUnavailable, `expected ServiceUnavailable, got ${String(error)}`);
        assert.match(error.message, /All 1 browser pages stayed busy for 300 ms/);
        assert.equal(error.headers['retry-after'], '2');
        return true;
      });
      const waiting = assert.rejects(single.render(`${site.origin}/plain?n=waiting`, { timeoutMs: RENDER_MS }), isProblem(ServiceUnavailable, /shutting down/));
      await until('the render to queue for the slot', () => single.waitingRenders() === 1);
      await single.close();
      await waiting;
      await assert.rejects(holding, isProblem(ServiceUnavailable));
      assert.equal(site.hits.get('/plain') ?? 0, plainBefore, 'neither waiting render reached the site');
    } finally {
      await single.close();
    }
  });
});

describe('browser renderer connect-time address check', { skip: noChromium }, () => {
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
      renderer.render(`http://rebind.test:${port}/plain?n=rebind`, { timeoutMs: RENDER_MS }),
      isProblem(BlockedTarget, /^http:\/\/rebind\.test:\d+\/plain\?n=rebind is not an allowed target/),
    );
    assert.equal(site.hits.get('/plain') ?? 0, before);
    assert.ok(asked.includes('rebind.test'), 'the proxy resolved the name through the guarded lookup');
  });

  test('fetch() and WebSockets to such a name never connect either', async () => {
    // "localhost" resolves to loopback in real DNS too, so without the connect-time check these would connect.
    const renderer = rendererWith(createGuardedLookup({ allowPrivate: false, resolve }));
    asked.length = 0;
    const page = await renderer.render(`${site.origin}/by-name`, { timeoutMs: RENDER_MS });
    assert.match(page.html, /rendered/);
    assert.ok(asked.includes('localhost'), 'the proxy resolved the name through the guarded lookup');
    assert.equal(site.forbiddenConnections(), 0);
  });

  test('the proxy dials the address the lookup checked (the name exists only in the injected resolver)', async () => {
    const renderer = rendererWith(createGuardedLookup({ allowPrivate: false, resolve, isBlocked: () => false }));
    const port = new URL(site.origin).port;
    const page = await renderer.render(`http://rebind.test:${port}/plain?n=via-lookup`, { timeoutMs: RENDER_MS, waitFor: 'h1' });
    assert.match(page.html, /via-lookup/);
  });

  test('a trusted render dials its own origin without the connect-time check, since the demo site may be private', async () => {
    const renderer = rendererWith(createGuardedLookup({ allowPrivate: false, resolve }));
    const trustedUrl = `http://localhost:${new URL(site.origin).port}/plain?n=trusted`;
    await assert.rejects(renderer.render(trustedUrl, { timeoutMs: RENDER_MS }), isProblem(BlockedTarget));
    const page = await renderer.render(trustedUrl, { timeoutMs: RENDER_MS, waitFor: 'h1', trusted: true });
    assert.match(page.html, /trusted/);
  });
});

describe('browser renderer robots.txt and size cap, as in static mode', { skip: noChromium }, () => {
  let site: Site;
  let renderer: BrowserRenderer;
  let fetcher: PageFetcher;
  const CAP = 1024 * 1024;
  /** What /large sends at most: far past the cap, so stopping early shows in the bytes sent. */
  const LARGE_BYTES = 40 * 1024 * 1024;
  let largeBytesSent = 0;

  before(async () => {
    site = await startSite({
      '/robots.txt': (_req, res) => send(res, 'User-agent: *\nDisallow: /private/\n', 'text/plain'),
      '/private/page': (_req, res) => send(res, html('<h1>private</h1>')),
      '/to-private': (_req, res) => {
        res.writeHead(302, { location: '/private/page' }).end();
      },
      '/goes-private': (_req, res) => send(res, html('<p>public at first</p>', `<script>setTimeout(() => { location.href = '/private/page'; }, 100);</script>`)),
      '/public': (_req, res) => send(res, html('<h1>public</h1>')),
      '/large': (_req, res) => {
        res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
        const chunk = Buffer.from(`<p>${'x'.repeat(64 * 1024 - 7)}</p>`);
        const pump = (): void => {
          while (!res.destroyed && largeBytesSent < LARGE_BYTES) {
            largeBytesSent += chunk.length;
            if (!res.write(chunk)) {
              res.once('drain', pump);
              return;
            }
          }
          if (!res.destroyed) res.end();
        };
        pump();
      },
      // A small document whose script makes it larger than the cap.
      '/grows': (_req, res) =>
        send(
          res,
          html(
            '<main></main>',
            `<script>setTimeout(() => { const e = document.createElement('section'); e.id = 'grown'; e.textContent = 'y'.repeat(${CAP + 64 * 1024}); document.body.append(e); }, 100);</script>`,
          ),
        ),
    });
    fetcher = createSafeFetcher({ ...loadConfig({}).scrape, allowPrivateNetworks: true });
    renderer = createBrowserRenderer({
      executablePath,
      guardRequest: async (url) => url.startsWith(`${site.origin}/`),
      assertRobotsAllow: (url, options) => fetcher.assertRobotsAllow(url, options),
      maxDocumentBytes: CAP,
      userAgent: USER_AGENT,
    });
  });

  after(async () => {
    await renderer.close();
    await fetcher.close();
    await site.close();
  });

  test('a page robots.txt disallows is a BlockedTarget naming robots.txt, before the browser starts or the page is asked for', async () => {
    await assert.rejects(
      renderer.render(`${site.origin}/private/page`, { timeoutMs: RENDER_MS }),
      isProblem(BlockedTarget, /robots\.txt of http:\/\/127\.0\.0\.1:\d+ disallows \/private\/page/),
    );
    assert.equal(site.hits.get('/private/page'), undefined);
    assert.equal(site.hits.get('/robots.txt'), 1);
    assert.equal(renderer.launches, 0, 'the browser was not even started');
  });

  test('a page robots.txt allows renders as before', async () => {
    const page = await renderer.render(`${site.origin}/public`, { timeoutMs: RENDER_MS, waitFor: 'h1' });
    assert.match(page.html, /<h1>public<\/h1>/);
  });

  test('a redirect into a disallowed path is a BlockedTarget once the browser has followed it', async () => {
    await assert.rejects(renderer.render(`${site.origin}/to-private`, { timeoutMs: RENDER_MS }), isProblem(BlockedTarget, /robots\.txt .* disallows \/private\/page/));
  });

  test('a page that navigates itself into a disallowed path is a BlockedTarget, and that path is never requested', async () => {
    const before = site.hits.get('/private/page') ?? 0;
    await assert.rejects(renderer.render(`${site.origin}/goes-private`, { timeoutMs: RENDER_MS }), isProblem(BlockedTarget, /robots\.txt .* disallows \/private\/page/));
    assert.equal(site.hits.get('/private/page') ?? 0, before);
  });

  test('a main document past the size cap is UpstreamFailed as in static mode, stopped before it has all arrived', async () => {
    await assert.rejects(renderer.render(`${site.origin}/large`, { timeoutMs: 30_000 }), (error: unknown) => {
      assert.ok(error instanceof UpstreamFailed, `expected UpstreamFailed, got ${String(error)}`);
      assert.match(error.message, new RegExp(`/large is larger than ${CAP} bytes`));
      assert.equal(error.permanent, true);
      return true;
    });
    assert.ok(largeBytesSent < LARGE_BYTES, `the server sent ${largeBytesSent} of ${LARGE_BYTES} bytes`);
    await renderer.idle();
    assert.equal(renderer.openContexts(), 0);
  });

  test('a document its scripts grow past the cap is UpstreamFailed too', async () => {
    // Reading a document past 1 MiB back from the browser takes seconds here alone; a loaded CI run took over 30.
    await assert.rejects(
      renderer.render(`${site.origin}/grows`, { timeoutMs: 2 * RENDER_MS, waitFor: '#grown' }),
      isProblem(UpstreamFailed, new RegExp(`/grows is larger than ${CAP} bytes`)),
    );
  });
});

describe('browser renderer abort signal', { skip: noChromium }, () => {
  let site: Site;
  let renderer: BrowserRenderer;
  const guardRequest = async (url: string): Promise<boolean> => url.startsWith(`${site.origin}/`);

  before(async () => {
    site = await startSite();
    renderer = createBrowserRenderer({ executablePath, guardRequest, userAgent: USER_AGENT });
  });

  after(async () => {
    await renderer.close();
    await site.close();
  });

  test('an abort stops a render at once: render() rejects with the abort reason and the context closes', async () => {
    // Starting the browser is not what this test measures.
    await renderer.render(`${site.origin}/plain?n=warm`, { timeoutMs: RENDER_MS, waitFor: 'h1' });
    const controller = new AbortController();
    const reason = new RunCancelled();
    const hangs = site.hits.get('/hang') ?? 0;
    const rendering = renderer.render(`${site.origin}/hang`, { timeoutMs: 20_000, signal: controller.signal });
    // Aborted once the page is being asked for; the answer is the abort's reason, not the 20 s timeout's.
    await until('the page to be asked for', () => (site.hits.get('/hang') ?? 0) > hangs);
    controller.abort(reason);
    await assert.rejects(rendering, (error: unknown) => {
      assert.equal(error, reason);
      return true;
    });
    await renderer.idle();
    assert.equal(renderer.openContexts(), 0);
  });

  test('an already aborted signal fails at once, asking nothing of the site', async () => {
    const before = site.hits.get('/plain') ?? 0;
    const reason = new RunCancelled();
    await assert.rejects(renderer.render(`${site.origin}/plain?n=never`, { timeoutMs: RENDER_MS, signal: AbortSignal.abort(reason) }), (error: unknown) => error === reason);
    assert.equal(site.hits.get('/plain') ?? 0, before);
  });

  test('an abort while waiting for a page slot stops the wait with the abort reason', { timeout: 60_000 }, async () => {
    const single = createBrowserRenderer({ executablePath, guardRequest, userAgent: USER_AGENT, maxConcurrentPages: 1 });
    try {
      const before = site.hits.get('/plain') ?? 0;
      const hangs = site.hits.get('/hang') ?? 0;
      // The one page slot is held by a page that is never answered, until close(): only the abort can end the wait.
      const holding = single.render(`${site.origin}/hang`, { timeoutMs: RENDER_MS });
      holding.catch(() => undefined);
      await until('the holding render to ask for its page', () => (site.hits.get('/hang') ?? 0) > hangs);
      const controller = new AbortController();
      const reason = new RunCancelled();
      const queued = single.render(`${site.origin}/plain?n=queued`, { timeoutMs: RENDER_MS, signal: controller.signal });
      await until('the render to queue for the slot', () => single.waitingRenders() === 1);
      controller.abort(reason);
      // The abort's reason, not the 503 that the 10 s wait for a slot would end in.
      await assert.rejects(queued, (error: unknown) => error === reason);
      assert.equal(site.hits.get('/plain') ?? 0, before);
    } finally {
      await single.close();
    }
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

describe('browser renderer close()', { skip: noChromium }, () => {
  test('close() twice is fine, and renders after close are refused with ServiceUnavailable', async () => {
    const site = await startSite();
    const renderer = createBrowserRenderer({ executablePath, guardRequest: async () => true, userAgent: USER_AGENT });
    try {
      await renderer.render(`${site.origin}/plain?n=x`, { timeoutMs: RENDER_MS });
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
