// Headless Chromium as a PageRenderer: one lazily started browser, a fresh context per render, every request guarded.
import { accessSync, constants as fsConstants, statSync } from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import path from 'node:path';
import type { Duplex } from 'node:stream';
import { chromium, errors as playwrightErrors } from 'playwright-core';
import type { Browser, BrowserContext, BrowserServer, Page, Response, Route } from 'playwright-core';
import { BadRequest, BlockedTarget, HttpProblem, ServiceUnavailable, UpstreamFailed, UpstreamTimeout } from '../problems.js';
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
  userAgent: string;
  /** Pages rendered at once; further renders wait in FIFO order. Default 4. */
  maxConcurrentPages?: number;
  logger?: BrowserLogger;
}

/** The renderer plus honest read-outs that tests (and logs) use to check process and context reuse. */
export interface BrowserRenderer extends PageRenderer {
  /** How many times this renderer has launched a browser process (failed attempts included). */
  readonly launches: number;
  /** Contexts currently open in the running browser (0 when none is running). */
  openContexts(): number;
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
 * first of Debian's and Google's usual paths, else those names on `searchPath` (defaults to PATH).
 */
export function findChromium(explicit?: string, searchPath: string = process.env.PATH ?? ''): string | undefined {
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
 */
export function createBrowserRenderer(options: BrowserRendererOptions): BrowserRenderer {
  const { executablePath, guardRequest, userAgent, logger } = options;
  const gate = createFifoGate(Math.max(1, options.maxConcurrentPages ?? 4));
  let running: RunningBrowser | undefined;
  let launching: Promise<RunningBrowser> | undefined;
  let lastLaunchError: string | undefined;
  let launches = 0;
  let closing: Promise<void> | undefined;

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

  async function renderOnce(target: RunningBrowser, url: string, renderOptions: RenderOptions, allow: RequestGuard): Promise<FetchedPage> {
    const timeoutMs = renderOptions.timeoutMs;
    const deadlineAt = Date.now() + timeoutMs;
    const proxy = await startGuardProxy(allow);
    const contextPromise = target.browser.newContext({
      userAgent,
      acceptDownloads: false,
      javaScriptEnabled: true,
      serviceWorkers: 'block',
      proxy: { server: proxy.url },
    });
    const work = contextPromise.then((context) => drivePage(context, url, renderOptions, deadlineAt, allow, proxy));
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
    try {
      return await Promise.race([work, hardDeadline]);
    } catch (error) {
      // Checked first: a browser that went away mid-render makes every step fail, and that is not the target's fault.
      if (closing !== undefined) throw closedError();
      if (!target.browser.isConnected()) {
        throw new ServiceUnavailable('The headless browser stopped during the render; try again.', { cause: error, retryAfterSeconds: 1 });
      }
      if (error instanceof HttpProblem) throw error;
      if (error instanceof playwrightErrors.TimeoutError) {
        throw new UpstreamTimeout(`${url} did not finish rendering within ${timeoutMs} ms.`, { cause: error });
      }
      throw new UpstreamFailed(`Rendering ${url} failed: ${firstLine(error)}`, { cause: error });
    } finally {
      clearTimeout(timer);
      const contextClosed = contextPromise.then(
        (context) => context.close().catch(() => undefined),
        () => undefined,
      );
      if (!(await settlesWithin(contextClosed, CLOSE_GRACE_MS))) {
        await killBrowser(target, `a browser context did not close within ${CLOSE_GRACE_MS} ms`);
      }
      await proxy.close();
    }
  }

  return {
    get launches() {
      return launches;
    },

    openContexts() {
      return running?.browser.contexts().length ?? 0;
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
      await gate.acquire(renderOptions.timeoutMs);
      try {
        const target = await ensureBrowser();
        return await renderOnce(target, url, renderOptions, allow);
      } finally {
        gate.release();
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
        gate.rejectWaiting(closedError());
        await launching?.catch(() => undefined);
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

/** Navigates, waits for the content the caller wants, and reads the rendered HTML. */
async function drivePage(
  context: BrowserContext,
  url: string,
  options: RenderOptions,
  deadlineAt: number,
  allow: RequestGuard,
  proxy: GuardProxy,
): Promise<FetchedPage> {
  const remaining = (): number => Math.max(1, deadlineAt - Date.now());
  const page = await context.newPage();
  // Pop-ups are still guarded (routes and proxy are per context), but nobody reads them.
  context.on('page', (other) => {
    if (other !== page) void other.close().catch(() => undefined);
  });
  let blockedNavigation: string | undefined;
  let lastNavigationUrl = url;
  page.on('request', (request) => {
    if (request.isNavigationRequest() && request.frame() === page.mainFrame()) lastNavigationUrl = request.url();
  });
  await context.route('**/*', (route) =>
    handleRoute(route, page, allow, (blocked) => {
      blockedNavigation = blocked;
    }),
  );

  let response: Response | null;
  try {
    response = await page.goto(url, { waitUntil: 'domcontentloaded', timeout: remaining() });
  } catch (error) {
    if (blockedNavigation !== undefined) {
      throw new BlockedTarget(`${blockedNavigation} is not an allowed target for the headless browser.`);
    }
    if (proxy.refused(lastNavigationUrl)) {
      throw new BlockedTarget(`${url} redirected to ${lastNavigationUrl}, which is not an allowed target.`);
    }
    throw navigationProblem(url, lastNavigationUrl, error, options.timeoutMs, proxy);
  }
  if (response === null) throw new UpstreamFailed(`${url} gave the browser no response.`);
  const finalUrl = response.url();
  // The proxy answers a refused or failed hop itself, so the page shows the proxy's 403/502: say why.
  if (proxy.refused(finalUrl)) {
    throw new BlockedTarget(`${url} redirected to ${finalUrl}, which is not an allowed target.`);
  }
  const failure = proxy.failure(finalUrl);
  if (failure !== undefined) throw new UpstreamFailed(`Could not reach ${finalUrl}: ${failure}.`);
  const status = response.status();
  if (status >= 400) throw new UpstreamFailed(`${finalUrl} answered with status ${status}.`);
  const headerType = (await response.headerValue('content-type')) ?? '';
  const mediaType = headerType.split(';')[0]?.trim().toLowerCase() ?? '';
  if (mediaType !== '' && !HTML_MEDIA_TYPES.has(mediaType)) {
    throw new UpstreamFailed(`${finalUrl} is ${mediaType}, not HTML.`);
  }

  if (options.waitFor !== undefined && options.waitFor !== '') {
    try {
      // 'attached', not 'visible': scraped content is often hidden (collapsed, off-screen, headless viewport).
      await page.waitForSelector(options.waitFor, { state: 'attached', timeout: remaining() });
    } catch (error) {
      if (error instanceof playwrightErrors.TimeoutError) {
        throw new UpstreamTimeout(`The selector "${options.waitFor}" did not appear on ${url} within ${options.timeoutMs} ms.`, { cause: error });
      }
      if (/selector|unexpected token/i.test(firstLine(error))) {
        throw new BadRequest(`wait_for "${options.waitFor}" is not a valid selector.`);
      }
      throw error;
    }
  } else {
    try {
      await page.waitForLoadState('networkidle', { timeout: Math.min(remaining(), NETWORK_IDLE_CAP_MS) });
    } catch (error) {
      // A page that keeps talking is normal; what has rendered so far is the answer.
      if (!(error instanceof playwrightErrors.TimeoutError)) throw error;
    }
  }

  const html = await readContent(page, remaining);
  // A script may have navigated the page after it loaded; the guard's answer applies to that page too.
  const shownUrl = page.url();
  if (proxy.refused(shownUrl)) throw new BlockedTarget(`${url} navigated to ${shownUrl}, which is not an allowed target.`);
  const lateFailure = proxy.failure(shownUrl);
  if (lateFailure !== undefined) throw new UpstreamFailed(`${url} navigated to ${shownUrl}, which failed: ${lateFailure}.`);
  // No Content-Type at all: Chromium sniffed the body and rendered it as a document.
  return { url: shownUrl, status, contentType: headerType === '' ? 'text/html' : headerType, html };
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

async function handleRoute(route: Route, page: Page, allow: RequestGuard, onBlockedNavigation: (url: string) => void): Promise<void> {
  const request = route.request();
  try {
    if (SKIPPED_RESOURCE_TYPES.has(request.resourceType())) {
      await route.abort('blockedbyclient');
      return;
    }
    if (await allow.check(request.url())) {
      await route.continue();
      return;
    }
    if (request.isNavigationRequest() && request.frame() === page.mainFrame()) onBlockedNavigation(request.url());
    await route.abort('blockedbyclient');
  } catch {
    // The context closed while the guard was thinking; the request went with it.
  }
}

function navigationProblem(url: string, lastUrl: string, error: unknown, timeoutMs: number, proxy: GuardProxy): HttpProblem {
  if (error instanceof playwrightErrors.TimeoutError) {
    return new UpstreamTimeout(`${url} did not load within ${timeoutMs} ms.`, { cause: error });
  }
  const message = firstLine(error);
  const failure = proxy.failure(lastUrl) ?? proxy.failure(url);
  if (failure !== undefined) return new UpstreamFailed(`Could not reach ${lastUrl}: ${failure}.`, { cause: error });
  if (/download is starting/i.test(message)) return new UpstreamFailed(`${url} is a download, not HTML.`, { cause: error });
  const netError = /net::ERR_[A-Z_]+/.exec(message)?.[0];
  if (netError !== undefined) return new UpstreamFailed(`Could not load ${url}: ${netError}.`, { cause: error });
  return new UpstreamFailed(`Could not load ${url}: ${message}`, { cause: error });
}

/** Per-render answers from the guard, asked once per URL whether the route hook or the proxy asks. */
interface RequestGuard {
  /** With `rethrow`, an HttpProblem thrown by the guard propagates instead of meaning "blocked". */
  check(url: string, options?: { rethrow?: boolean }): Promise<boolean>;
}

function createRequestGuard(guardRequest: (url: string) => Promise<boolean>, trustedOrigin: string | undefined, logger: BrowserLogger | undefined): RequestGuard {
  const answers = new Map<string, Promise<boolean>>();
  return {
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

/** A forward proxy, local to one render, that lets through only what the guard allows. */
interface GuardProxy {
  readonly url: string;
  /** True when the proxy refused this URL (plain HTTP) or its host:port (tunnelled). */
  refused(url: string): boolean;
  /** Why connecting to this URL (or its host:port) failed, e.g. "connection refused". */
  failure(url: string): string | undefined;
  close(): Promise<void>;
}

// Hop-by-hop headers describe one connection, not the message, and must not be forwarded.
const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'proxy-connection', 'proxy-authorization', 'proxy-authenticate', 'te', 'trailer', 'transfer-encoding', 'upgrade']);

async function startGuardProxy(allow: RequestGuard): Promise<GuardProxy> {
  const refusedUrls = new Set<string>();
  const refusedAuthorities = new Set<string>();
  const failures = new Map<string, string>();
  const sockets = new Set<Duplex>();
  // The guard may answer after the render ended; nothing should be dialled for a finished render.
  let closed = false;
  const agent = new http.Agent({ keepAlive: true });
  const track = (socket: Duplex): void => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  };

  const server = http.createServer((req, res) => {
    const target = req.url ?? '';
    // Chromium sends absolute http:// URLs to an HTTP proxy; https and WebSockets come as CONNECT.
    if (!/^http:\/\//i.test(target)) {
      res.writeHead(400, { 'content-type': 'text/plain' }).end('absolute http URL expected');
      return;
    }
    void allow.check(target).then((allowed) => {
      if (closed) {
        res.destroy();
        return;
      }
      if (!allowed) {
        refusedUrls.add(target);
        res.writeHead(403, { 'content-type': 'text/plain' }).end('blocked by the scraper');
        return;
      }
      const upstream = http.request(target, { method: req.method, headers: withoutHopByHop(req.rawHeaders), agent }, (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.statusMessage, withoutHopByHop(answer.rawHeaders));
        answer.pipe(res);
        answer.on('error', () => res.destroy());
      });
      upstream.on('error', (error) => {
        failures.set(target, describeSocketError(error));
        if (res.headersSent) res.destroy();
        else res.writeHead(502, { 'content-type': 'text/plain' }).end('upstream unreachable');
      });
      res.on('close', () => {
        if (!res.writableFinished) upstream.destroy();
      });
      req.pipe(upstream);
    });
  });

  server.on('connection', track);
  server.on('connect', (req: http.IncomingMessage, client: Duplex, head: Buffer) => {
    track(client);
    client.on('error', () => undefined);
    const authority = parseAuthority(req.url ?? '');
    if (authority === undefined) {
      client.end('HTTP/1.1 400 Bad Request\r\n\r\n');
      return;
    }
    void allow.check(`https://${authority.key}/`).then((allowed) => {
      if (closed) {
        client.destroy();
        return;
      }
      if (!allowed) {
        refusedAuthorities.add(authority.key);
        client.end('HTTP/1.1 403 Forbidden\r\n\r\n');
        return;
      }
      const upstream = net.connect({ host: authority.host, port: authority.port });
      track(upstream);
      let established = false;
      upstream.once('connect', () => {
        established = true;
        client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
        if (head.length > 0) upstream.write(head);
        upstream.pipe(client);
        client.pipe(upstream);
      });
      upstream.on('error', (error) => {
        if (established) {
          client.destroy();
          return;
        }
        failures.set(authority.key, describeSocketError(error));
        client.end('HTTP/1.1 502 Bad Gateway\r\n\r\n');
      });
      client.on('close', () => upstream.destroy());
    });
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const port = (server.address() as net.AddressInfo).port;

  return {
    url: `http://127.0.0.1:${port}`,
    refused(url) {
      if (refusedUrls.has(url)) return true;
      const key = authorityOf(url);
      return key !== undefined && refusedAuthorities.has(key);
    },
    failure(url) {
      const key = authorityOf(url);
      return failures.get(url) ?? (key === undefined ? undefined : failures.get(key));
    },
    async close() {
      closed = true;
      // Held-open upstream responses would keep server.close() waiting forever.
      for (const socket of sockets) socket.destroy();
      agent.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

function withoutHopByHop(raw: string[]): string[] {
  const named = new Set(HOP_BY_HOP);
  for (let i = 0; i + 1 < raw.length; i += 2) {
    if (raw[i]?.toLowerCase() === 'connection') {
      for (const token of (raw[i + 1] ?? '').split(',')) named.add(token.trim().toLowerCase());
    }
  }
  const kept: string[] = [];
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const name = raw[i] as string;
    if (!named.has(name.toLowerCase())) kept.push(name, raw[i + 1] as string);
  }
  return kept;
}

/** `host:port` of a CONNECT request line, with IPv6 brackets kept in the key and dropped for dialling. */
function parseAuthority(authority: string): { key: string; host: string; port: number } | undefined {
  const match = /^(\[[^\]]+\]|[^:[\]]+):(\d{1,5})$/.exec(authority);
  if (match === null) return undefined;
  const hostPart = (match[1] as string).toLowerCase();
  const port = Number(match[2]);
  if (port < 1 || port > 65_535) return undefined;
  const host = hostPart.startsWith('[') ? hostPart.slice(1, -1) : hostPart;
  return { key: `${hostPart}:${port}`, host, port };
}

function authorityOf(url: string): string | undefined {
  try {
    const parsed = new URL(url);
    const defaultPort = parsed.protocol === 'https:' || parsed.protocol === 'wss:' ? 443 : 80;
    return `${parsed.hostname.toLowerCase()}:${parsed.port === '' ? defaultPort : parsed.port}`;
  } catch {
    return undefined;
  }
}

function originOf(url: string): string | undefined {
  try {
    return new URL(url).origin;
  } catch {
    return undefined;
  }
}

function describeSocketError(error: Error): string {
  const code = (error as NodeJS.ErrnoException).code;
  switch (code) {
    case 'ECONNREFUSED':
      return 'connection refused';
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return 'host name not resolved';
    case 'ECONNRESET':
      return 'connection reset';
    case 'ETIMEDOUT':
      return 'connection timed out';
    case 'EHOSTUNREACH':
    case 'ENETUNREACH':
      return 'host unreachable';
    default:
      return code ?? error.message;
  }
}

/** FIFO admission for a fixed number of slots; a released slot passes straight to the oldest waiter. */
interface FifoGate {
  /** Waits at most `timeoutMs` for a slot, then gives up with a 503. */
  acquire(timeoutMs: number): Promise<void>;
  release(): void;
  rejectWaiting(error: Error): void;
}

function createFifoGate(limit: number): FifoGate {
  let active = 0;
  const queue: Array<{ grant: () => void; fail: (error: Error) => void }> = [];
  return {
    acquire(timeoutMs) {
      if (active < limit) {
        active += 1;
        return Promise.resolve();
      }
      return new Promise<void>((resolve, reject) => {
        const waiter = {
          grant: () => {
            clearTimeout(timer);
            resolve();
          },
          fail: (error: Error) => {
            clearTimeout(timer);
            reject(error);
          },
        };
        // Waiting for a slot is our congestion, not the target's slowness: 503, not 504.
        const timer = setTimeout(() => {
          queue.splice(queue.indexOf(waiter), 1);
          reject(new ServiceUnavailable(`All ${limit} browser pages stayed busy for ${timeoutMs} ms.`, { retryAfterSeconds: 2 }));
        }, timeoutMs);
        queue.push(waiter);
      });
    },
    release() {
      const next = queue.shift();
      if (next !== undefined) next.grant();
      else active -= 1;
    },
    rejectWaiting(error) {
      for (const waiter of queue.splice(0)) waiter.fail(error);
    },
  };
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
