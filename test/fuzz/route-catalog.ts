// Every route a service has, read from the app itself (its router and /openapi.json), with what the fuzzer needs to know of each.
import type { HTTPMethods } from 'fastify';
import type { App } from '../../src/http/base-app.js';
import type { Service } from './fuzz-contract.js';
import { type Schema, unsupported } from './schema-arbitrary.js';

export interface Param {
  name: string;
  schema: Schema;
  required: boolean;
}

export interface Route {
  service: Service;
  /** GET stands for HEAD too when both are routed (`head`). */
  method: HTTPMethods;
  /** As the router has it: `/products/:id`, `/ui/*`. */
  path: string;
  /** `main GET /products/{id}`: what the suite reports. */
  title: string;
  documented: boolean;
  params: Param[];
  query: Param[];
  headers: Param[];
  /** Content types the route takes, each with its schema. */
  bodies: Array<{ type: string; schema: Schema }>;
  /** Answers text/event-stream: fuzzed over a real socket, the stream cut after its first bytes. */
  stream: boolean;
  /** Documented as needing the API key. */
  secured: boolean;
  /** The 5xx statuses it may answer: 502/503/504 where it documents them and depends on an upstream (it documents 502 or 504). */
  allowed5xx: number[];
  head: boolean;
}

/**
 * Routes left out of /openapi.json on purpose, fuzzed with random query strings, headers and (for a
 * wildcard) paths under them. A new undocumented route fails the coverage test until it is listed here.
 */
export const UNDOCUMENTED: Record<Service, readonly string[]> = {
  main: [
    '/metrics',
    '/openapi.json',
    '/docs',
    '/docs/',
    '/docs/json',
    '/docs/yaml',
    '/docs/static/index.html',
    '/docs/static/swagger-initializer.js',
    '/docs/static/*',
    '/ui',
    '/ui/*',
    '/ui/assets/*',
    '/ui/vendor/*',
  ],
  aux: ['/metrics', '/openapi.json', '/docs', '/docs/', '/docs/json', '/docs/yaml', '/docs/static/index.html', '/docs/static/swagger-initializer.js', '/docs/static/*'],
};

/** Body content types with a generator: JSON from the schema, plain text, CSV lines. */
export const BODY_TYPES = new Set(['application/json', 'text/plain', 'text/csv']);

/** The router's (method, path) pairs, from its printed tree (Fastify offers no list; each is checked against the router). */
export function routerRoutes(app: App): Array<{ method: HTTPMethods; path: string }> {
  const stack: string[] = [];
  const out: Array<{ method: HTTPMethods; path: string }> = [];
  for (const line of app.printRoutes().split('\n')) {
    const m = /^((?:[│ ] {3})*)(?:├── |└── )(.*?)(?: \(([A-Z, ]+)\))?$/.exec(line);
    if (m === null) continue;
    stack.length = m[1]!.length / 4;
    stack.push(m[2]!);
    if (m[3] !== undefined) for (const method of m[3].split(', ')) out.push({ method: method as HTTPMethods, path: stack.join('') });
  }
  return out;
}

interface Operation {
  parameters?: Array<{ in: string; name: string; required?: boolean; schema: Schema }>;
  requestBody?: { content: Record<string, { schema?: Schema }> };
  responses?: Record<string, { content?: Record<string, unknown> }>;
  security?: unknown[];
}

/** The service's routes, and the ones the fuzzer has no generator for (with why). */
export function catalog(service: Service, app: App): { routes: Route[]; missing: string[] } {
  const doc = app.swagger() as { paths: Record<string, Record<string, Operation>> };
  const pairs = routerRoutes(app);
  const routes: Route[] = [];
  const missing: string[] = [];
  const has = (method: string, path: string) => pairs.some((p) => p.method === method && p.path === path);
  for (const { method, path } of pairs) {
    if (method === 'HEAD' && has('GET', path)) continue;
    const openapiPath = path.replace(/:(\w+)/g, '{$1}');
    const op = doc.paths[openapiPath]?.[method.toLowerCase()];
    const title = `${service} ${method} ${openapiPath}`;
    const base = { service, method, path, title, head: method === 'GET' && has('HEAD', path) };
    if (!app.hasRoute({ method, url: path })) missing.push(`${title}: read from the route tree, but the router does not know it`);
    if (op === undefined) {
      if (!UNDOCUMENTED[service].includes(path)) missing.push(`${title}: not in /openapi.json and not listed in UNDOCUMENTED`);
      routes.push({ ...base, documented: false, params: [], query: [], headers: [], bodies: [], stream: false, secured: false, allowed5xx: [] });
      continue;
    }
    const params = (where: string): Param[] => (op.parameters ?? []).filter((p) => p.in === where).map((p) => ({ name: p.name, schema: p.schema, required: p.required === true }));
    const bodies = Object.entries(op.requestBody?.content ?? {}).map(([type, media]) => ({ type, schema: media.schema ?? {} }));
    const responses = op.responses ?? {};
    const documented5xx = Object.keys(responses)
      .map(Number)
      .filter((s) => s >= 500);
    const upstream = documented5xx.includes(502) || documented5xx.includes(504);
    const route: Route = {
      ...base,
      documented: true,
      params: params('path'),
      query: params('query'),
      headers: params('header'),
      bodies,
      stream: 'text/event-stream' in (responses['200']?.content ?? {}),
      secured: (op.security ?? []).length > 0,
      allowed5xx: upstream ? documented5xx.filter((s) => s === 502 || s === 503 || s === 504) : [],
    };
    for (const body of bodies) {
      if (!BODY_TYPES.has(body.type)) missing.push(`${title}: no generator for ${body.type} bodies`);
    }
    for (const [part, list] of [
      ['path', route.params],
      ['query', route.query],
      ['header', route.headers],
    ] as const) {
      for (const p of list) for (const gap of unsupported(p.schema)) missing.push(`${title}: ${part} parameter ${p.name}${gap}`);
    }
    for (const body of bodies) for (const gap of unsupported(body.schema)) missing.push(`${title}: ${body.type} body ${gap}`);
    routes.push(route);
  }
  return { routes, missing };
}

/** The route's path with `values` put in for its parameters (already encoded), and `tail` for a wildcard. */
export function fillPath(route: Route, values: Record<string, string>, tail = ''): string {
  return route.path.replace(/:(\w+)/g, (_, name: string) => values[name] ?? '').replace(/\*$/, tail);
}
