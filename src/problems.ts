// RFC 9457 problem types and the one error handler both services share.
import { STATUS_CODES } from 'node:http';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { redactUrlsIn } from './redact.js';

export interface FieldError {
  path: string;
  message: string;
}

export interface ProblemBody {
  type: string;
  title: string;
  status: number;
  detail: string;
  instance?: string;
  errors?: FieldError[];
  [extra: string]: unknown;
}

const TYPE_BASE = 'urn:data-aggregator:problem:';

/** An error that knows its HTTP status and how to describe itself to a client. */
export class HttpProblem extends Error {
  readonly status: number;
  readonly title: string;
  readonly type: string;
  readonly errors: FieldError[] | undefined;
  readonly headers: Record<string, string>;
  /** RFC 9457 extension members added to the body (e.g. explain's partial explanation). */
  readonly extensions: Record<string, unknown> = {};

  /** Whether trying the same thing again later may succeed (a job retries only these). */
  get retryable(): boolean {
    return this.status >= 500 && this.status !== 501;
  }

  constructor(status: number, slug: string, title: string, detail: string, options: { errors?: FieldError[]; headers?: Record<string, string>; cause?: unknown } = {}) {
    super(detail, { cause: options.cause });
    this.name = new.target.name;
    this.status = status;
    this.title = title;
    this.type = TYPE_BASE + slug;
    this.errors = options.errors;
    this.headers = options.headers ?? {};
  }

  toBody(instance?: string): ProblemBody {
    // A detail may quote a target URL; its password never leaves the service.
    const body: ProblemBody = { type: this.type, title: this.title, status: this.status, detail: redactUrlsIn(this.message) };
    if (instance !== undefined) body.instance = instance;
    if (this.errors !== undefined) body.errors = this.errors.map((e) => ({ path: e.path, message: redactUrlsIn(e.message) }));
    return { ...this.extensions, ...body };
  }
}

export class BadRequest extends HttpProblem {
  constructor(detail: string) {
    super(400, 'bad-request', 'Bad Request', detail);
  }
}

/** Errors a 422 lists at most: a body with 80,000 unknown fields must not get a 8 MB answer. */
export const MAX_LISTED_ERRORS = 20;

export class ValidationFailed extends HttpProblem {
  constructor(errors: FieldError[], detail?: string) {
    const listed = errors.slice(0, MAX_LISTED_ERRORS);
    const more = errors.length - listed.length;
    super(
      422,
      'validation',
      'Unprocessable Content',
      detail ?? `The request is not valid: ${listed.map((e) => `${e.path} ${e.message}`).join('; ')}${more > 0 ? `; and ${more} more` : ''}`,
      { errors: listed },
    );
    if (more > 0) this.extensions.errors_total = errors.length;
  }
}

export class NotFound extends HttpProblem {
  constructor(detail: string) {
    super(404, 'not-found', 'Not Found', detail);
  }
}

export class Conflict extends HttpProblem {
  constructor(detail: string) {
    super(409, 'conflict', 'Conflict', detail);
  }
}

export class PayloadTooLarge extends HttpProblem {
  constructor(detail: string) {
    super(413, 'payload-too-large', 'Content Too Large', detail);
  }
}

export class UnsupportedMediaType extends HttpProblem {
  constructor(detail: string) {
    super(415, 'unsupported-media-type', 'Unsupported Media Type', detail);
  }
}

/** A scrape target the service refuses to contact (private address, bad scheme, redirect into one). */
export class BlockedTarget extends HttpProblem {
  /** `field`: where the request named the target (`/body/url`), so the 422 names it as any other. */
  constructor(detail: string, field?: string) {
    super(422, 'blocked-target', 'Blocked Target', detail, field === undefined ? {} : { errors: [{ path: field, message: detail }] });
  }

  /** The same refusal, naming the request's field that holds the target. */
  at(field: string): BlockedTarget {
    return new BlockedTarget(this.message, field);
  }
}

/** An upstream answered with an error, garbage, a non-HTML or oversize body, or could not be reached. */
export class UpstreamFailed extends HttpProblem {
  /** The upstream's answer will not change by asking again (a 4xx, not HTML, too large, a redirect loop). */
  readonly permanent: boolean;
  /** The HTTP status the upstream answered with, when it answered with an error. */
  readonly upstreamStatus: number | undefined;
  /** How long the upstream asked us to wait (its Retry-After), ms. */
  readonly retryAfterMs: number | undefined;

  constructor(detail: string, options: { cause?: unknown; permanent?: boolean; upstreamStatus?: number; retryAfterMs?: number; problem?: { slug: string; title: string } } = {}) {
    super(502, options.problem?.slug ?? 'upstream-failed', options.problem?.title ?? 'Bad Gateway', detail, { cause: options.cause });
    this.permanent = options.permanent ?? false;
    this.upstreamStatus = options.upstreamStatus;
    this.retryAfterMs = options.retryAfterMs;
  }

  override get retryable(): boolean {
    return !this.permanent;
  }
}

/**
 * A page larger than the service's own cap (SCRAPE_MAX_BODY_BYTES): the site answered, the service
 * stopped reading. Its own type, so that no one takes it for the site's failure; permanent until the
 * cap is raised.
 */
export class PageTooLarge extends UpstreamFailed {
  constructor(detail: string) {
    super(detail, { permanent: true, problem: { slug: 'page-too-large', title: 'Page Too Large' } });
  }
}

/** What stood where the page should have been: a bot check's CAPTCHA or challenge, a login, a rate limit, a block. */
export type WallKind = 'captcha' | 'challenge' | 'login' | 'rate-limit' | 'access-denied';

export interface Wall {
  kind: WallKind;
  /** The signal that decided, said for people ("header cf-mitigated: challenge", "a CAPTCHA form is the page's content"). */
  signal: string;
}

/** A wall as a problem, a job's error and a log carry it. */
export interface BlockedRecord extends Wall {
  /** The HTTP status of the answer. */
  status: number;
  retry_after_ms?: number;
}

const WALL_WORDS: Record<WallKind, string> = {
  captcha: 'a CAPTCHA',
  challenge: "a bot check's challenge",
  login: 'a login',
  'rate-limit': 'a rate limit',
  'access-denied': 'a block page',
};

/**
 * The site answered with a wall instead of the page (blocked: a bot check, a login, a rate limit).
 * Not an empty page and not a gone product: a run that meets it stores nothing and counts as no
 * sighting. Retried later only for a rate limit (after its Retry-After); the others will not pass by asking again.
 */
export class SiteBlocked extends UpstreamFailed {
  readonly wall: Wall;

  constructor(url: string, wall: Wall, options: { upstreamStatus: number; retryAfterMs?: number }) {
    super(
      `${hostOf(url)} answered with ${WALL_WORDS[wall.kind]} instead of the page (${wall.signal}, HTTP ${options.upstreamStatus}): ` +
        'the scraper was blocked, nothing was stored, and this counts as no sighting of its products.',
      {
        permanent: wall.kind !== 'rate-limit',
        upstreamStatus: options.upstreamStatus,
        ...(options.retryAfterMs === undefined ? {} : { retryAfterMs: options.retryAfterMs }),
        problem: { slug: 'blocked', title: 'Blocked by the Site' },
      },
    );
    this.wall = wall;
    const blocked: BlockedRecord = { ...wall, status: options.upstreamStatus, ...(options.retryAfterMs === undefined ? {} : { retry_after_ms: options.retryAfterMs }) };
    this.extensions.blocked = blocked;
  }
}

function hostOf(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return 'The site';
  }
}

export class UpstreamTimeout extends HttpProblem {
  constructor(detail: string, options: { cause?: unknown } = {}) {
    super(504, 'upstream-timeout', 'Gateway Timeout', detail, options);
  }
}

/** A store, the browser or another dependency of ours is unavailable. */
export class ServiceUnavailable extends HttpProblem {
  constructor(detail: string, options: { cause?: unknown; retryAfterSeconds?: number } = {}) {
    const headers: Record<string, string> = {};
    if (options.retryAfterSeconds !== undefined) headers['retry-after'] = String(options.retryAfterSeconds);
    super(503, 'service-unavailable', 'Service Unavailable', detail, { cause: options.cause, headers });
  }
}

/** A run stopped because its job was cancelled; what it stored stays, its log says cancelled. */
export class RunCancelled extends HttpProblem {
  constructor(detail = 'The job was cancelled.') {
    super(409, 'cancelled', 'Cancelled', detail);
  }
}

/** A stored collection (webhooks, schedules) is at the size its setting allows; nothing was stored. */
export class LimitReached extends HttpProblem {
  constructor(detail: string) {
    super(422, 'limit-reached', 'Limit Reached', detail);
  }
}

export class TooManyRequests extends HttpProblem {
  constructor(detail: string, retryAfterSeconds: number) {
    super(429, 'rate-limited', 'Too Many Requests', detail, { headers: { 'retry-after': String(retryAfterSeconds) } });
  }
}

/** Turns Ajv's error list into `{path, message}` pairs, e.g. `/body/price must be >= 0`. */
function fieldErrors(error: FastifyError): FieldError[] {
  const context = error.validationContext ?? 'body';
  const all = error.validation ?? [];
  // "must match a schema in anyOf" only repeats what the branch errors already say.
  const specific = all.filter((v) => v.keyword !== 'anyOf' && v.keyword !== 'oneOf');
  const seen = new Set<string>();
  return (specific.length > 0 ? specific : all).flatMap((v) => {
    let path = `/${context}${v.instancePath}`;
    let message = v.message ?? 'is invalid';
    const params = v.params as Record<string, unknown>;
    if (v.keyword === 'required' && typeof params.missingProperty === 'string') {
      path = `${path}/${params.missingProperty}`.replace(/\/+/g, '/');
      message = 'is required';
    } else if (v.keyword === 'additionalProperties' && typeof params.additionalProperty === 'string') {
      path = `${path}/${params.additionalProperty}`.replace(/\/+/g, '/');
      message = 'is not an allowed field';
    }
    const key = `${path} ${message}`;
    if (seen.has(key)) return [];
    seen.add(key);
    return [{ path, message }];
  });
}

/** Maps anything thrown in a route to a problem; internals of 5xx never reach the client. */
/** A problem as a job's or a log's error keeps it: its type, status and detail, and the wall when it was one. */
export function problemRecord(problem: HttpProblem): { type: string; status: number; detail: string; blocked?: BlockedRecord } {
  const blocked = problem.extensions.blocked as BlockedRecord | undefined;
  return { type: problem.type, status: problem.status, detail: redactUrlsIn(problem.message), ...(blocked === undefined ? {} : { blocked }) };
}

export function toProblem(error: unknown): HttpProblem {
  if (error instanceof HttpProblem) return error;
  const e = error as FastifyError & { type?: string };
  if (e?.validation) return new ValidationFailed(fieldErrors(e));
  switch (e?.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new PayloadTooLarge('The request body is larger than this endpoint accepts.');
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return new UnsupportedMediaType("This endpoint does not accept the request's content type; /docs lists what it takes.");
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return new BadRequest('The body is empty but the content type says JSON.');
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return new BadRequest('The body is not valid JSON.');
  }
  if (e instanceof SyntaxError || e?.type === 'entity.parse.failed') {
    return new BadRequest(`The body is not valid JSON: ${e.message}`);
  }
  const status = typeof e?.statusCode === 'number' ? e.statusCode : 500;
  if (status === 429) return new TooManyRequests(e.message, 1);
  if (status >= 400 && status < 500) return new HttpProblem(status, 'client-error', STATUS_CODES[status] ?? 'Bad Request', e.message);
  return new HttpProblem(500, 'internal', 'Internal Server Error', 'The server failed to answer this request; it has been logged.');
}

export function sendProblem(reply: FastifyReply, problem: HttpProblem, instance?: string): FastifyReply {
  return reply.code(problem.status).headers(problem.headers).type('application/problem+json').send(problem.toBody(instance));
}

/**
 * Fastify's `frameworkErrors` option: the router answers a malformed %-escape (400) or an over-long path
 * parameter (414) itself, before any error handler, in its own JSON shape unless given this.
 */
export function frameworkErrorHandler(error: FastifyError, request: FastifyRequest, reply: FastifyReply): void {
  // The request's own line (info) already says its status; the reason is told the client, and here at debug.
  request.log.debug({ status: error.statusCode, code: error.code }, error.message);
  sendProblem(reply, toProblem(error), request.url.split('?')[0]);
}

/** Installs the error and not-found handlers; every error leaves as application/problem+json. */
export function installProblemHandling(app: FastifyInstance): void {
  app.setErrorHandler((error: unknown, request: FastifyRequest, reply: FastifyReply) => {
    const problem = toProblem(error);
    if (problem.status >= 500) {
      request.log.error({ err: error }, problem.message);
    } else {
      // One line per request at info (the request's own, with its status); a client error's reason at debug.
      request.log.debug({ status: problem.status, problem: problem.type }, problem.message);
    }
    return sendProblem(reply, problem, request.url.split('?')[0]);
  });
  app.setNotFoundHandler((request: FastifyRequest, reply: FastifyReply) => {
    const path = request.url.split('?')[0] ?? '/';
    return sendProblem(reply, new NotFound(`No route ${request.method} ${path}; see /docs for the endpoints.`), path);
  });
}
