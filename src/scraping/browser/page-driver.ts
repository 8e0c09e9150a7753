// One page of a render: its request hooks and size watch, then navigate, wait for the content the caller wants, and read it.
import type { BrowserContext, Page, Response, Route } from 'playwright-core';
import { WALL_SNIFF_BYTES, wallOfAnswer } from '../../egress/site-walls.js';
import { retryAfter } from '../../egress/retry-after.js';
import { BadRequest, BlockedTarget, HttpProblem, SiteBlocked, UpstreamFailed, UpstreamTimeout } from '../../problems.js';
import { pageTooLarge } from '../../egress/body.js';
import type { GuardProxy } from '../../egress/guard-proxy.js';
import type { FetchedPage } from '../../egress/page-fetcher.js';
import type { RequestGuard } from './request-guard.js';
import { firstLine, isNavigationRace, isPlaywrightTimeout } from './support.js';

/** What ties a page, made ahead of time, to the render that uses it; until bound, every request is refused. */
export interface Binding {
  guard: RequestGuard | undefined;
  /** Throws (BlockedTarget) when robots.txt disallows a document the main frame is about to show. */
  robots: ((url: string) => Promise<void>) | undefined;
  /** Stops the render at once with `problem` (its main document passed the size cap). */
  halt: ((problem: HttpProblem) => void) | undefined;
  /** Why a main-frame navigation was refused, when one was. */
  refusal: HttpProblem | undefined;
  /** Where the main frame last tried to go. */
  lastNavigationUrl: string | undefined;
}

/** A page ready to drive: the page, the proxy its context talks through, and its binding. */
export interface PageHandle {
  page: Page;
  proxy: GuardProxy;
  binding: Binding;
}

export interface DriveOptions {
  timeoutMs: number;
  /** CSS selector to wait for before reading the page; otherwise waits for network idle. */
  waitFor?: string;
  /** The main document's size cap (decoded bytes), as static mode's SCRAPE_MAX_BODY_BYTES. */
  maxDocumentBytes: number;
}

/** The little of the DOM that code evaluated in the page uses (the service is compiled without DOM types). */
interface InPage {
  document: {
    querySelector(selector: string): unknown;
    doctype: { name: string } | null;
    documentElement: { outerHTML: string };
  };
  MutationObserver: new (
    callback: () => void,
  ) => {
    observe(target: unknown, options: Record<string, boolean>): void;
    disconnect(): void;
  };
  setTimeout(callback: () => void, ms: number): unknown;
  clearTimeout(timer: unknown): void;
}

/** Aborted without asking the guard: a scrape reads markup, and these are most of a page's bytes. */
const SKIPPED_RESOURCE_TYPES = new Set(['image', 'font', 'media']);
const HTML_MEDIA_TYPES = new Set(['text/html', 'application/xhtml+xml']);
/**
 * Network idle is a heuristic for "scripts have filled the page"; pages that poll forever never reach
 * it, and they should not cost the whole timeout each time.
 */
const NETWORK_IDLE_CAP_MS = 5_000;

/**
 * Hooks a fresh page up before any render binds it: every request asks the binding's guard, pop-ups
 * are closed, and the main document's bytes are counted as they arrive.
 */
export async function instrumentPage(context: BrowserContext, page: Page, maxDocumentBytes: number): Promise<Binding> {
  const binding: Binding = { guard: undefined, robots: undefined, halt: undefined, refusal: undefined, lastNavigationUrl: undefined };
  // Pop-ups are still guarded (routes and proxy are per context), but nobody reads them.
  context.on('page', (other) => {
    if (other !== page) void other.close().catch(() => undefined);
  });
  page.on('request', (request) => {
    if (request.isNavigationRequest() && request.frame() === page.mainFrame()) binding.lastNavigationUrl = request.url();
  });
  await context.route('**/*', (route) => handleRoute(route, page, binding));
  await watchDocumentSize(context, page, binding, maxDocumentBytes);
  return binding;
}

/**
 * Stops the render as soon as a main-frame document passes `limit` decoded bytes, as static mode's
 * streamed cap does, rather than letting Chromium download and parse all of it first. Playwright
 * offers no progress events, so this listens to the DevTools protocol's Network domain directly.
 */
async function watchDocumentSize(context: BrowserContext, page: Page, binding: Binding, limit: number): Promise<void> {
  const session = await context.newCDPSession(page);
  const { frameTree } = await session.send('Page.getFrameTree');
  const mainFrameId = frameTree.frame.id;
  const documents = new Map<string, { url: string; bytes: number }>();
  session.on('Network.requestWillBeSent', (event) => {
    if (event.type === 'Document' && event.frameId === mainFrameId) documents.set(event.requestId, { url: event.request.url, bytes: 0 });
  });
  session.on('Network.dataReceived', (event) => {
    const document = documents.get(event.requestId);
    if (document === undefined) return;
    document.bytes += event.dataLength;
    if (document.bytes <= limit) return;
    documents.delete(event.requestId);
    binding.halt?.(tooLarge(document.url, limit));
  });
  const forget = (event: { requestId: string }): void => {
    documents.delete(event.requestId);
  };
  session.on('Network.loadingFinished', forget);
  session.on('Network.loadingFailed', forget);
  // This session only counts bytes: DevTools need not keep any response body for it.
  await session.send('Network.enable', { maxTotalBufferSize: 0, maxResourceBufferSize: 0 });
}

/** The same answer as static mode's: the service's own cap, named, refused the document. */
function tooLarge(url: string, limit: number): UpstreamFailed {
  return pageTooLarge(url, limit, 'SCRAPE_MAX_BODY_BYTES');
}

/** Where a render is, so that a deadline met outside Playwright's own timeouts can still say what it was waiting for. */
export interface DriveProgress {
  /** Set while the page has loaded and only the caller's selector is awaited. */
  waitingForSelector: boolean;
}

/** The render ran out of time waiting for `selector`: the same words whichever timer noticed first. */
export function selectorTimeout(selector: string, url: string, timeoutMs: number, cause?: unknown): UpstreamTimeout {
  return new UpstreamTimeout(`The selector "${selector}" did not appear on ${url} within ${timeoutMs} ms.`, { cause });
}

/** Navigates, waits for the content the caller wants, and reads the rendered HTML. */
export async function drivePage(
  handle: PageHandle,
  url: string,
  options: DriveOptions,
  deadlineAt: number,
  onNavigated: () => void,
  progress: DriveProgress,
): Promise<FetchedPage> {
  const { page, proxy, binding } = handle;
  const remaining = (): number => Math.max(1, deadlineAt - Date.now());
  let response: Response | null;
  try {
    response = await page.goto(url, { waitUntil: 'domcontentloaded', timeout: remaining() });
  } catch (error) {
    if (binding.refusal !== undefined) throw binding.refusal;
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
  // A bot check, a rate limit or a login, by the answer's headers and (an error answer) its page.
  const body = status >= 400 ? await response.text().catch(() => null) : null;
  const wall = wallOfAnswer(status, response.headers(), body === null ? null : body.slice(0, WALL_SNIFF_BYTES));
  if (wall !== null) throw new SiteBlocked(finalUrl, wall, { upstreamStatus: status, ...retryAfterOf(response.headers()) });
  if (status >= 400) throw new UpstreamFailed(`${finalUrl} answered with status ${status}.`, { permanent: status < 500 });
  // headers() is what the browser already sent us; headerValue() would ask it again (a round trip).
  const headerType = response.headers()['content-type'] ?? '';
  const mediaType = headerType.split(';')[0]?.trim().toLowerCase() ?? '';
  if (mediaType !== '' && !HTML_MEDIA_TYPES.has(mediaType)) {
    throw new UpstreamFailed(`${finalUrl} is ${mediaType}, not HTML.`, { permanent: true });
  }
  // Chromium follows redirects itself: the document they led to is checked once it is known.
  if (finalUrl !== url) await binding.robots?.(finalUrl);

  let html: string;
  if (options.waitFor !== undefined && options.waitFor !== '') {
    progress.waitingForSelector = true;
    html = await readWhenPresent(page, options.waitFor, remaining, url, options.timeoutMs);
    progress.waitingForSelector = false;
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
  if (binding.refusal !== undefined) throw binding.refusal;
  const shownUrl = page.url();
  if (proxy.refused(shownUrl)) throw refusedAt(url, 'navigated to', shownUrl);
  const lateFailure = proxy.failure(shownUrl);
  if (lateFailure !== undefined) throw new UpstreamFailed(`${url} navigated to ${shownUrl}, which failed: ${lateFailure}.`);
  if (shownUrl !== finalUrl) await binding.robots?.(shownUrl);
  // What scripts built counts too: the cap is on the document the extractors would parse.
  if (Buffer.byteLength(html) > options.maxDocumentBytes) throw tooLarge(shownUrl, options.maxDocumentBytes);
  // No Content-Type at all: Chromium sniffed the body and rendered it as a document.
  return { url: shownUrl, status, contentType: headerType === '' ? 'text/html' : headerType, html };
}

/** The answer's Retry-After, as the problem carries it. */
function retryAfterOf(headers: Record<string, string>): { retryAfterMs?: number } {
  const wait = retryAfter(headers['retry-after'], Date.now());
  return wait === undefined ? {} : { retryAfterMs: wait };
}

/** The proxy refused `shownUrl`: a hop away from `url`, or `url` itself when its name resolved to a blocked address. */
function refusedAt(url: string, how: string, shownUrl: string): BlockedTarget {
  if (shownUrl === url) return notAllowed(url);
  return new BlockedTarget(`${url} ${how} ${shownUrl}, which is not an allowed target.`);
}

export function notAllowed(url: string): BlockedTarget {
  return new BlockedTarget(`${url} is not an allowed target for the headless browser.`);
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
      if (isNavigationRace(error) && remaining() > 1) {
        await page.waitForLoadState('domcontentloaded', { timeout: remaining() }).catch(() => undefined);
        continue;
      }
      if (/not a valid selector|SyntaxError/i.test(firstLine(error))) throw new BadRequest(`wait_for "${selector}" is not a valid selector.`);
      throw error;
    }
    if (html === null) throw selectorTimeout(selector, url, timeoutMs);
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
    if (!isNavigationRace(error)) throw error;
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
    const mainNavigation = request.isNavigationRequest() && request.frame() === page.mainFrame();
    if (binding.guard !== undefined && (await binding.guard.check(request.url()))) {
      // A document the page itself navigates to obeys robots.txt before it is requested, as in static mode.
      const refusal = mainNavigation ? await robotsRefusal(binding, request.url()) : undefined;
      if (refusal === undefined) {
        await route.continue();
        return;
      }
      binding.refusal = refusal;
    } else if (mainNavigation) {
      binding.refusal = notAllowed(request.url());
    }
    await route.abort('blockedbyclient');
  } catch {
    // The context closed while the guard was thinking; the request went with it.
  }
}

/** The problem robots.txt makes of `url`, if any; failures other than a refusal let the request pass. */
async function robotsRefusal(binding: Binding, url: string): Promise<HttpProblem | undefined> {
  try {
    await binding.robots?.(url);
    return undefined;
  } catch (error) {
    if (error instanceof HttpProblem) return error;
    return undefined;
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
