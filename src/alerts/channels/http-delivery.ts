// One JSON POST to a chat service through an injected dispatcher (the address guard), and what its answer means: ok, retry (when), or give up.
import { request, type Dispatcher } from 'undici';
import { HttpProblem } from '../../problems.js';
import type { ChannelConfig } from './channel-schema.js';
import { scrubSecrets, secretsOf, withoutSecretStartAtEnd } from './channel-secrets.js';
import type { RenderedMessage } from './message-render.js';
import type { Notifier, NotifyOutcome } from './notifier.js';
import { retryAfter } from '../../egress/retry-after.js';

/** How the caller applies the project's egress rules, and the clock for Retry-After dates. */
export interface HttpDeps {
  /** E.g. createGuardedAgent({allowPrivate}): refuses private addresses at connect time, rebinding-safe. */
  dispatcher?: Dispatcher;
  /** Checked before sending, e.g. (url) => assertPublicUrl(url, allowPrivate). */
  guard?: (url: URL) => Promise<unknown>;
  timeoutMs?: number;
  userAgent?: string;
  /** ms since the epoch; for Retry-After given as a date. */
  now?: () => number;
}

/** A request a channel adapter builds (pure), for postJson to send. */
export interface HttpRequestSpec {
  url: string;
  headers?: Record<string, string>;
  body: unknown;
}

/** Reads a service's own answer (Telegram's {ok:false}, Discord's retry_after); undefined leaves it to the status. */
export type AnswerReader = (status: number, body: unknown) => Partial<NotifyOutcome> | undefined;

/** Of a service's answer, this many bytes are read; an error quotes at most QUOTED characters of it. */
const MAX_ANSWER = 64 * 1024;
const QUOTED = 200;

/**
 * Sends `spec` and never throws. `service` names it in errors ("Slack answered HTTP 404 ..."); the
 * secrets are scrubbed from anything an error quotes (a service's answer, a connection error), before
 * it is cut (see quote).
 */
export async function postJson(service: string, spec: HttpRequestSpec, secrets: readonly string[], deps: HttpDeps, read?: AnswerReader): Promise<NotifyOutcome> {
  const timeoutMs = deps.timeoutMs ?? 10_000;
  try {
    const url = new URL(spec.url);
    await deps.guard?.(url);
    const response = await request(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'user-agent': deps.userAgent ?? 'data-aggregator-alerts', ...spec.headers },
      body: JSON.stringify(spec.body),
      ...(deps.dispatcher === undefined ? {} : { dispatcher: deps.dispatcher }),
      signal: AbortSignal.timeout(timeoutMs),
      headersTimeout: timeoutMs,
      bodyTimeout: timeoutMs,
    });
    const answer = await readText(response.body);
    const text = answer.cut ? withoutSecretStartAtEnd(answer.text, secrets) : answer.text;
    const status = response.statusCode;
    const body = parseJson(text);
    const own = read?.(status, body) ?? {};
    const retryAfterMs = own.retry_after_ms ?? retryAfter(response.headers['retry-after'], deps.now?.() ?? Date.now());
    const ok = own.ok ?? (status >= 200 && status < 300);
    if (ok) return { ok: true, status, retryable: false };
    const retryable = own.retryable ?? (status === 408 || status === 429 || status >= 500);
    const said = quote(own.error ?? text, secrets);
    return {
      ok: false,
      status,
      error: `${service} answered HTTP ${status}${said === '' ? '' : `: ${said}`}`,
      retryable,
      ...(retryAfterMs === undefined ? {} : { retry_after_ms: retryAfterMs }),
    };
  } catch (error) {
    return { ok: false, error: scrubSecrets(`${service} could not be reached: ${describe(error, timeoutMs)}`, secrets), retryable: isRetryable(error) };
  }
}

/** A refused target (private address, bad scheme) stays refused; anything else on the way may pass later. */
function isRetryable(error: unknown): boolean {
  for (let e: unknown = error; e instanceof Error; e = e.cause) {
    if (e instanceof HttpProblem) return e.retryable;
  }
  return true;
}

function describe(error: unknown, timeoutMs: number): string {
  const name = (error as { name?: string }).name;
  if (name === 'TimeoutError' || name === 'AbortError' || name === 'HeadersTimeoutError' || name === 'BodyTimeoutError') return `no answer within ${timeoutMs} ms`;
  for (let e: unknown = error; e instanceof Error; e = e.cause) {
    if (e instanceof HttpProblem) return e.message;
  }
  return error instanceof Error ? error.message : String(error);
}

/**
 * The answer's first MAX_ANSWER bytes as text (a character cut at the end left out); `cut` when there
 * was more, so the text may end in the first part of a secret.
 */
async function readText(body: Dispatcher.ResponseData['body']): Promise<{ text: string; cut: boolean }> {
  const chunks: Buffer[] = [];
  let size = 0;
  let cut = false;
  for await (const chunk of body) {
    const bytes = chunk as Buffer;
    chunks.push(bytes.subarray(0, MAX_ANSWER - size));
    size += bytes.length;
    if (size > MAX_ANSWER) {
      cut = true;
      body.destroy();
      break;
    }
  }
  return { text: new TextDecoder().decode(Buffer.concat(chunks), { stream: cut }), cut };
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/**
 * What an error quotes of a service's answer: scrubbed first, then made one line and cut to QUOTED
 * characters. Scrubbing the whole answer sees every secret whole; cutting first could leave the first
 * part of one at the cut, which no longer matches it.
 */
function quote(answer: string, secrets: readonly string[]): string {
  return clip(scrubSecrets(answer, secrets).replace(/\s+/g, ' ').trim(), QUOTED);
}

/**
 * A Notifier that posts what `build` makes of each message. The config stays in this closure: the
 * notifier object itself has nothing to serialise or inspect but its kind.
 */
export function httpNotifier<C extends ChannelConfig>(
  config: C,
  service: string,
  build: (config: C, message: RenderedMessage) => HttpRequestSpec,
  deps: HttpDeps,
  read?: AnswerReader,
): Notifier {
  const secrets = secretsOf(config);
  return { kind: config.kind, send: (message) => postJson(service, build(config, message), secrets, deps, read) };
}

/** Cuts `text` to `max` characters (code points), marking the cut. */
export function clip(text: string, max: number): string {
  const chars = [...text];
  return chars.length <= max ? text : `${chars.slice(0, max - 1).join('')}…`;
}

/**
 * `escapeText(text)` within `max` characters (code points), for a service that counts its limit on the
 * escaped text: when it is longer, the escapes of the longest start of `text` that fits with "…". The
 * cut falls between two characters' escapes, never inside one (`\*`, `&amp;`). `escapeText` works on each
 * character alone (escapeMarkdown, escapeSlack).
 */
export function clipEscaped(text: string, max: number, escapeText: (text: string) => string): string {
  const whole = escapeText(text);
  if ([...whole].length <= max) return whole;
  let kept = '';
  let size = 1;
  for (const char of text) {
    const escaped = escapeText(char);
    size += [...escaped].length;
    if (size > max) break;
    kept += escaped;
  }
  return `${kept}…`;
}
