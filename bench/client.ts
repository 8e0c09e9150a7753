// One request at a time, timed: what the scraping, growth and seeding benches send.
import { request } from 'undici';

export interface Timed<T> {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: T;
  ms: number;
  bytes: number;
}

export async function send<T = unknown>(method: 'GET' | 'POST', url: string, body?: unknown): Promise<Timed<T>> {
  const started = performance.now();
  const res = await request(url, {
    method,
    headersTimeout: 120_000,
    bodyTimeout: 120_000,
    ...(body === undefined ? {} : { body: JSON.stringify(body), headers: { 'content-type': 'application/json' } }),
  });
  const text = await res.body.text();
  const ms = performance.now() - started;
  let parsed: unknown = text;
  try {
    parsed = JSON.parse(text);
  } catch {
    // not JSON: keep the text for the error message
  }
  return { status: res.statusCode, headers: res.headers, body: parsed as T, ms, bytes: Buffer.byteLength(text) };
}

/** Like `send`, but anything other than the expected status is an error worth stopping the bench for. */
export async function expect<T = unknown>(status: number, method: 'GET' | 'POST', url: string, body?: unknown): Promise<Timed<T>> {
  const res = await send<T>(method, url, body);
  if (res.status !== status) {
    throw new Error(`${method} ${url} answered ${res.status}, expected ${status}: ${JSON.stringify(res.body).slice(0, 500)}`);
  }
  return res;
}

export function median(values: readonly number[]): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}
