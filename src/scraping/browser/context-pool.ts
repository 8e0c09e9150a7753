// Browser contexts for renders: page slots with FIFO waiting, one spare context made ahead, and teardown of used ones.
import type { LookupFunction } from 'node:net';
import type { BrowserContext } from 'playwright-core';
import { ServiceUnavailable } from '../../problems.js';
import { startGuardProxy } from '../../egress/guard-proxy.js';
import { createHostLimiter } from '../../egress/host-limiter.js';
import { closedError, type Launcher, type RunningBrowser } from './launcher.js';
import { instrumentPage, type PageHandle } from './page-driver.js';
import { abortReason, settlesWithin } from './support.js';

/** A context with its page and guarding proxy, opened before the render that will use it. */
export interface Prepared extends PageHandle {
  browser: RunningBrowser;
  context: BrowserContext;
}

export interface ContextPoolOptions {
  launcher: Launcher;
  /** Pages rendered at once; further renders wait in FIFO order. */
  maxConcurrentPages: number;
  userAgent: string;
  /** Vets each host as the proxy dials it; undefined dials with the system resolver. */
  connectLookup: LookupFunction | undefined;
  maxDocumentBytes: number;
}

export interface ContextPool {
  /** Waits at most `timeoutMs` for a page slot (503 after that); `signal` gives up waiting with its reason. */
  acquireSlot(timeoutMs: number, signal: AbortSignal | undefined, label: string): Promise<() => void>;
  /** The spare context for `target`, else a new one; either way one no earlier render has used. */
  take(target: RunningBrowser): Promise<Prepared>;
  /** Opens the next render's context ahead of time, if none is ready for the running browser. */
  replenish(target: RunningBrowser): void;
  /**
   * Closes a finished render's context (and proxy). With `inBackground` the caller does not wait and
   * `idle()` tracks it; otherwise resolves false when it took too long, having killed the browser.
   */
  retire(target: RunningBrowser, prepared: Promise<Prepared>, inBackground: boolean): Promise<boolean>;
  /** Contexts of renders open in the running browser, the spare not counted. */
  openContexts(): number;
  spareContexts(): number;
  /** Renders waiting for a page slot. */
  waitingForSlot(): number;
  idle(): Promise<void>;
  /** Refuses slot waiters, disposes of the spare and waits for retiring contexts. */
  close(): Promise<void>;
}

/**
 * How long a context may take to close before the browser holding it is killed. On a loaded host a
 * healthy browser has taken over 2 s to tear a context down (its renderer process with it), and killing
 * it then failed the renders beside it; a browser that stopped answering is still found within a few seconds.
 */
const CLOSE_GRACE_MS = 5_000;

/**
 * A new context and page cost ~170 ms, a third of a warm render, so one spare (context, page and
 * proxy, refusing every request until a render binds its guard) is kept ready for the next render;
 * each render still gets a context nobody has used, and closes it when done.
 */
export function createContextPool(options: ContextPoolOptions): ContextPool {
  const { launcher, userAgent, connectLookup, maxDocumentBytes } = options;
  const pageLimit = Math.max(1, options.maxConcurrentPages);
  // One key: the limiter's FIFO queue for a single host is exactly a pool of page slots.
  const slots = createHostLimiter(pageLimit);
  const closeSignal = new AbortController();
  let spare: { browser: RunningBrowser; ready: Promise<Prepared> } | undefined;
  /** Contexts made as spares and not yet taken by a render. */
  const spareSet = new Set<BrowserContext>();
  /** Teardowns of finished renders' contexts, still running. */
  const retiring = new Set<Promise<void>>();

  /** A fresh context with its page and proxy; nothing passes until a render binds its guard. */
  async function prepare(target: RunningBrowser): Promise<Prepared> {
    let handle: Prepared['binding'] | undefined;
    const proxy = await startGuardProxy({
      allow: (requested) => handle?.guard?.check(requested) ?? Promise.resolve(false),
      lookup: connectLookup,
      trustedOrigin: () => handle?.guard?.trustedOrigin,
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
      handle = await instrumentPage(context, page, maxDocumentBytes);
      return { browser: target, proxy, context, page, binding: handle };
    } catch (error) {
      if (context !== undefined) {
        spareSet.delete(context);
        await settlesWithin(
          context.close().catch(() => undefined),
          CLOSE_GRACE_MS,
        );
      }
      await proxy.close();
      throw error;
    }
  }

  /** Closes a context and its proxy; a context that will not close takes the browser down with it. */
  async function dispose(prepared: Prepared): Promise<void> {
    spareSet.delete(prepared.context);
    if (
      !(await settlesWithin(
        prepared.context.close().catch(() => undefined),
        CLOSE_GRACE_MS,
      ))
    ) {
      await launcher.kill(prepared.browser, `a browser context did not close within ${CLOSE_GRACE_MS} ms`);
    }
    await prepared.proxy.close();
  }

  return {
    async acquireSlot(timeoutMs, signal, label) {
      const waits = [AbortSignal.timeout(timeoutMs), closeSignal.signal, ...(signal === undefined ? [] : [signal])];
      try {
        return await slots.acquire('browser', AbortSignal.any(waits));
      } catch (error) {
        if (closeSignal.signal.aborted) throw closedError();
        if (signal?.aborted === true) throw abortReason(signal, label);
        // Waiting for a slot is our congestion, not the target's slowness: 503, not 504.
        throw new ServiceUnavailable(`All ${pageLimit} browser pages stayed busy for ${timeoutMs} ms.`, { cause: error, retryAfterSeconds: 2 });
      }
    },

    take(target) {
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
    },

    /*
     * Called once a render's page has loaded and waits on its scripts: opened at the start of a
     * render, the next context competed with the navigation for the CPU (a new renderer process) and
     * cost that render more than it saved.
     */
    replenish(target) {
      if (spare !== undefined || closeSignal.signal.aborted || launcher.current() !== target) return;
      const ready = prepare(target);
      ready.catch(() => undefined);
      spare = { browser: target, ready };
    },

    async retire(target, prepared, inBackground) {
      const retired = prepared.then(dispose, () => undefined);
      if (inBackground) {
        // Closed behind the answer: the caller has its HTML and need not wait for the teardown.
        retiring.add(retired);
        void retired.finally(() => retiring.delete(retired));
        return true;
      }
      if (await settlesWithin(retired, 2 * CLOSE_GRACE_MS)) return true;
      // A failure may be a browser that stopped answering, even one still opening this render's
      // context: the teardown finds out first, and a browser that cannot finish it is killed.
      await launcher.kill(target, `a browser context could not be opened or closed within ${2 * CLOSE_GRACE_MS} ms`);
      return false;
    },

    openContexts() {
      return (
        launcher
          .current()
          ?.browser.contexts()
          .filter((context) => !spareSet.has(context)).length ?? 0
      );
    },

    spareContexts() {
      return (
        launcher
          .current()
          ?.browser.contexts()
          .filter((context) => spareSet.has(context)).length ?? 0
      );
    },

    waitingForSlot: () => slots.waiting('browser'),

    async idle() {
      while (retiring.size > 0) await Promise.all(retiring);
    },

    async close() {
      closeSignal.abort(closedError());
      const unused = spare;
      spare = undefined;
      await unused?.ready.then(dispose, () => undefined);
      await Promise.all(retiring);
    },
  };
}
