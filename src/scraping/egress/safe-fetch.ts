// The static-mode PageFetcher: guarded HTTP GET with re-checked redirects, limits, charset decoding and robots.txt.
import { pipeline, type Readable } from 'node:stream';
import { createBrotliDecompress, createGunzip, createInflate } from 'node:zlib';
import robotsParserModule from 'robots-parser';
import type { Dispatcher } from 'undici';
import type { ScrapeSettings } from '../config.js';
import { BlockedTarget, HttpProblem, UpstreamFailed, UpstreamTimeout } from '../problems.js';
import { assertAllowedUrl, createGuardedAgent, isBlockedAddress, type GuardOptions } from './address-guard.js';
import { createHostLimiter, type Release } from './host-limiter.js';
import type { FetchedPage, FetchedResource, FetchOptions, FetchTrace, PageFetcher, RobotsInfo } from './types.js';

/** The subset of pino's logger the fetcher uses, so `app.log` can be passed straight in. */
export interface FetchLogger {
  warn(details: Record<string, unknown>, message: string): void;
}

export interface SafeFetcherOptions extends GuardOptions {
  logger?: FetchLogger;
  /** How long a fetched robots.txt is trusted (default 1 h); failures are retried after a minute. */
  robotsTtlMs?: number;
  /** Origins whose robots.txt is kept (default 500); the oldest entry is dropped first. */
  robotsCacheSize?: number;
  /** Clock for the robots cache. */
  now?: () => number;
}

export type SafeFetchSettings = ScrapeSettings & { allowPrivateNetworks: boolean };

// The package's types declare an ES default export, but at runtime it is CommonJS `module.exports = fn`.
const robotsParser = robotsParserModule as unknown as typeof robotsParserModule.default;
type Robots = ReturnType<typeof robotsParser>;
type ResponseData = Dispatcher.ResponseData;

const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);
const HTML_TYPES = new Set(['text/html', 'application/xhtml+xml']);
const ACCEPT = 'text/html,application/xhtml+xml;q=0.9,*/*;q=0.5';
// We decompress ourselves so the body cap counts decoded bytes: a 5 KB gzip bomb cannot slip past it.
const ACCEPT_ENCODING = 'gzip, deflate, br';
// RFC 9309 asks crawlers to parse at least 500 KiB; anything beyond is ignored, not an error.
const ROBOTS_MAX_BYTES = 500 * 1024;
const ROBOTS_FAILURE_TTL_MS = 60_000;
const SNIFF_BYTES = 512;

interface Hop {
  url: URL;
  response: ResponseData;
  /** Frees the host slot; call once the body is consumed. */
  release: Release;
}

interface RobotsEntry {
  expires: number;
  rules: Promise<Robots | null>;
  /** What the fetch of robots.txt answered, for explain. */
  outcome?: { outcome: 'rules' | 'none (4xx)' | 'unavailable'; status: number | null };
}

export function createSafeFetcher(settings: SafeFetchSettings, options: SafeFetcherOptions = {}): PageFetcher {
  const allowPrivate = settings.allowPrivateNetworks;
  const isBlocked = options.isBlocked ?? isBlockedAddress;
  const now = options.now ?? Date.now;
  const robotsTtlMs = options.robotsTtlMs ?? 3_600_000;
  const robotsCacheSize = options.robotsCacheSize ?? 500;
  const guarded = createGuardedAgent({ allowPrivate, isBlocked, resolve: options.resolve, connectTimeoutMs: settings.timeoutMs });
  // Trusted (operator) URLs get their own agent so a pooled connection never crosses the trust line.
  const trusted = allowPrivate
    ? guarded
    : createGuardedAgent({ allowPrivate: true, resolve: options.resolve, connectTimeoutMs: settings.timeoutMs });
  const limiter = createHostLimiter(settings.hostConcurrency);
  const robotsCache = new Map<string, RobotsEntry>();
  // robots.txt fetches outlive the page that started them; close() must be able to stop them.
  const robotsFetches = new Set<AbortController>();
  let closed = false;

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
        if (!(await robotsAllow(current, hopTrusted, signal, trace))) {
          hop.robots = 'disallowed';
          throw new BlockedTarget(`robots.txt of ${current.origin} disallows ${current.pathname} for our user agent.`);
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

  async function robotsAllow(url: URL, trust: boolean, signal: AbortSignal, trace?: FetchTrace): Promise<boolean> {
    const { entry, cached } = robotsFor(url.origin, trust);
    const rules = await raceAbort(entry.rules, signal);
    if (trace !== undefined && entry.outcome !== undefined) {
      trace.robots.push({ url: new URL('/robots.txt', url.origin).href, ...entry.outcome, cached });
    }
    return rules === null || rules.isAllowed(url.href, settings.userAgent) !== false;
  }

  /** One robots.txt fetch per origin, shared by concurrent callers and cached for `robotsTtlMs`. */
  function robotsFor(origin: string, trust: boolean): { entry: RobotsEntry; cached: boolean } {
    // Keyed by trust too: an untrusted attempt the guard refused must not stand in for the operator's fetch.
    const key = `${trust ? 'trusted' : 'guarded'} ${origin}`;
    const cached = robotsCache.get(key);
    if (cached !== undefined && cached.expires > now()) return { entry: cached, cached: true };
    robotsCache.delete(key);
    while (robotsCache.size >= robotsCacheSize) {
      const oldest = robotsCache.keys().next().value;
      if (oldest === undefined) break;
      robotsCache.delete(oldest);
    }
    // Until the fetch settles the entry never expires, so concurrent callers share it.
    const entry: RobotsEntry = { expires: Number.POSITIVE_INFINITY, rules: Promise.resolve(null) };
    entry.rules = loadRobots(origin, trust).then(({ rules, ok, status }) => {
      entry.expires = now() + (ok ? robotsTtlMs : ROBOTS_FAILURE_TTL_MS);
      entry.outcome = { outcome: rules !== null ? 'rules' : ok ? 'none (4xx)' : 'unavailable', status };
      return rules;
    });
    robotsCache.set(key, entry);
    return { entry, cached: false };
  }

  /** Never rejects: an unreadable robots.txt means "allow everything" (and a log line when unexpected). */
  async function loadRobots(origin: string, trust: boolean): Promise<{ rules: Robots | null; ok: boolean; status: number | null }> {
    const robotsUrl = new URL('/robots.txt', origin);
    const deadline = new AbortController();
    const timer = setTimeout(
      () => deadline.abort(new UpstreamTimeout(`${robotsUrl.href} did not answer within ${settings.timeoutMs} ms.`)),
      settings.timeoutMs,
    );
    robotsFetches.add(deadline);
    try {
      const hop = await open(robotsUrl, trust, deadline.signal, false);
      try {
        const status = hop.response.statusCode;
        if (status >= 400 && status < 500) {
          // RFC 9309 2.3.1.3: a missing or forbidden robots.txt places no restrictions.
          await hop.response.body.dump().catch(() => undefined);
          return { rules: null, ok: true, status };
        }
        if (status < 200 || status >= 300) {
          await hop.response.body.dump().catch(() => undefined);
          options.logger?.warn({ origin, status }, 'robots.txt answered with an error; treating every path as allowed');
          return { rules: null, ok: false, status };
        }
        const bytes = await readBody(hop.response, ROBOTS_MAX_BYTES, robotsUrl.href, { truncate: true });
        return { rules: robotsParser(robotsUrl.href, bytes.toString('utf8')), ok: true, status };
      } finally {
        hop.release();
      }
    } catch (error) {
      const problem = describeFailure(error, robotsUrl.href, deadline.signal);
      // A guard refusal is not news: the page request meets the same guard and fails with it.
      if (!closed && !(problem instanceof BlockedTarget)) {
        options.logger?.warn({ origin, error: problem.message }, 'robots.txt could not be fetched; treating every path as allowed');
      }
      return { rules: null, ok: false, status: null };
    } finally {
      clearTimeout(timer);
      robotsFetches.delete(deadline);
    }
  }

  /** One deadline for the whole fetch: robots.txt, every redirect hop, connect, headers and body. */
  async function withDeadline<T>(url: string, fetchOptions: FetchOptions, read: (hop: Hop, signal: AbortSignal) => Promise<T>): Promise<T> {
    const trust = fetchOptions.trusted === true;
    const start = assertAllowedUrl(url, allowPrivate || trust, isBlocked);
    const label = withoutCredentials(start).href;
    const timeoutMs = fetchOptions.timeoutMs ?? settings.timeoutMs;
    const deadline = new AbortController();
    const timer = setTimeout(
      () => deadline.abort(new UpstreamTimeout(`${label} did not answer within ${timeoutMs} ms.`)),
      timeoutMs,
    );
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

    async robots(url: string, robotsOptions: { trusted?: boolean } = {}): Promise<RobotsInfo> {
      const origin = new URL(url).origin;
      const rules = await robotsFor(origin, robotsOptions.trusted === true).entry.rules;
      const delay = rules?.getCrawlDelay(settings.userAgent);
      return { crawlDelaySeconds: typeof delay === 'number' && delay > 0 ? delay : null, sitemaps: rules?.getSitemaps() ?? [] };
    },

    async close(): Promise<void> {
      closed = true;
      for (const fetch of robotsFetches) fetch.abort(new UpstreamFailed('The fetcher was closed.'));
      robotsCache.clear();
      await Promise.all(trusted === guarded ? [guarded.close()] : [guarded.close(), trusted.close()]);
    },
  };

  async function readResource({ url, response }: Hop, types: readonly string[]): Promise<FetchedResource> {
    const status = response.statusCode;
    if (status >= 300) {
      await response.body.dump().catch(() => undefined);
      throw new UpstreamFailed(`${url.href} answered with HTTP ${status}.`, { permanent: status < 500 });
    }
    const contentType = firstHeader(response.headers['content-type']) ?? '';
    const mime = contentType.split(';')[0]?.trim().toLowerCase() ?? '';
    if (mime !== '' && !types.includes(mime)) {
      discard(response.body);
      throw new UpstreamFailed(`${url.href} is ${mime}, not one of ${types.join(', ')}.`, { permanent: true });
    }
    const body = await readBody(response, settings.maxBodyBytes, url.href);
    return { url: url.href, status, contentType, body };
  }

  async function readPage({ url, response }: Hop, trace?: FetchTrace): Promise<FetchedPage> {
    const status = response.statusCode;
    if (status >= 300) {
      await response.body.dump().catch(() => undefined);
      const detail = status < 400 ? `redirect ${status} without a Location header` : `HTTP ${status}`;
      throw new UpstreamFailed(`${url.href} answered with ${detail}.`, { permanent: status < 500 });
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
    const bytes = await readBody(response, settings.maxBodyBytes, url.href, { sniff: contentType === undefined });
    const charset = pageCharset(bytes, contentType);
    if (trace !== undefined) {
      trace.bytes = bytes.length;
      trace.charset = `${charset.label} (${charset.from})`;
    }
    return { url: url.href, status, contentType: contentType ?? 'text/html', html: decodeHtml(bytes, charset.label) };
  }
}

/**
 * Collects the (decompressed) body, failing as soon as it passes `limit` bytes — or, with
 * `truncate`, keeping the first `limit` bytes. With `sniff`, a body that does not start like markup
 * is rejected after its first bytes instead of being downloaded whole.
 */
async function readBody(
  response: ResponseData,
  limit: number,
  label: string,
  options: { truncate?: boolean; sniff?: boolean } = {},
): Promise<Buffer> {
  const source = decoded(response);
  const chunks: Buffer[] = [];
  let size = 0;
  let sniffPending = options.sniff === true;
  try {
    for await (const chunk of source as AsyncIterable<Buffer>) {
      chunks.push(chunk);
      size += chunk.length;
      if (sniffPending && size >= SNIFF_BYTES) {
        sniffPending = false;
        assertLooksLikeHtml(Buffer.concat(chunks, size), label);
      }
      if (size > limit) {
        if (options.truncate) return Buffer.concat(chunks, size).subarray(0, limit);
        throw new UpstreamFailed(`${label} is larger than ${limit} bytes.`, { permanent: true });
      }
    }
  } finally {
    // Leaving early (cap, sniff, error) must close the connection rather than drain 20 MB into nowhere.
    if (!source.readableEnded) discard(source);
    if (!response.body.readableEnded) discard(response.body);
  }
  const body = Buffer.concat(chunks, size);
  if (sniffPending) assertLooksLikeHtml(body, label);
  return body;
}

function decoded(response: ResponseData): Readable {
  const encoding = firstHeader(response.headers['content-encoding'])?.trim().toLowerCase();
  const body = response.body as Readable;
  if (encoding === undefined || encoding === '' || encoding === 'identity') return body;
  const decoder =
    encoding === 'gzip' || encoding === 'x-gzip' ? createGunzip()
    : encoding === 'deflate' ? createInflate()
    : encoding === 'br' ? createBrotliDecompress()
    : undefined;
  if (decoder === undefined) {
    discard(body);
    throw new UpstreamFailed(`The upstream used an unsupported content encoding "${encoding}".`, { permanent: true });
  }
  // pipeline destroys both streams when either fails or the consumer stops reading.
  return pipeline(body, decoder, () => undefined);
}

/** Without a Content-Type we accept the body only if its first non-blank character is `<`. */
function assertLooksLikeHtml(bytes: Buffer, label: string): void {
  const head = bytes.subarray(0, SNIFF_BYTES);
  const encoding = bomEncoding(head);
  const text = new TextDecoder(encoding ?? 'latin1').decode(head);
  if (!text.trimStart().startsWith('<')) {
    throw new UpstreamFailed(`${label} has no Content-Type and does not look like HTML; not HTML.`, { permanent: true });
  }
}

/** The HTML encoding-sniffing order, simplified: BOM, then the header's charset, then `<meta>`. */
function pageCharset(bytes: Buffer, contentType: string | undefined): { label: string; from: string } {
  const bom = bomEncoding(bytes);
  if (bom !== undefined) return { label: bom, from: 'byte order mark' };
  const header = headerCharset(contentType);
  if (header !== undefined) return { label: header, from: 'Content-Type header' };
  const meta = metaCharset(bytes);
  return meta !== undefined ? { label: meta, from: '<meta> tag' } : { label: 'utf-8', from: 'default' };
}

function decodeHtml(bytes: Buffer, label: string): string {
  try {
    return new TextDecoder(label).decode(bytes);
  } catch {
    // An unknown label is the page's mistake; UTF-8 is the most likely truth.
    return new TextDecoder('utf-8').decode(bytes);
  }
}

function bomEncoding(bytes: Uint8Array): string | undefined {
  if (bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf) return 'utf-8';
  if (bytes[0] === 0xfe && bytes[1] === 0xff) return 'utf-16be';
  if (bytes[0] === 0xff && bytes[1] === 0xfe) return 'utf-16le';
  return undefined;
}

function headerCharset(contentType: string | undefined): string | undefined {
  return contentType?.match(/;\s*charset\s*=\s*["']?([^"';\s]+)/i)?.[1];
}

function metaCharset(bytes: Buffer): string | undefined {
  const head = bytes.subarray(0, 4096).toString('latin1');
  const label = head.match(/<meta[^>]*?charset\s*=\s*["']?\s*([a-z0-9_.:-]+)/i)?.[1];
  // The HTML spec: a <meta> claiming UTF-16 is wrong by construction (it was readable as ASCII).
  return label?.toLowerCase().startsWith('utf-16') ? 'utf-8' : label;
}

/** Turns whatever was thrown into one of our three problems, naming the page but never credentials. */
function describeFailure(error: unknown, label: string, signal: AbortSignal): HttpProblem | Error {
  if (error instanceof HttpProblem) return error;
  if (signal.aborted) {
    const reason: unknown = signal.reason;
    // Our deadline aborts with an UpstreamTimeout; a caller's own signal keeps its own reason.
    if (reason instanceof Error) return reason;
    return new UpstreamFailed(`Fetching ${label} was aborted.`, { cause: reason });
  }
  const code = (error as { code?: unknown } | null)?.code;
  const message = error instanceof Error ? error.message : String(error);
  switch (code) {
    case 'UND_ERR_CONNECT_TIMEOUT':
    case 'UND_ERR_HEADERS_TIMEOUT':
    case 'UND_ERR_BODY_TIMEOUT':
      return new UpstreamTimeout(`${label} did not answer in time.`, { cause: error });
    case 'ECONNREFUSED':
      return new UpstreamFailed(`${label} refused the connection.`, { cause: error });
    case 'ECONNRESET':
    case 'EPIPE':
    case 'UND_ERR_SOCKET':
      return new UpstreamFailed(`${label} closed the connection unexpectedly.`, { cause: error });
    case 'ENETUNREACH':
    case 'EHOSTUNREACH':
      return new UpstreamFailed(`${label} is unreachable.`, { cause: error });
    case 'UND_ERR_HEADERS_OVERFLOW':
      return new UpstreamFailed(`${label} sent response headers that are too large.`, { cause: error });
  }
  if (typeof code === 'string' && code.startsWith('HPE_')) {
    return new UpstreamFailed(`${label} sent a malformed HTTP response.`, { cause: error });
  }
  if (typeof code === 'string' && (code.startsWith('ERR_TLS') || code.includes('CERT'))) {
    return new UpstreamFailed(`TLS with ${label} failed: ${message}`, { cause: error });
  }
  return new UpstreamFailed(`Could not fetch ${label}: ${message}`, { cause: error });
}

function raceAbort<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(error);
      },
    );
  });
}

function basicAuthorization(url: URL): string | undefined {
  if (url.username === '' && url.password === '') return undefined;
  const user = decodeURIComponent(url.username);
  const password = decodeURIComponent(url.password);
  return 'Basic ' + Buffer.from(`${user}:${password}`).toString('base64');
}

function withoutCredentials(url: URL): URL {
  const copy = new URL(url);
  copy.username = '';
  copy.password = '';
  return copy;
}

/** Closes a body we will not read; undici reports that as an "aborted" error nobody needs to hear. */
function discard(stream: Readable): void {
  stream.on('error', () => undefined);
  stream.destroy();
}

function firstHeader(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}
