// Routes every service has: the welcome document listing its endpoints, and a timed health check.
import { readFileSync } from 'node:fs';
import { Type, type TSchema } from 'typebox';
import type { App } from './base-app.js';

export interface Endpoint {
  method: string;
  path: string;
  summary: string;
}

/** The package version, read once per app build (works from src/ under tsx and from dist/). */
export function packageVersion(): string {
  const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };
  return pkg.version;
}

/**
 * Collects documented routes as they are added, so the welcome page lists exactly what exists.
 * Call before adding the routes.
 */
export function collectEndpoints(app: App): Endpoint[] {
  const endpoints: Endpoint[] = [];
  app.addHook('onRoute', (route) => {
    const schema = route.schema as { hide?: boolean; summary?: string } | undefined;
    if (!schema?.summary || schema.hide) return;
    for (const method of [route.method].flat()) {
      if (method === 'HEAD') continue;
      endpoints.push({ method, path: route.url.replace(/:(\w+)/g, '{$1}'), summary: schema.summary });
    }
  });
  return endpoints;
}

export const Welcome = Type.Object({
  name: Type.String(),
  version: Type.String(),
  description: Type.String(),
  docs: Type.String({ examples: ['/docs'] }),
  dashboard: Type.Optional(Type.String({ description: 'The dashboard in the browser', examples: ['/ui'] })),
  openapi: Type.String({ examples: ['/openapi.json'] }),
  endpoints: Type.Array(Type.Object({ method: Type.String(), path: Type.String(), summary: Type.String() })),
});

export function welcomeRoute(app: App, info: { name: string; version: string; description: string; dashboard?: string }, endpoints: Endpoint[]): void {
  app.get('/', { schema: { tags: ['meta'], summary: 'Welcome: links to the docs and the list of endpoints', response: { 200: Welcome } } }, async () => ({
    ...info,
    docs: '/docs',
    openapi: '/openapi.json',
    endpoints,
  }));
}

export interface CheckResult {
  status: 'up' | 'down' | 'unavailable';
  backend: string;
  latency_ms: number;
  detail?: string;
}

export const Check = Type.Object({
  status: Type.Union([Type.Literal('up'), Type.Literal('down'), Type.Literal('unavailable')]),
  backend: Type.String(),
  latency_ms: Type.Number(),
  detail: Type.Optional(Type.String()),
});

/** Runs `probe`, timing it; a throw or a timeout is reported as down, never propagated. */
export async function timedCheck(backend: string, probe: () => Promise<unknown>, timeoutMs = 2_000): Promise<CheckResult> {
  const started = performance.now();
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      probe(),
      new Promise((_, reject) => {
        timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
      }),
    ]);
    return { status: 'up', backend, latency_ms: elapsed(started) };
  } catch (error) {
    return { status: 'down', backend, latency_ms: elapsed(started), detail: (error as Error).message };
  } finally {
    clearTimeout(timer);
  }
}

function elapsed(started: number): number {
  return Math.round((performance.now() - started) * 100) / 100;
}

export function healthSchema<T extends TSchema>(checks: T) {
  return Type.Object({ status: Type.Union([Type.Literal('ok'), Type.Literal('degraded')]), checks });
}
