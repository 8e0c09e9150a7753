// A render whose time runs out in each of its phases, each phase reached by an event: the page holds it (a
// wait whose timer the test fires, a script that blocks its thread on a request the site holds), and the
// render's hard deadline is a timer the test fires once the page is provably there, whatever the machine's speed.
import assert from 'node:assert/strict';
import type http from 'node:http';
import { after, before, describe, test } from 'node:test';
import { UpstreamTimeout } from '../../../src/problems.js';
import { createBrowserRenderer, type BrowserRenderer } from '../../../src/scraping/browser/index.js';
import { until } from '../../wait.js';
import { executablePath, html, isProblem, noChromium, RENDER_MS, send, startSite, USER_AGENT, type Site } from './browser-site.js';

/** Requests the site leaves unanswered until the test lets them go. */
function parking() {
  const parked = new Set<http.ServerResponse>();
  return {
    handler: (_req: http.IncomingMessage, res: http.ServerResponse) => {
      parked.add(res);
      res.on('close', () => parked.delete(res));
    },
    count: () => parked.size,
    release: () => {
      for (const res of parked) if (!res.destroyed) send(res, 'ok', 'text/plain');
      parked.clear();
    },
  };
}

/** Blocks the page's thread on a synchronous request to /block, which the site holds: a script that does not yield. */
const BLOCK = `function block() { const request = new XMLHttpRequest(); request.open('GET', '/block', false); request.send(); }`;

/** Runs `hook()` the first time the render's in-page wait looks for `.never-there`, as it starts waiting. */
const ON_WAIT = `function onWait(hook) {
  let seen = false;
  const query = document.querySelector.bind(document);
  document.querySelector = (selector) => {
    if (selector === '.never-there' && !seen) {
      seen = true;
      hook();
    }
    return query(selector);
  };
}`;

describe('browser renderer deadlines, each met in the phase it names', { skip: noChromium }, () => {
  let site: Site;
  let renderer: BrowserRenderer;
  /** The hard deadlines of renders under way: each fires only when the test fires it. */
  const armed = new Set<() => void>();
  const expiry = parking();
  const blocking = parking();

  before(async () => {
    site = await startSite({
      '/expire-wait': expiry.handler,
      '/block': blocking.handler,
      // The render's wait for its selector arms one timer in the page; this page hands it to the test.
      '/waits-for-nothing': (_req, res) =>
        send(
          res,
          html(
            '<p>nothing comes</p>',
            `<script>${ON_WAIT}
            let waitStarted = false;
            onWait(() => { waitStarted = true; });
            const later = window.setTimeout.bind(window);
            window.setTimeout = (callback, ms, ...rest) => {
              if (!waitStarted) return later(callback, ms, ...rest);
              waitStarted = false;
              fetch('/expire-wait').then(() => callback(), () => callback());
              return 0;
            };</script>`,
          ),
        ),
      '/blocks': (_req, res) => send(res, html('<p>blocking</p>', `<script>${BLOCK}\ndocument.addEventListener('DOMContentLoaded', () => setTimeout(block, 0));</script>`)),
      '/blocks-while-waited-for': (_req, res) => send(res, html('<p>blocking</p>', `<script>${BLOCK}\n${ON_WAIT}\nonWait(() => setTimeout(block, 0));</script>`)),
    });
    renderer = createBrowserRenderer({
      executablePath,
      guardRequest: async () => true,
      userAgent: USER_AGENT,
      hardDeadline: (_ms, expire) => {
        armed.add(expire);
        return () => armed.delete(expire);
      },
    });
    // Starting the browser is not what these tests are about.
    await renderer.render(`${site.origin}/plain?n=warm`, { timeoutMs: RENDER_MS, waitFor: 'h1' });
  });

  after(async () => {
    expiry.release();
    blocking.release();
    await renderer.close();
    await site.close();
  });

  /** Waits for `what` while `rendering` is under way; a render that ends first fails the wait with its own error. */
  const whileRendering = async (rendering: Promise<unknown>, what: string, probe: () => boolean) => {
    const ended = rendering.then(
      () => Promise.reject(new Error(`the render ended before ${what}`)),
      (error: unknown) => Promise.reject(error),
    );
    ended.catch(() => undefined);
    await Promise.race([until(what, probe), ended]);
  };

  const fireHardDeadline = () => {
    assert.equal(armed.size, 1, 'one render under way');
    for (const expire of armed) expire();
  };

  test("waitFor a selector that never appears: when the page's wait for it runs out, UpstreamTimeout naming it and the render's own timeout", { timeout: 60_000 }, async () => {
    const rendering = renderer.render(`${site.origin}/waits-for-nothing`, { timeoutMs: RENDER_MS, waitFor: '.never-there' });
    rendering.catch(() => undefined);
    await whileRendering(rendering, "the render's wait for the selector to arm its timer in the page", () => expiry.count() === 1);
    expiry.release();
    await assert.rejects(rendering, isProblem(UpstreamTimeout, new RegExp(`^The selector "\\.never-there" did not appear on .*/waits-for-nothing within ${RENDER_MS} ms\\.$`)));
    await renderer.idle();
    assert.equal(renderer.openContexts(), 0);
  });

  test('a page whose script never yields meets the hard deadline, and the next render still works', { timeout: 60_000 }, async () => {
    const rendering = renderer.render(`${site.origin}/blocks`, { timeoutMs: RENDER_MS });
    rendering.catch(() => undefined);
    await whileRendering(rendering, "the page's script to block its thread on a request the site holds", () => blocking.count() === 1);
    fireHardDeadline();
    await assert.rejects(rendering, isProblem(UpstreamTimeout, new RegExp(`/blocks did not finish rendering within ${RENDER_MS} ms\\.$`)));
    blocking.release();
    const page = await renderer.render(`${site.origin}/plain?n=after-block`, { timeoutMs: RENDER_MS });
    assert.match(page.html, /after-block/);
  });

  test('the hard deadline met while the render waits for its selector names the selector', { timeout: 60_000 }, async () => {
    // The page loads and the render's wait starts; then the page's script holds the thread the wait's
    // own timer would run on: only the hard deadline can end the render, and it knows what was awaited.
    const rendering = renderer.render(`${site.origin}/blocks-while-waited-for`, { timeoutMs: RENDER_MS, waitFor: '.never-there' });
    rendering.catch(() => undefined);
    await whileRendering(rendering, 'the page to block its thread while the render waits for the selector', () => blocking.count() === 1);
    fireHardDeadline();
    await assert.rejects(
      rendering,
      isProblem(UpstreamTimeout, new RegExp(`^The selector "\\.never-there" did not appear on .*/blocks-while-waited-for within ${RENDER_MS} ms\\.$`)),
    );
    blocking.release();
    const page = await renderer.render(`${site.origin}/plain?n=after-block-wait`, { timeoutMs: RENDER_MS, waitFor: 'h1' });
    assert.match(page.html, /after-block-wait/);
  });
});
