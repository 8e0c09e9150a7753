// Headless Chromium as a PageRenderer: one lazily started browser, a fresh context per render, every request guarded.
import type { LookupFunction } from 'node:net';
import { HttpProblem, ServiceUnavailable, UpstreamFailed, UpstreamTimeout } from '../../problems.js';
import type { FetchedPage } from '../../egress/page-fetcher.js';
import type { PageRenderer, RenderOptions } from './page-renderer.js';
import { createContextPool } from './context-pool.js';
import { closedError, createLauncher, type BrowserLogger, type Confinement, type RunningBrowser } from './launcher.js';
import { drivePage, notAllowed, selectorTimeout, type DriveProgress } from './page-driver.js';
import { createRequestGuard, type RequestGuard } from './request-guard.js';
import { abortReason, firstLine, isPlaywrightTimeout, originOf, unlessAborted } from './support.js';

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
  /**
   * Throws (BlockedTarget) when robots.txt disallows `url`: static mode's own check (the safe
   * fetcher's `assertRobotsAllow`), asked for the page before anything is started and for every
   * document the main frame goes to. Undefined: robots.txt is not consulted.
   */
  assertRobotsAllow?: (url: string, options: { trusted: boolean; signal?: AbortSignal }) => Promise<void>;
  /** The main document's cap in decoded bytes, as static mode's SCRAPE_MAX_BODY_BYTES. Default 10 MiB. */
  maxDocumentBytes?: number;
  userAgent: string;
  /** Pages rendered at once; further renders wait in FIFO order. Default 4. */
  maxConcurrentPages?: number;
  logger?: BrowserLogger;
  /**
   * Arms a render's hard deadline: calls `expire` after `ms` and answers what disarms it (a timer by
   * default). A test arms its own, to fire once the page is provably where the test means it to be.
   */
  hardDeadline?: (ms: number, expire: () => void) => () => void;
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
  /** Renders waiting for a page slot (all `maxConcurrentPages` busy). */
  waitingRenders(): number;
  /** Process id of the running browser, if one is running. */
  browserPid(): number | undefined;
  /** How the running browser is confined (sandbox, user), if one is running. */
  confinement(): Confinement | undefined;
}

/** SCRAPE_MAX_BODY_BYTES's default, for renderers built without a configuration (tests). */
const DEFAULT_MAX_DOCUMENT_BYTES = 10 * 1024 * 1024;
/** Extra time past `timeoutMs` before the hard deadline, so Playwright's own timeouts report first. */
const HARD_DEADLINE_MARGIN_MS = 750;

/**
 * A PageRenderer on one Chromium process (launcher.ts), started on the first render and restarted
 * after a crash. Playwright's route hook only sees the first hop of each request (redirects are
 * followed inside the browser), so every context also talks through a small per-render proxy that
 * asks the guard again for each connection: redirect hops, WebSockets and anything else the route
 * hook never sees (context-pool.ts). Each render drives one page (page-driver.ts).
 */
export function createBrowserRenderer(options: BrowserRendererOptions): BrowserRenderer {
  const { guardRequest, logger, assertRobotsAllow } = options;
  const maxDocumentBytes = options.maxDocumentBytes ?? DEFAULT_MAX_DOCUMENT_BYTES;
  const armHardDeadline =
    options.hardDeadline ??
    ((ms: number, expire: () => void) => {
      const timer = setTimeout(expire, ms);
      return () => clearTimeout(timer);
    });
  const launcher = createLauncher({ executablePath: options.executablePath, ...(logger ? { logger } : {}) });
  const pool = createContextPool({
    launcher,
    maxConcurrentPages: options.maxConcurrentPages ?? 4,
    userAgent: options.userAgent,
    connectLookup: options.connectLookup,
    maxDocumentBytes,
  });
  let closing: Promise<void> | undefined;

  async function renderOnce(target: RunningBrowser, url: string, renderOptions: RenderOptions, allow: RequestGuard): Promise<FetchedPage> {
    const timeoutMs = renderOptions.timeoutMs;
    const deadlineAt = Date.now() + timeoutMs;
    // Stops the render early: the caller's abort, or the page's main document passing the size cap.
    const halt = new AbortController();
    const stop = renderOptions.signal === undefined ? halt.signal : AbortSignal.any([renderOptions.signal, halt.signal]);
    const preparedPromise = pool.take(target).then((prepared) => {
      prepared.binding.guard = allow;
      prepared.binding.robots = robotsFor(allow, stop);
      prepared.binding.halt = (problem) => halt.abort(problem);
      return prepared;
    });
    const driveOptions = { timeoutMs, maxDocumentBytes, ...(renderOptions.waitFor === undefined ? {} : { waitFor: renderOptions.waitFor }) };
    const progress: DriveProgress = { waitingForSelector: false };
    const work = preparedPromise.then((prepared) => drivePage(prepared, url, driveOptions, deadlineAt, () => pool.replenish(target), progress));
    // When the hard deadline or an abort wins, the abandoned work fails later as its context is torn down.
    work.catch(() => undefined);
    let disarm: (() => void) | undefined;
    // Playwright's timeouts cover navigation and waiting, but not page.content() on a page whose script
    // never yields, nor a browser that stopped answering; this one does not depend on the browser.
    // On a loaded host the page's own timer for a selector can fire after this one: the message
    // still names the selector when that was all the render was waiting for.
    const timedOut = (cause?: unknown): UpstreamTimeout =>
      progress.waitingForSelector && renderOptions.waitFor !== undefined
        ? selectorTimeout(renderOptions.waitFor, url, timeoutMs, cause)
        : new UpstreamTimeout(`${url} did not finish rendering within ${timeoutMs} ms.`, { cause });
    const hardDeadline = new Promise<never>((_, reject) => {
      disarm = armHardDeadline(timeoutMs + HARD_DEADLINE_MARGIN_MS, () => reject(timedOut()));
    });
    let succeeded = false;
    try {
      const page = await unlessAborted(Promise.race([work, hardDeadline]), stop, url);
      succeeded = true;
      return page;
    } catch (error) {
      // Checked first: an abort (the caller's, or the size cap) says why better than what it broke.
      if (stop.aborted) throw abortReason(stop, url);
      // A browser that went away mid-render makes every step fail, and that is not the target's fault.
      if (closing !== undefined) throw closedError();
      if (!target.browser.isConnected()) {
        throw new ServiceUnavailable('The headless browser stopped during the render; try again.', { cause: error, retryAfterSeconds: 1 });
      }
      if (error instanceof HttpProblem) throw error;
      if (isPlaywrightTimeout(error)) throw timedOut(error);
      throw new UpstreamFailed(`Rendering ${url} failed: ${firstLine(error)}`, { cause: error });
    } finally {
      disarm?.();
      await pool.retire(target, preparedPromise, succeeded);
      pool.replenish(target);
    }
  }

  /** robots.txt for the documents of one render; trust reaches only the trusted page's own origin, as in static mode. */
  function robotsFor(allow: RequestGuard, signal: AbortSignal | undefined): ((url: string) => Promise<void>) | undefined {
    if (assertRobotsAllow === undefined) return undefined;
    return (url) => assertRobotsAllow(url, { trusted: allow.trustedOrigin !== undefined && originOf(url) === allow.trustedOrigin, ...(signal ? { signal } : {}) });
  }

  return {
    get launches() {
      return launcher.launches;
    },

    openContexts: () => pool.openContexts(),
    idle: () => pool.idle(),
    spareContexts: () => pool.spareContexts(),
    waitingRenders: () => pool.waitingForSlot(),
    browserPid: () => launcher.current()?.server.process().pid,
    confinement: () => launcher.current()?.confinement,

    async render(url: string, renderOptions: RenderOptions): Promise<FetchedPage> {
      if (closing !== undefined) throw closedError();
      const { signal } = renderOptions;
      if (signal?.aborted === true) throw abortReason(signal, url);
      const allow = createRequestGuard(guardRequest, renderOptions.trusted === true ? originOf(url) : undefined, logger);
      // Before queueing or launching: a refused target costs neither a page slot nor a browser start.
      if (!(await allow.check(url, { rethrow: true }))) throw notAllowed(url);
      await robotsFor(allow, signal)?.(url);
      const release = await pool.acquireSlot(renderOptions.timeoutMs, signal, url);
      try {
        const target = await unlessAborted(launcher.ensure(), signal, url);
        return await renderOnce(target, url, renderOptions, allow);
      } finally {
        release();
      }
    },

    async status() {
      return launcher.status();
    },

    close(): Promise<void> {
      closing ??= (async () => {
        const drained = pool.close();
        await launcher.close(() => drained);
      })();
      return closing;
    },
  };
}
