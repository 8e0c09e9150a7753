// The error contract (../shared/CONTRACT.md) every answer of both services is held to, whatever was sent.
import assert from 'node:assert/strict';
import type { HTTPMethods } from 'fastify';

export type Service = 'main' | 'aux';

export interface Call {
  service: Service;
  method: HTTPMethods;
  url: string;
  headers?: Record<string, string>;
  payload?: string | Buffer;
  /** 5xx statuses the route may answer because it depends on an upstream (502, 504; 503 for a full queue or no browser). */
  allowed5xx: readonly number[];
}

/** What came back, from inject or from a real socket (the event streams). */
export interface Answer {
  statusCode: number;
  headers: Record<string, string | string[] | number | undefined>;
  body: string;
}

/** A V8 stack frame such as "at handler (/srv/app.js:10:5)" or "at file:///x.ts:1:2". */
const STACK_FRAME = /\bat (?:[^\n()]+ \()?(?:file:\/\/|node:|\/|[A-Za-z]:\\)[^\s()]*:\d+(?::\d+)?\)?/;

export const UPSTREAM = [502, 504] as const;

export function show(call: Call): string {
  const payload =
    call.payload === undefined
      ? undefined
      : Buffer.isBuffer(call.payload)
        ? `<${call.payload.length} bytes> ${call.payload.subarray(0, 120).toString('hex')}`
        : call.payload.length > 400
          ? `${JSON.stringify(call.payload.slice(0, 400))}… (${call.payload.length} chars)`
          : JSON.stringify(call.payload);
  return (
    `${call.service} ${call.method} ${call.url.length > 400 ? `${call.url.slice(0, 400)}…` : call.url}` +
    `${call.headers ? ` headers=${JSON.stringify(call.headers)}` : ''}${payload === undefined ? '' : ` body=${payload}`}`
  );
}

/** Where an answer failed the contract: the request (to reproduce it) and what came back. */
export function where(call: Call, res: Answer): string {
  return `\n  request: ${show(call)}\n  answer: ${res.statusCode} ${String(res.headers['content-type'])} ${res.body.slice(0, 600)}`;
}

/**
 * Holds one answer to the contract: 2xx, a redirect on the same site, 4xx, or a 5xx the route may give;
 * never a stack trace; every error an RFC 9457 problem whose status is the HTTP status; every validation
 * 422 names the fields at fault. Returns the parsed problem (undefined below 400 or for HEAD).
 */
export function checkAnswer(call: Call, res: Answer): Record<string, unknown> | undefined {
  const status = res.statusCode;
  const at = () => where(call, res);
  const redirect = status >= 300 && status < 400 && /^\/(?!\/)/.test(String(res.headers.location));
  const allowed = (status >= 200 && status < 300) || redirect || (status >= 400 && status < 500) || call.allowed5xx.includes(status);
  assert.ok(allowed, `status ${status} is not allowed here${at()}`);
  assert.doesNotMatch(res.body, STACK_FRAME, `the answer shows a stack trace${at()}`);
  if (status < 400) return undefined;
  assert.match(String(res.headers['content-type']), /^application\/problem\+json\b/, `an error that is not problem+json${at()}`);
  if (call.method === 'HEAD') return undefined;
  let body: Record<string, unknown>;
  try {
    body = JSON.parse(res.body) as Record<string, unknown>;
  } catch {
    assert.fail(`the problem body is not JSON${at()}`);
  }
  assert.equal(typeof body.type, 'string', `problem.type${at()}`);
  assert.equal(typeof body.title, 'string', `problem.title${at()}`);
  assert.equal(body.status, status, `problem.status must equal the HTTP status${at()}`);
  assert.equal(typeof body.detail, 'string', `problem.detail${at()}`);
  assert.ok(String(body.detail).trim() !== '', `problem.detail is empty${at()}`);
  assert.equal(body.stack, undefined, `problem carries a stack${at()}`);
  if (status === 422 && String(body.type).endsWith(':validation')) {
    const errors = body.errors as Array<{ path?: unknown; message?: unknown }> | undefined;
    assert.ok(Array.isArray(errors) && errors.length > 0, `a validation 422 names no field${at()}`);
    for (const error of errors) {
      assert.ok(typeof error.path === 'string' && error.path.startsWith('/'), `a 422 error without a path${at()}`);
      assert.ok(typeof error.message === 'string' && error.message !== '', `a 422 error without a message${at()}`);
    }
  }
  return body;
}

/** The paths a 422 names (`/body/price`, `/querystring/limit`...). */
export function namedPaths(problem: Record<string, unknown> | undefined): string[] {
  const errors = (problem?.errors ?? []) as Array<{ path: string }>;
  return errors.map((e) => e.path);
}

/**
 * Whether `named` (an error's path) names the field at `broken`: itself, a member of it, or an object
 * around it below the request part (`/body` alone names no field).
 */
export function names(named: string, broken: string): boolean {
  if (named === broken || named.startsWith(`${broken}/`)) return true;
  return named.split('/').length > 2 && broken.startsWith(`${named}/`);
}

/** Rejects when `work` takes longer than `ms`: a hang is a defect too, and must not stall the suite. */
export async function within<T>(ms: number, work: Promise<T>, what: () => string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      work,
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms: ${what()}`)), ms);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}
