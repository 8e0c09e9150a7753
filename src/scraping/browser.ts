// Headless Chromium as a PageRenderer: one lazily started browser, a fresh context per render, every request guarded.
import { accessSync, constants as fsConstants, statSync } from 'node:fs';
import type { LookupFunction } from 'node:net';
import path from 'node:path';
import type { Browser, BrowserContext, BrowserServer, Page, Response, Route } from 'playwright-core';
import { BadRequest, BlockedTarget, HttpProblem, ServiceUnavailable, UpstreamFailed, UpstreamTimeout } from '../problems.js';
import { startGuardProxy, type GuardProxy } from './guard-proxy.js';
import { createHostLimiter } from './host-limiter.js';
import type { FetchedPage, PageRenderer, RenderOptions } from './types.js';

export interface BrowserLogger {
  warn(obj: object, msg?: string): void;
}

export interface BrowserRendererOptions {
  /** From `findChromium`; undefined means no browser is installed and every render answers 503. */
  executablePath: string | undefined;
  /**
   * Whether the browser may request `url`. Called for the page itself and for every request it makes,
   * redirect hops included; tunnelled connections (https, WebSocket) are asked as `https://host:port/`.
   * Returning false (or throwing) blocks the request; for the page itself a thrown HttpProblem (say
   * UpstreamFailed for a name that does not resolve) is passed on as is.
   */
  guardRequest: (url: string) => Promise<boolean>;
  /**
   * Resolves and vets each host as the proxy dials it (`createGuardedLookup`), so a name cannot pass
   * `guardRequest` and then resolve elsewhere at connect time. A trusted render's own origin is dialled
   * without it. Undefined dials with the system resolver.
   */
  connectLookup?: LookupFunction;
  userAgent: string;
  /** Pages rendered at once; further renders wait in FIFO order. Default 4. */
  maxConcurrentPages?: number;
  logger?: BrowserLogger;
}

/** The renderer plus honest read-outs that tests (and logs) use to check process and context reuse. */
export interface BrowserRenderer extends PageRenderer {
  /** How many times this renderer has launched a browser process (failed attempts included). */
  readonly launches: number;
  /**
   * Contexts of renders open in the running browser, the spare not counted (0 when none is running).
   * A finished render's context closes just after its answer; `idle()` waits for that.
   */
  openContexts(): number;
  /** Resolves when the contexts of finished renders have closed. */
  idle(): Promise<void>;
  /** Contexts made ahead for the next render: at most one. */
  spareContexts(): number;
  /** Process id of the running browser, if one is running. */
  browserPid(): number | undefined;
}

const NO_BROWSER_DETAIL = "No headless browser found: install Debian's chromium or set CHROMIUM_PATH.";

const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--disable-quic',
  '--no-first-run',
  '--disable-dev-shm-usage',
  // WebRTC's UDP would go around the guarding proxy straight to any address; keep it on the proxy.
  '--force-webrtc-ip-handling-policy',
  '--webrtc-ip-handling-policy=disable_non_proxied_udp',
];

const KNOWN_PATHS = ['/usr/bin/chromium', '/usr/bin/chromium-browser', '/usr/bin/google-chrome', '/usr/bin/google-chrome-stable'];
const KNOWN_NAMES = ['chromium', 'chromium-browser', 'google-chrome', 'google-chrome-stable'];

/** Aborted without asking the guard: a scrape reads markup, and these are most of a page's bytes. */
const SKIPPED_RESOURCE_TYPES = new Set(['image', 'font', 'media']);

const LAUNCH_TIMEOUT_MS = 30_000;
/** Extra time past `timeoutMs` before the hard deadline, so Playwright's own timeouts report first. */
const HARD_DEADLINE_MARGIN_MS = 750;
/** How long a context (or the whole browser on close()) may take to close before the process is killed. */
const CLOSE_GRACE_MS = 2_000;
/**
 * Network idle is a heuristic for "scripts have filled the page"; pages that poll forever never reach
 * it, and they should not cost the whole timeout each time.
 */
const NETWORK_IDLE_CAP_MS = 5_000;
const HTML_MEDIA_TYPES = new Set(['text/html', 'application/xhtml+xml']);

/**
 * The browser executable to use: `explicit` (CHROMIUM_PATH) when it is an executable file, else the
 * first of Debian's and Google's usual paths, else those names on `searchPath` (PATH).
 */
export function findChromium(explicit: string | undefined, searchPath: string): string | undefined {
  if (explicit !== undefined && explicit !== '' && isExecutableFile(explicit)) return explicit;
  const known = KNOWN_PATHS.find(isExecutableFile);
  if (known !== undefined) return known;
  for (const dir of searchPath.split(path.delimiter)) {
    if (dir === '') continue;
    for (const name of KNOWN_NAMES) {
      const candidate = path.join(dir, name);
      if (isExecutableFile(candidate)) return candidate;
    }
  }
  return undefined;
}

interface RunningBrowser {
  server: BrowserServer;
  browser: Browser;
  version: string;
}

/**
 * A PageRenderer on one Chromium process, started on the first render and restarted after a crash.
 * Playwright's route hook only sees the first hop of each request (redirects are followed inside the
 * browser), so every context also talks through a small per-render proxy that asks the guard again
 * for each connection: redirect hops, WebSockets and anything else the route hook never sees.
 *
 * A new context and page cost ~170 ms, a third of a warm render, so one spare (context, page and
 * proxy, refusing every request until a render binds its guard) is kept ready for the next render;
 * each render still gets a context nobody has used, and closes it when done.
 */
export function createBrowserRenderer(options: BrowserRendererOptions): BrowserRenderer {
  const { executablePath, guardRequest, connectLookup, userAgent, logger } = options;
  const pageLimit = Math.max(1, options.maxConcurrentPages ?? 4);
  // One key: the limiter's FIFO queue for a single host is exactly a pool of page slots.
  const pages = createHostLimiter(pageLimit);
  const closeSignal = new AbortController();
  let running: RunningBrowser | undefined;
  let launching: Promise<RunningBrowser> | undefined;
  let lastLaunchError: string | undefined;
  let launches = 0;
  let closing: Promise<void> | undefined;
  let spare: { browser: RunningBrowser; ready: Promise<Prepared> } | undefined;
  /** Contexts made as spares and not yet taken by a render. */
  const spareSet = new Set<BrowserContext>();
  /** Teardowns of finished renders' contexts, still running. */
  const retiring = new Set<Promise<void>>();

  const closedError = (): ServiceUnavailable => new ServiceUnavailable('The headless browser is shutting down.');

  function ensureBrowser(): Promise<RunningBrowser> {
    if (closing !== undefined) return Promise.reject(closedError());
    if (running !== undefined && running.browser.isConnected()) return Promise.resolve(running);
    // Shared so that concurrent first renders start one process, not one each.
    launching ??= launchBrowser().finally(() => {
      launching = undefined;
    });
    return launching;
  }

  async function launchBrowser(): Promise<RunningBrowser> {
    if (executablePath === undefined) throw new ServiceUnavailable(NO_BROWSER_DETAIL);
    if (!isExecutableFile(executablePath)) {
      throw new ServiceUnavailable(`No executable browser at ${executablePath}: install Debian's chromium or set CHROMIUM_PATH.`);
    }
    launches += 1;
    let server: BrowserServer | undefined;
    let browser: Browser;
    try {
      // Loaded on first use: playwright-core is most of the service's idle memory and start-up time.
      const { chromium } = await import('playwright-core');
      // launchServer rather than launch: its kill() is the public way to end a hung process.
      server = await chromium.launchServer({
        executablePath,
        args: CHROMIUM_ARGS,
        timeout: LAUNCH_TIMEOUT_MS,
        // The service's own shutdown closes the renderer; Playwright still kills the process on exit.
        handleSIGINT: false,
        handleSIGTERM: false,
        handleSIGHUP: false,
      });
      browser = await chromium.connect(server.wsEndpoint(), { timeout: LAUNCH_TIMEOUT_MS });
    } catch (error) {
      if (server !== undefined) await server.kill().catch(() => undefined);
      lastLaunchError = firstLine(error);
      throw new ServiceUnavailable(`Chromium at ${executablePath} could not be started: ${lastLaunchError}`, {
        cause: error,
        retryAfterSeconds: 5,
      });
    }
    lastLaunchError = undefined;
    const started: RunningBrowser = { server, browser, version: browser.version() };
    browser.on('disconnected', () => {
      if (running !== started) return;
      running = undefined;
      if (closing === undefined) logger?.warn({ executablePath }, 'headless browser disconnected; the next render starts a new one');
      void started.server.kill().catch(() => undefined);
    });
    if (closing !== undefined) {
      // close() ran while we were starting: nobody will use this process.
      await server.kill().catch(() => undefined);
      throw closedError();
    }
    running = started;
    return started;
  }

  async function killBrowser(target: RunningBrowser, reason: string): Promise<void> {
    if (running === target) running = undefined;
    logger?.warn({ reason }, 'killing the headless browser; the next render starts a new one');
    await target.server.kill().catch(() => undefined);
  }

  /** Waits at most `timeoutMs` for a page slot; close() rejects every waiter. */
  async function acquirePage(timeoutMs: number): Promise<() => void> {
    try {
      return await pages.acquire('browser', AbortSignal.any([AbortSignal.timeout(timeoutMs), closeSignal.signal]));
    } catch (error) {
      if (closeSignal.signal.aborted) throw closedError();
      // Waiting for a slot is our congestion, not the target's slowness: 503, not 504.
      throw new ServiceUnavailable(`All ${pageLimit} browser pages stayed busy for ${timeoutMs} ms.`, { cause: error, retryAfterSeconds: 2 });
    }
  }

  /** A fresh context with its page and proxy; nothing passes until `binding.guard` is set. */
  async function prepare(target: RunningBrowser): Promise<Prepared> {
    const binding: Binding = { guard: undefined, blockedNavigation: undefined, lastNavigationUrl: undefined };
    const proxy = await startGuardProxy({
      allow: (requested) => binding.guard?.check(requested) ?? Promise.resolve(false),
      lookup: connectLookup,
      trustedOrigin: () => binding.guard?.trustedOrigin,
    });
    let context: BrowserContext | undefined;
    try {
      context = await target.browser.newContext({
        userAgent,
        acceptDownloads: false,
        javaScriptEnabled: true,
        serviceWorkers: 'block',
        proxy: { server: proxy.url },
      });
      spareSet.add(context);
      const page = await context.newPage();
      // Pop-ups are still guarded (routes and proxy are per context), but nobody reads them.
      context.on('page', (other) => {
        if (other !== page) void other.close().catch(() => undefined);
      });
      page.on('request', (request) => {
        if (request.isNavigationRequest() && request.frame() === page.mainFrame()) binding.lastNavigationUrl = request.url();
      });
      await context.route('**/*', (route) => handleRoute(route, page, binding));
      return { browser: target, proxy, context, page, binding };
    } catch (error) {
      if (context !== undefined) {
        spareSet.delete(context);
        await settlesWithin(context.close().catch(() => undefined), CLOSE_GRACE_MS);
      }
      await proxy.close();
      throw error;
    }
  }

  /** Closes a context and its proxy; a context that will not close takes the browser down with it. */
  async function dispose(prepared: Prepared): Promise<void> {
    spareSet.delete(prepared.context);
    if (!(await settlesWithin(prepared.context.close().catch(() => undefined), CLOSE_GRACE_MS))) {
      await killBrowser(prepared.browser, `a browser context did not close within ${CLOSE_GRACE_MS} ms`);
    }
    await prepared.proxy.close();
  }

  /** The spare for `target`, else a new context. */
  function takePrepared(target: RunningBrowser): Promise<Prepared> {
    const previous = spare;
    spare = undefined;
    let taken: Promise<Prepared> | undefined;
    if (previous?.browser === target) {
      // A spare that failed to open is no reason to fail this render: make one now instead.
      taken = previous.ready.catch(() => prepare(target));
    } else if (previous !== undefined) {
      void previous.ready.then(dispose, () => undefined);
    }
    return (taken ?? prepare(target)).then((prepared) => {
      spareSet.delete(prepared.context);
      return prepared;
    });
  }

  /**
   * Opens the next render's context once this render's page has loaded and waits on its scripts:
   * opened at the start of a render, it competed with the navigation for the CPU (a new renderer
   * process) and cost that render more than it saved.
   */
  function replenish(target: RunningBrowser): void {
    if (spare !== undefined || closing !== undefined || running !== target || !target.browser.isConnected()) return;
    const ready = prepare(target);
    ready.catch(() => undefined);
    spare = { browser: target, ready };
  }

  async function renderOnce(target: RunningBrowser, url: string, renderOptions: RenderOptions, allow: RequestGuard): Promise<FetchedPage> {
    const timeoutMs = renderOptions.timeoutMs;
    const deadlineAt = Date.now() + timeoutMs;
    const preparedPromise = takePrepared(target).then((prepared) => {
      prepared.binding.guard = allow;
      return prepared;
    });
    const work = preparedPromise.then((prepared) => drivePage(prepared, url, renderOptions, deadlineAt, () => replenish(target)));
    // When the hard deadline wins, the abandoned work fails later as its context is torn down.
    work.catch(() => undefined);
    let timer: NodeJS.Timeout | undefined;
    // Playwright's timeouts cover navigation and waiting, but not page.content() on a page whose script
    // never yields, nor a browser that stopped answering; this one does not depend on the browser.
    const hardDeadline = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new UpstreamTimeout(`${url} did not finish rendering within ${timeoutMs} ms.`)),
        timeoutMs + HARD_DEADLINE_MARGIN_MS,
      );
    });
    let succeeded = false;
    try {
      const page = await Promise.race([work, hardDeadline]);
      succeeded = true;
      return page;
    } catch (error) {
      // Checked first: a browser that went away mid-render makes every step fail, and that is not the target's fault.
      if (closing !== undefined) throw closedError();
      if (!target.browser.isConnected()) {
        throw new ServiceUnavailable('The headless browser stopped during the render; try again.', { cause: error, retryAfterSeconds: 1 });
      }
      if (error instanceof HttpProblem) throw error;
      if (isPlaywrightTimeout(error)) {
        throw new UpstreamTimeout(`${url} did not finish rendering within ${timeoutMs} ms.`, { cause: error });
      }
      throw new UpstreamFailed(`Rendering ${url} failed: ${firstLine(error)}`, { cause: error });
    } finally {
      clearTimeout(timer);
      const retired = preparedPromise.then(dispose, () => undefined);
      if (succeeded) {
        // Closed behind the answer: the caller has its HTML and need not wait for the teardown.
        retiring.add(retired);
        void retired.finally(() => retiring.delete(retired));
      } else if (!(await settlesWithin(retired, 2 * CLOSE_GRACE_MS))) {
        // A failure may be a browser that stopped answering, even one still opening this render's
        // context: the teardown finds out first, and a browser that cannot finish it is killed.
        await killBrowser(target, `a browser context could not be opened or closed within ${2 * CLOSE_GRACE_MS} ms`);
      }
      replenish(target);
    }
  }

  return {
    get launches() {
      return launches;
    },

    openContexts() {
      return running?.browser.contexts().filter((context) => !spareSet.has(context)).length ?? 0;
    },

    async idle() {
      while (retiring.size > 0) await Promise.all(retiring);
    },

    spareContexts() {
      return running?.browser.contexts().filter((context) => spareSet.has(context)).length ?? 0;
    },

    browserPid() {
      return running?.server.process().pid;
    },

    async render(url: string, renderOptions: RenderOptions): Promise<FetchedPage> {
      if (closing !== undefined) throw closedError();
      const allow = createRequestGuard(guardRequest, renderOptions.trusted === true ? originOf(url) : undefined, logger);
      // Before queueing or launching: a refused target costs neither a page slot nor a browser start.
      if (!(await allow.check(url, { rethrow: true }))) {
        throw new BlockedTarget(`${url} is not an allowed target for the headless browser.`);
      }
      const release = await acquirePage(renderOptions.timeoutMs);
      try {
        const target = await ensureBrowser();
        return await renderOnce(target, url, renderOptions, allow);
      } finally {
        release();
      }
    },

    async status() {
      if (closing !== undefined) return { available: false, detail: 'closed' };
      if (executablePath === undefined) return { available: false, detail: 'not found: set CHROMIUM_PATH' };
      if (running !== undefined && running.browser.isConnected()) {
        return { available: true, detail: `chromium ${running.version} (running)` };
      }
      if (!isExecutableFile(executablePath)) return { available: false, detail: `not found at ${executablePath}: set CHROMIUM_PATH` };
      if (lastLaunchError !== undefined) return { available: false, detail: `failed to start ${executablePath}: ${lastLaunchError}` };
      return { available: true, detail: `not started: ${executablePath}` };
    },

    close(): Promise<void> {
      closing ??= (async () => {
        closeSignal.abort(closedError());
        await launching?.catch(() => undefined);
        const unused = spare;
        spare = undefined;
        await unused?.ready.then(dispose, () => undefined);
        await Promise.all(retiring);
        const target = running;
        running = undefined;
        if (target === undefined) return;
        await settlesWithin(target.browser.close().catch(() => undefined), CLOSE_GRACE_MS);
        if (!(await settlesWithin(target.server.close().catch(() => undefined), CLOSE_GRACE_MS))) {
          await target.server.kill().catch(() => undefined);
        }
      })();
      return closing;
    },
  };
}

/** The little of the DOM that code evaluated in the page uses (the service is compiled without DOM types). */
interface InPage {
  document: {
    querySelector(selector: string): unknown;
    doctype: { name: string } | null;
    documentElement: { outerHTML: string };
  };
  MutationObserver: new (callback: () => void) => {
    observe(target: unknown, options: Record<string, boolean>): void;
    disconnect(): void;
  };
  setTimeout(callback: () => void, ms: number): unknown;
  clearTimeout(timer: unknown): void;
}

/** A context with its page and guarding proxy, opened before the render that will use it. */
interface Prepared {
  browser: RunningBrowser;
  proxy: GuardProxy;
  context: BrowserContext;
  page: Page;
  binding: Binding;
}

/** What ties a prepared page to its render: the guard (unset: refuse everything) and what the page tried. */
interface Binding {
  guard: RequestGuard | undefined;
  /** A main-frame navigation the guard refused. */
  blockedNavigation: string | undefined;
  /** Where the main frame last tried to go. */
  lastNavigationUrl: string | undefined;
}

/** Navigates, waits for the content the caller wants, and reads the rendered HTML. */
async function drivePage(
  prepared: Prepared,
  url: string,
  options: RenderOptions,
  deadlineAt: number,
  onNavigated: () => void,
): Promise<FetchedPage> {
  const { page, proxy, binding } = prepared;
  const remaining = (): number => Math.max(1, deadlineAt - Date.now());
  let response: Response | null;
  try {
    response = await page.goto(url, { waitUntil: 'domcontentloaded', timeout: remaining() });
  } catch (error) {
    if (binding.blockedNavigation !== undefined) {
      throw new BlockedTarget(`${binding.blockedNavigation} is not an allowed target for the headless browser.`);
    }
    const lastNavigationUrl = binding.lastNavigationUrl ?? url;
    if (proxy.refused(lastNavigationUrl)) {
      throw refusedAt(url, 'redirected to', lastNavigationUrl);
    }
    throw navigationProblem(url, lastNavigationUrl, error, options.timeoutMs, proxy);
  }
  // The page now mostly waits on its scripts and the network: a good moment to open the next context.
  onNavigated();
  if (response === null) throw new UpstreamFailed(`${url} gave the browser no response.`);
  const finalUrl = response.url();
  // The proxy answers a refused or failed hop itself, so the page shows the proxy's 403/502: say why.
  if (proxy.refused(finalUrl)) {
    throw refusedAt(url, 'redirected to', finalUrl);
  }
  const failure = proxy.failure(finalUrl);
  if (failure !== undefined) throw new UpstreamFailed(`Could not reach ${finalUrl}: ${failure}.`);
  const status = response.status();
  if (status >= 400) throw new UpstreamFailed(`${finalUrl} answered with status ${status}.`, { permanent: status < 500 });
  // headers() is what the browser already sent us; headerValue() would ask it again (a round trip).
  const headerType = response.headers()['content-type'] ?? '';
  const mediaType = headerType.split(';')[0]?.trim().toLowerCase() ?? '';
  if (mediaType !== '' && !HTML_MEDIA_TYPES.has(mediaType)) {
    throw new UpstreamFailed(`${finalUrl} is ${mediaType}, not HTML.`, { permanent: true });
  }

  let html: string;
  if (options.waitFor !== undefined && options.waitFor !== '') {
    html = await readWhenPresent(page, options.waitFor, remaining, url, options.timeoutMs);
  } else {
    try {
      await page.waitForLoadState('networkidle', { timeout: Math.min(remaining(), NETWORK_IDLE_CAP_MS) });
    } catch (error) {
      // A page that keeps talking is normal; what has rendered so far is the answer.
      if (!isPlaywrightTimeout(error)) throw error;
    }
    html = await readContent(page, remaining);
  }

  // A script may have navigated the page after it loaded; the guard's answer applies to that page too.
  const shownUrl = page.url();
  if (proxy.refused(shownUrl)) throw refusedAt(url, 'navigated to', shownUrl);
  const lateFailure = proxy.failure(shownUrl);
  if (lateFailure !== undefined) throw new UpstreamFailed(`${url} navigated to ${shownUrl}, which failed: ${lateFailure}.`);
  // No Content-Type at all: Chromium sniffed the body and rendered it as a document.
  return { url: shownUrl, status, contentType: headerType === '' ? 'text/html' : headerType, html };
}

/** The proxy refused `shownUrl`: a hop away from `url`, or `url` itself when its name resolved to a blocked address. */
function refusedAt(url: string, how: string, shownUrl: string): BlockedTarget {
  if (shownUrl === url) return new BlockedTarget(`${url} is not an allowed target for the headless browser.`);
  return new BlockedTarget(`${url} ${how} ${shownUrl}, which is not an allowed target.`);
}

/**
 * Waits in the page for `selector` (present, not visible: scraped content is often hidden) and reads
 * the document the moment it appears, in one call: a MutationObserver sees the change at once, where
 * waitForSelector backs off to 500 ms between looks, and no second round trip reads the HTML.
 * A navigation during the wait restarts it on the new document; the in-page timer gives the
 * selector's own timeout, and a page that breaks it still meets the render's hard deadline.
 */
async function readWhenPresent(page: Page, selector: string, remaining: () => number, url: string, timeoutMs: number): Promise<string> {
  for (;;) {
    let html: string | null;
    try {
      html = await page.evaluate(inPageReadWhenPresent, { selector, ms: remaining() });
    } catch (error) {
      const reason = firstLine(error);
      if (/execution context was destroyed|navigat/i.test(reason) && remaining() > 1) {
        await page.waitForLoadState('domcontentloaded', { timeout: remaining() }).catch(() => undefined);
        continue;
      }
      if (/not a valid selector|SyntaxError/i.test(reason)) throw new BadRequest(`wait_for "${selector}" is not a valid selector.`);
      throw error;
    }
    if (html === null) throw new UpstreamTimeout(`The selector "${selector}" did not appear on ${url} within ${timeoutMs} ms.`);
    return html;
  }
}

/**
 * Runs in the page: the document's HTML once `selector` matches, or null after `ms`. Serialised into
 * the page, so it may use nothing from this module; nor may it name inner functions (const f = () =>),
 * which the test runs' transpiler wraps in a helper the page does not have.
 */
function inPageReadWhenPresent({ selector, ms }: { selector: string; ms: number }): Promise<string | null> {
  const { document: doc, MutationObserver: Observer, setTimeout: later, clearTimeout: cancel } = globalThis as unknown as InPage;
  const doctype = doc.doctype ? `<!DOCTYPE ${doc.doctype.name}>` : '';
  return new Promise((resolve) => {
    if (doc.querySelector(selector) !== null) {
      resolve(doctype + doc.documentElement.outerHTML);
      return;
    }
    const observer = new Observer(() => {
      if (doc.querySelector(selector) === null) return;
      observer.disconnect();
      cancel(timer);
      resolve(doctype + doc.documentElement.outerHTML);
    });
    const timer = later(() => {
      observer.disconnect();
      resolve(null);
    }, ms);
    observer.observe(doc, { childList: true, subtree: true, attributes: true, characterData: true });
  });
}

async function readContent(page: Page, remaining: () => number): Promise<string> {
  try {
    return await page.content();
  } catch (error) {
    // A late script or meta-refresh navigation can swap the document while we read it; read the new one.
    if (!/execution context was destroyed|navigat/i.test(firstLine(error))) throw error;
    await page.waitForLoadState('domcontentloaded', { timeout: remaining() }).catch(() => undefined);
    return await page.content();
  }
}

async function handleRoute(route: Route, page: Page, binding: Binding): Promise<void> {
  const request = route.request();
  try {
    if (SKIPPED_RESOURCE_TYPES.has(request.resourceType())) {
      await route.abort('blockedbyclient');
      return;
    }
    if (binding.guard !== undefined && (await binding.guard.check(request.url()))) {
      await route.continue();
      return;
    }
    if (request.isNavigationRequest() && request.frame() === page.mainFrame()) binding.blockedNavigation = request.url();
    await route.abort('blockedbyclient');
  } catch {
    // The context closed while the guard was thinking; the request went with it.
  }
}

function navigationProblem(url: string, lastUrl: string, error: unknown, timeoutMs: number, proxy: GuardProxy): HttpProblem {
  if (isPlaywrightTimeout(error)) {
    return new UpstreamTimeout(`${url} did not load within ${timeoutMs} ms.`, { cause: error });
  }
  const message = firstLine(error);
  const failure = proxy.failure(lastUrl) ?? proxy.failure(url);
  if (failure !== undefined) return new UpstreamFailed(`Could not reach ${lastUrl}: ${failure}.`, { cause: error });
  if (/download is starting/i.test(message)) return new UpstreamFailed(`${url} is a download, not HTML.`, { cause: error, permanent: true });
  const netError = /net::ERR_[A-Z_]+/.exec(message)?.[0];
  if (netError !== undefined) return new UpstreamFailed(`Could not load ${url}: ${netError}.`, { cause: error });
  return new UpstreamFailed(`Could not load ${url}: ${message}`, { cause: error });
}

/** Per-render answers from the guard, asked once per URL whether the route hook or the proxy asks. */
interface RequestGuard {
  /** With `rethrow`, an HttpProblem thrown by the guard propagates instead of meaning "blocked". */
  check(url: string, options?: { rethrow?: boolean }): Promise<boolean>;
  /** The origin a trusted render may always use, if this render is trusted. */
  readonly trustedOrigin: string | undefined;
}

function createRequestGuard(guardRequest: (url: string) => Promise<boolean>, trustedOrigin: string | undefined, logger: BrowserLogger | undefined): RequestGuard {
  const answers = new Map<string, Promise<boolean>>();
  return {
    trustedOrigin,
    async check(url, options = {}) {
      // An operator-configured page (the demo site) may live on a private address, and so may its assets.
      if (trustedOrigin !== undefined && originOf(url) === trustedOrigin) return true;
      let answer = answers.get(url);
      if (answer === undefined) {
        answer = Promise.resolve().then(() => guardRequest(url));
        answers.set(url, answer);
      }
      try {
        return await answer;
      } catch (error) {
        if (options.rethrow === true && error instanceof HttpProblem) throw error;
        if (!(error instanceof HttpProblem)) logger?.warn({ url, err: error }, 'request guard failed; request blocked');
        return false;
      }
    },
  };
}

function originOf(url: string): string | undefined {
  try {
    return new URL(url).origin;
  } catch {
    return undefined;
  }
}

/** True when `promise` settled within `ms`; never rejects. */
async function settlesWithin(promise: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), ms);
  });
  try {
    return await Promise.race([promise.then(() => true, () => true), expired]);
  } finally {
    clearTimeout(timer);
  }
}

function isExecutableFile(candidate: string): boolean {
  try {
    if (!statSync(candidate).isFile()) return false;
    accessSync(candidate, fsConstants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** Playwright errors carry a call log after the first line; the first line is the reason. */
function firstLine(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  return (message.split('\n')[0] ?? message).trim();
}

/** Playwright's TimeoutError, recognised without loading playwright-core up front. */
function isPlaywrightTimeout(error: unknown): boolean {
  return error instanceof Error && error.name === 'TimeoutError';
}
