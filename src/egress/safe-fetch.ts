// The static-mode PageFetcher: guarded HTTP GET with re-checked redirects, limits and robots.txt
// (robots.ts), reading bodies with the cap and charset of body.ts.
import { interceptors, type Dispatcher } from 'undici';
import type { ScrapeSettings } from '../config/config.js';
import { BlockedTarget, SiteBlocked, UpstreamFailed, UpstreamTimeout } from '../problems.js';
import { basicAuthorization, withoutCredentials } from '../redact.js';
import type { FetchedPage, FetchedResource, FetchOptions, FetchTrace, PageFetcher, RobotsInfo } from './page-fetcher.js';
import { assertAllowedUrl, createGuardedAgent, isBlockedAddress, type GuardOptions } from './address-guard.js';
import { decodeHtml, discard, firstHeader, pageCharset, readBody } from './body.js';
import { describeFailure } from './failures.js';
import { createHostLimiter, type Release } from './host-limiter.js';
import { retryAfter } from './retry-after.js';
import { WALL_SNIFF_BYTES, wallOfAnswer } from './site-walls.js';
import { createRobots, robotsRefusal } from './robots.js';

/** The subset of pino's logger the fetcher uses, so `app.log` can be passed straight in. */
export interface FetchLogger {
  warn(details: Record<string, unknown>, message: string): void;
}

export interface SafeFetcherOptions extends GuardOptions {
  logger?: FetchLogger;
  /** How long a fetched robots.txt is trusted (default 1 h); failures are retried after a minute. */
  robotsTtlMs?: number;
  /** Origins whose robots.txt is kept (default 500); the least recently used is dropped first. */
  robotsCacheSize?: number;
  /** Clock for the robots cache. */
  now?: () => number;
}

/** What safe fetching needs of the scrape settings. */
export type SafeFetchSettings = Pick<ScrapeSettings, 'allowPrivateNetworks' | 'timeoutMs' | 'maxBodyBytes' | 'maxRedirects' | 'userAgent' | 'obeyRobots' | 'hostConcurrency'>;
type ResponseData = Dispatcher.ResponseData;

const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);
const HTML_TYPES = new Set(['text/html', 'application/xhtml+xml']);
const ACCEPT = 'text/html,application/xhtml+xml;q=0.9,*/*;q=0.5';
const ACCEPT_ENCODING = 'gzip, deflate, br';
/** Where `maxBodyBytes` comes from: a page past it is refused naming this setting, not blamed on the site. */
const BODY_CAP_SETTING = 'SCRAPE_MAX_BODY_BYTES';

interface Hop {
  url: URL;
  response: ResponseData;
  /** Frees the host slot; call once the body is consumed. */
  release: Release;
}

export function createSafeFetcher(settings: SafeFetchSettings, options: SafeFetcherOptions = {}): PageFetcher {
  const allowPrivate = settings.allowPrivateNetworks;
  const isBlocked = options.isBlocked ?? isBlockedAddress;
  const guardedAgent = createGuardedAgent({ allowPrivate, isBlocked, resolve: options.resolve, connectTimeoutMs: settings.timeoutMs });
  // Trusted (operator) URLs get their own agent so a pooled connection never crosses the trust line.
  const trustedAgent = allowPrivate ? guardedAgent : createGuardedAgent({ allowPrivate: true, resolve: options.resolve, connectTimeoutMs: settings.timeoutMs });
  // undici decodes gzip, deflate and br as we read, with backpressure, so readBody's cap counts the
  // decompressed bytes and stops a gzip bomb there.
  const guarded = guardedAgent.compose(interceptors.decompress());
  const trusted = trustedAgent === guardedAgent ? guarded : trustedAgent.compose(interceptors.decompress());
  const limiter = createHostLimiter(settings.hostConcurrency);
  const robots = createRobots({
    userAgent: settings.userAgent,
    timeoutMs: settings.timeoutMs,
    get: (url, trust, signal) => open(url, trust, signal, false),
    ...(options.robotsTtlMs === undefined ? {} : { ttlMs: options.robotsTtlMs }),
    ...(options.robotsCacheSize === undefined ? {} : { cacheSize: options.robotsCacheSize }),
    ...(options.now === undefined ? {} : { now: options.now }),
    ...(options.logger === undefined ? {} : { logger: options.logger }),
  });

  /**
   * GETs `start`, following redirects by hand so every hop passes the guard (and robots.txt) again.
   * Trust covers only hops on the trusted URL's own origin: an operator vouches for their site, not
   * for wherever it redirects. Resolves with the first non-redirect response, holding its host slot.
   */
  async function open(start: URL, trust: boolean, signal: AbortSignal, checkRobots: boolean, trace?: FetchTrace): Promise<Hop> {
    const authorization = basicAuthorization(start);
    const startOrigin = start.origin;
    let current = withoutCredentials(start);
    current.hash = '';
    const seen = new Set([current.href]);
    for (let redirects = 0; ; redirects++) {
      const hopTrusted = trust && current.origin === startOrigin;
      try {
        assertAllowedUrl(current, allowPrivate || hopTrusted, isBlocked);
      } catch (error) {
        if (redirects === 0) throw error;
        const reason = error instanceof Error ? error.message : String(error);
        throw new BlockedTarget(`The target redirected to a blocked URL: ${reason}`);
      }
      const hop: FetchTrace['hops'][number] = { url: current.href, guard: hopTrusted ? 'trusted' : 'allowed', robots: 'not-checked' };
      trace?.hops.push(hop);
      if (checkRobots && settings.obeyRobots) {
        if (!(await robots.allows(current, hopTrusted, signal, trace))) {
          hop.robots = 'disallowed';
          throw robotsRefusal(current);
        }
        hop.robots = 'allowed';
      }
      const hopStarted = performance.now();
      const release = await limiter.acquire(current.hostname, signal);
      let response: ResponseData;
      try {
        const headers: Record<string, string> = {
          'user-agent': settings.userAgent,
          accept: checkRobots ? ACCEPT : 'text/plain,*/*;q=0.5',
          'accept-encoding': ACCEPT_ENCODING,
        };
        // Credentials from the URL go only to the origin the user typed them for.
        if (authorization !== undefined && current.origin === startOrigin) headers.authorization = authorization;
        response = await (hopTrusted ? trusted : guarded).request({
          origin: current.origin,
          path: current.pathname + current.search,
          method: 'GET',
          headers,
          signal,
        });
      } catch (error) {
        release();
        throw error;
      }
      const location = firstHeader(response.headers.location);
      hop.status = response.statusCode;
      hop.ms = Math.round((performance.now() - hopStarted) * 10) / 10;
      if (!REDIRECT_STATUSES.has(response.statusCode) || location === undefined) {
        return { url: current, response, release };
      }
      hop.location = location;
      // Reading a little of the body lets undici keep the connection alive for the next hop.
      await response.body.dump().catch(() => undefined);
      release();
      if (redirects >= settings.maxRedirects) {
        throw new UpstreamFailed(`Too many redirects: ${start.origin}${start.pathname} redirected more than ${settings.maxRedirects} times.`, { permanent: true });
      }
      let next: URL;
      try {
        next = new URL(location, current);
      } catch {
        throw new UpstreamFailed(`${current.href} redirected to an invalid URL.`, { permanent: true });
      }
      next = withoutCredentials(next);
      next.hash = '';
      if (seen.has(next.href)) {
        throw new UpstreamFailed(`Too many redirects: ${current.href} redirects in a loop.`, { permanent: true });
      }
      seen.add(next.href);
      current = next;
    }
  }

  /** One deadline for the whole fetch: robots.txt, every redirect hop, connect, headers and body. */
  async function withDeadline<T>(url: string, fetchOptions: FetchOptions, read: (hop: Hop, signal: AbortSignal) => Promise<T>): Promise<T> {
    const trust = fetchOptions.trusted === true;
    const start = assertAllowedUrl(url, allowPrivate || trust, isBlocked);
    const label = withoutCredentials(start).href;
    const timeoutMs = fetchOptions.timeoutMs ?? settings.timeoutMs;
    const deadline = new AbortController();
    const timer = setTimeout(() => deadline.abort(new UpstreamTimeout(`${label} did not answer within ${timeoutMs} ms.`)), timeoutMs);
    const signal = fetchOptions.signal === undefined ? deadline.signal : AbortSignal.any([deadline.signal, fetchOptions.signal]);
    try {
      const hop = await open(start, trust, signal, true, fetchOptions.trace);
      try {
        return await read(hop, signal);
      } finally {
        hop.release();
      }
    } catch (error) {
      throw describeFailure(error, label, signal);
    } finally {
      clearTimeout(timer);
    }
  }

  return {
    fetchPage: (url, fetchOptions = {}) => withDeadline(url, fetchOptions, (hop) => readPage(hop, fetchOptions.trace)),

    fetchResource: (url, fetchOptions) => withDeadline(url, fetchOptions, (hop) => readResource(hop, fetchOptions.types)),

    robots: (url: string, robotsOptions: { trusted?: boolean } = {}): Promise<RobotsInfo> => robots.info(url, robotsOptions.trusted === true),

    async assertRobotsAllow(url: string, robotsOptions: { trusted?: boolean; signal?: AbortSignal } = {}): Promise<void> {
      if (!settings.obeyRobots) return;
      const target = withoutCredentials(new URL(url));
      target.hash = '';
      const signal = robotsOptions.signal ?? new AbortController().signal;
      if (!(await robots.allows(target, robotsOptions.trusted === true, signal))) throw robotsRefusal(target);
    },

    async close(): Promise<void> {
      robots.close();
      await Promise.all(trustedAgent === guardedAgent ? [guardedAgent.close()] : [guardedAgent.close(), trustedAgent.close()]);
    },
  };

  async function readResource({ url, response }: Hop, types: readonly string[]): Promise<FetchedResource> {
    const status = response.statusCode;
    if (status >= 300) throw await answeredWithError(url, status, `HTTP ${status}`, response);
    const contentType = firstHeader(response.headers['content-type']) ?? '';
    const mime = contentType.split(';')[0]?.trim().toLowerCase() ?? '';
    if (mime !== '' && !types.includes(mime)) {
      discard(response.body);
      throw new UpstreamFailed(`${url.href} is ${mime}, not one of ${types.join(', ')}.`, { permanent: true });
    }
    const body = await readBody(response, settings.maxBodyBytes, url.href, { setting: BODY_CAP_SETTING });
    return { url: url.href, status, contentType, body };
  }

  async function readPage({ url, response }: Hop, trace?: FetchTrace): Promise<FetchedPage> {
    const status = response.statusCode;
    if (status >= 300) throw await answeredWithError(url, status, status < 400 ? `redirect ${status} without a Location header` : `HTTP ${status}`, response);
    // Some bot checks answer 2xx and say so in a header (an AWS WAF challenge is a 202).
    const wall = wallOfAnswer(status, response.headers, null);
    if (wall !== null) {
      discard(response.body);
      throw new SiteBlocked(url.href, wall, { upstreamStatus: status });
    }
    const contentType = firstHeader(response.headers['content-type']);
    if (trace !== undefined && contentType !== undefined) trace.content_type = contentType;
    if (contentType !== undefined) {
      const mime = contentType.split(';')[0]?.trim().toLowerCase() ?? '';
      if (!HTML_TYPES.has(mime)) {
        discard(response.body);
        throw new UpstreamFailed(`${url.href} is ${mime || 'an unknown type'}, not HTML.`, { permanent: true });
      }
    }
    const bytes = await readBody(response, settings.maxBodyBytes, url.href, { sniff: contentType === undefined, setting: BODY_CAP_SETTING });
    const charset = pageCharset(bytes, contentType);
    if (trace !== undefined) {
      trace.bytes = bytes.length;
      trace.charset = `${charset.label} (${charset.from})`;
    }
    return { url: url.href, status, contentType: contentType ?? 'text/html', html: decodeHtml(bytes, charset.label) };
  }
}

/**
 * An upstream's error answer: a wall (a bot check, a rate limit, a login: told by its headers and the
 * start of its body), or a plain error. Asking again may pass after a 5xx, a 408 (Request Timeout) or a
 * 429 (Too Many Requests, which says to slow down, not that the page is wrong); any other 4xx stays as it is.
 */
async function answeredWithError(url: URL, status: number, detail: string, response: ResponseData): Promise<UpstreamFailed> {
  const wait = retryAfter(response.headers['retry-after'], Date.now());
  const body = status >= 400 ? await readBody(response, WALL_SNIFF_BYTES, url.href, { truncate: true }).catch(() => null) : null;
  await response.body.dump().catch(() => undefined);
  const wall = wallOfAnswer(status, response.headers, body === null ? null : body.toString('latin1'));
  if (wall !== null) return new SiteBlocked(url.href, wall, { upstreamStatus: status, ...(wait === undefined ? {} : { retryAfterMs: wait }) });
  return new UpstreamFailed(`${url.href} answered with ${detail}.`, {
    permanent: status < 500 && status !== 408 && status !== 429,
    upstreamStatus: status,
    ...(wait === undefined ? {} : { retryAfterMs: wait }),
  });
}
