// Both services for the route fuzzer on one backend: the main one behind an API key and on a socket, the auxiliary one relaying to it, some of everything stored.
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { buildAuxApp } from '../../src/auxiliary/app.js';
import { createMainClient } from '../../src/auxiliary/main-client.js';
import type { App } from '../../src/http/base-app.js';
import { type Backend, mainServiceOn } from '../helpers.js';
import { type Answer, type Call, show, within } from './fuzz-contract.js';
import { startFuzzSite, type FuzzSite } from './fuzz-site.js';
import { DEAD } from './fuzz-values.js';
import type { Route } from './route-catalog.js';
import type { Hints, Schema } from './schema-arbitrary.js';

export const API_KEY = 'fuzz-key-7Qm2xVb9';
const KEYED = { 'x-api-key': API_KEY };
/** Longer than any answer may take: a request past it is reported as a hang. */
export const ANSWER_MS = 30_000;
/** An answer slower than this is listed (not failed): a loaded machine may take it, a creeping cost shows. */
const SLOW_MS = 5_000;

/** Ids that exist, by the collection their routes take them from (`/products`, `/webhooks/:id/deliveries`...). */
export class Pools {
  private readonly sets = new Map<string, Set<string>>();

  add(key: string, ...ids: Array<string | number>): void {
    const set = this.sets.get(key) ?? new Set<string>();
    for (const id of ids) set.add(String(id));
    this.sets.set(key, set);
  }

  get(key: string): string[] {
    return [...(this.sets.get(key) ?? [])];
  }

  /** Every stored uuid but the sending channels' (for fields that name another resource: channel_ids, webhook_id). */
  uuids(): string[] {
    return [...this.sets.entries()].filter(([key]) => key !== SENDING).flatMap(([, ids]) => [...ids].filter((id) => /^[0-9a-f-]{36}$/.test(id)));
  }

  /** A created resource's id, from its Location header (`/webhooks/<id>` goes to `/webhooks`). */
  learn(res: Answer): void {
    const location = res.headers.location;
    if (res.statusCode >= 300 || typeof location !== 'string') return;
    const m = /^(\/[a-z-]+(?:\/[a-z-]+)?)\/([^/?]+)$/.exec(location);
    if (m) this.add(m[1]!, decodeURIComponent(m[2]!));
  }
}

/**
 * POST /channels/{id}/test sends at once: its ids come only from this pool, channels aimed at the local
 * site that no other route is given (a fuzzed PATCH could aim one anywhere).
 */
const SENDING = 'sending channels';

/** The pool a route's path parameter draws from: the collection before it. */
export function poolKey(route: Route, param: string): string {
  if (route.method === 'POST' && route.path === '/channels/:id/test') return SENDING;
  const before = route.path.slice(0, route.path.indexOf(`:${param}`) - 1);
  return before.replace(/^\/proxy\/products$/, '/products');
}

export interface Services {
  main: App;
  aux: App;
  /** Where the main service listens (event streams are read over a socket). */
  mainBase: string;
  site: FuzzSite;
  pools: Pools;
  /** Sends `call` (streams over the socket, the rest through inject) within ANSWER_MS. */
  send(call: Call, stream?: boolean): Promise<Answer>;
  /** The requests that took longer than SLOW_MS, with how long. */
  slow: string[];
  hints: Hints;
  close(): Promise<void>;
}

/** Closes in reverse order, every step whatever one before it did: a service left listening keeps the test process alive. */
async function closeAll(closers: Array<() => Promise<void>>): Promise<void> {
  const failures: unknown[] = [];
  for (const close of [...closers].reverse()) {
    await within(ANSWER_MS, close(), () => 'closing the services').catch((error: unknown) => failures.push(error));
  }
  if (failures.length > 0) throw new AggregateError(failures, 'closing the services failed');
}

export async function startServices(backend: Backend): Promise<Services> {
  const closers: Array<() => Promise<void>> = [];
  try {
    return await openServices(backend, closers);
  } catch (error) {
    // A start that fails half-way (a seeding scrape too slow on a loaded machine) closes what it opened.
    await closeAll(closers).catch(() => undefined);
    throw error;
  }
}

async function openServices(backend: Backend, closers: Array<() => Promise<void>>): Promise<Services> {
  const db = await backend.open();
  closers.push(() => db.close());
  const site = await startFuzzSite();
  closers.push(() => site.close());
  // Private networks allowed so scrapes and test messages can reach the local site; every request that
  // would fetch at once is checked to name nothing but that site (reachesOnlySite below).
  const { app: main } = await mainServiceOn(
    db,
    { after: (fn) => closers.push(fn) },
    {
      API_KEY,
      RATE_LIMIT_WRITES_PER_MINUTE: '0',
      RATE_LIMIT_SCRAPE_PER_MINUTE: '0',
      SCRAPE_ALLOW_PRIVATE_NETWORKS: 'true',
      DEMO_SITE_URL: `${site.base}/listing`,
      EXTERNAL_POSTS_URL: `${DEAD}/posts`,
      EXTERNAL_POSTS_TIMEOUT_MS: '300',
      // The default page timeout: extraction on a loaded machine has taken past 5 s.
      SCRAPE_TIMEOUT_MS: '15000',
      ALERT_TIMEOUT_MS: '2000',
    },
  );
  const mainBase = await main.listen({ port: 0, host: '127.0.0.1' });
  const client = createMainClient(mainBase, 5_000);
  const aux = await buildAuxApp({
    config: { logLevel: 'silent', bodyLimitBytes: 1_048_576, requestTimeoutMs: 30_000, mainServiceUrl: mainBase, proxyTimeoutMs: 5_000, corsOrigins: [], allowedHosts: [] },
    main: client,
  });
  closers.push(async () => {
    await aux.close();
    await client.close();
  });
  await aux.ready();

  const slow: string[] = [];
  const send = async (call: Call, stream = false): Promise<Answer> => {
    const started = performance.now();
    const res = await within(ANSWER_MS, stream ? overSocket(mainBase, call) : inject(call.service === 'main' ? main : aux, call), () => show(call));
    const ms = performance.now() - started;
    if (ms > SLOW_MS) slow.push(`${Math.round(ms)} ms: ${show(call).slice(0, 300)}`);
    return res;
  };
  const pools = new Pools();
  await seed(main, site, pools);
  return {
    main,
    aux,
    mainBase,
    site,
    pools,
    send,
    slow,
    hints: hintsFor(site, pools),
    close: () => closeAll(closers),
  };
}

async function inject(app: App, call: Call): Promise<Answer> {
  const res = await app.inject({
    method: call.method,
    url: call.url,
    ...(call.headers ? { headers: call.headers } : {}),
    ...(call.payload === undefined ? {} : { payload: call.payload }),
  });
  return { statusCode: res.statusCode, headers: res.headers, body: res.body };
}

/** An event stream never ends by itself: its first bytes are read, then the client goes away. */
async function overSocket(base: string, call: Call): Promise<Answer> {
  const controller = new AbortController();
  // Its own deadline too: a request left hanging would hold its connection, and closing the app would wait on it for ever.
  const deadline = setTimeout(() => controller.abort(), ANSWER_MS);
  try {
    const res = await fetch(base + call.url, { method: call.method, headers: call.headers ?? {}, signal: controller.signal });
    const headers = Object.fromEntries(res.headers.entries());
    let body = '';
    if (String(headers['content-type']).startsWith('text/event-stream')) {
      assert.equal(res.status, 200, `an event stream with status ${res.status}: ${show(call)}`);
      const first = call.method === 'HEAD' ? undefined : await res.body?.getReader().read();
      body = first?.value ? Buffer.from(first.value).toString('utf8') : '';
      if (call.method !== 'HEAD') assert.match(body, /^(?:retry|:|id|event|data)/, `the stream began with ${JSON.stringify(body)}: ${show(call)}`);
    } else {
      body = await res.text();
    }
    return { statusCode: res.status, headers, body };
  } finally {
    clearTimeout(deadline);
    controller.abort();
  }
}

/** Some of everything, so fuzzed ids find real rows: products, articles and revisions, rules, channels, webhooks and deliveries, jobs, logs. */
async function seed(main: App, site: FuzzSite, pools: Pools): Promise<void> {
  const call = async (method: 'GET' | 'POST' | 'PUT', url: string, payload?: unknown, status?: number) => {
    const res = await main.inject({ method, url, headers: KEYED, ...(payload === undefined ? {} : { payload: payload as object }) });
    if (status !== undefined) assert.equal(res.statusCode, status, `seeding ${method} ${url}: ${res.body}`);
    pools.learn(res);
    return res;
  };
  const items = (body: unknown): Array<Record<string, unknown>> => (Array.isArray(body) ? body : ((body as { items?: unknown[] }).items ?? [])) as Array<Record<string, unknown>>;
  const products = [];
  for (const [title, price] of [
    ['Espresso machine', 249.99],
    ['Milk jug', 12.5],
    ['Tamper', 19],
  ] as const) {
    products.push((await call('POST', '/products', { title, price, currency: 'EUR' }, 201)).json().id as number);
  }
  const hook = (await call('POST', '/webhooks', { url: `${site.base}/hook`, events: ['*'] }, 201)).json().id as string;
  // The sending channels' own webhook stays out of every pool, like the channels.
  const channelHook = (await main.inject({ method: 'POST', url: '/webhooks', headers: KEYED, payload: { url: `${site.base}/hook-channel`, events: ['product.created'] } })).json()
    .id as string;
  const sending = [
    { kind: 'ntfy', server_url: `${site.base}/`, topic: 'fuzz' },
    { kind: 'gotify', server_url: site.base, token: 'gotify-token' },
    { kind: 'slack', webhook_url: `${site.base}/slack` },
    { kind: 'discord', webhook_url: `${site.base}/discord` },
    { kind: 'teams', workflow_url: `${site.base}/teams` },
    { kind: 'telegram', bot_token: '123456:ABCDEFGHIJKLMNOP', chat_id: '-100123', api_url: site.base },
    { kind: 'email', host: '127.0.0.1', port: 9, security: 'none', from: 'alerts@shop.example', to: ['me@home.example'] },
    { kind: 'webhook', webhook_id: channelHook },
  ];
  for (const config of sending) {
    const res = await main.inject({ method: 'POST', url: '/channels', headers: KEYED, payload: { name: `send ${config.kind}`, enabled: true, config } });
    assert.equal(res.statusCode, 201, res.body);
    pools.add(SENDING, res.json().id);
  }
  const channel = (await call('POST', '/channels', { name: 'phone', enabled: true, config: { kind: 'ntfy', server_url: `${site.base}/`, topic: 'phone' } }, 201)).json().id;
  const rule = {
    name: 'cheap',
    scope: { type: 'all' },
    condition: { type: 'price_at_or_below', target: 1000 },
    cooldown_minutes: 0,
    digest: 'immediate',
    channel_ids: [channel],
    enabled: true,
  };
  await call('POST', '/alert-rules', rule, 201);
  await call('POST', '/site-rules', { host_pattern: 'shop.invalid', fields: { price: { selector: '.price' } } }, 201);
  await call('PUT', `/products/${products[0]}/tags`, { tags: ['espresso', 'kitchen'] }, 200);
  await call('PUT', '/source-tags', { source: `${site.base}/listing`, tags: ['watch'] }, 200);
  pools.add('/products', ...products);
  pools.add('/products/:id/tags', 'espresso', 'kitchen');
  pools.add('/tags', 'espresso', 'kitchen', 'watch');
  pools.add('/source-tags', `${site.base}/listing`);
  for (const [url, status] of [
    ['/listing', 200],
    ['/product', 200],
    ['/article', 200],
    ['/article', 200],
    ['/missing', 502],
  ] as const) {
    const res = await call('POST', '/scrape', { url: site.base + url, max_pages: 3 }, status);
    pools.add('/scrape-logs', status === 200 ? res.json().log_id : ((await call('GET', '/scrape-logs?limit=1', undefined, 200)).json()[0].id as string));
  }
  const articles = items((await call('GET', '/articles', undefined, 200)).json()).map((a) => a.id as number);
  assert.ok(articles.length > 0, 'seeding: the article page gave no article');
  pools.add('/articles', ...articles);
  await call('PUT', `/articles/${articles[0]}/tags`, { tags: ['news'] }, 200);
  pools.add('/articles/:id/tags', 'news');
  await call('POST', '/jobs', { url: `${site.base}/product` }, 202);
  await call('POST', '/schedules', { every_minutes: 60, job: { url: `${site.base}/product` } }, 201);
  pools.add('/alerts', ...items((await call('GET', '/alerts', undefined, 200)).json()).map((a) => a.id as number));
  pools.add('/webhooks/:id/deliveries', ...items((await call('GET', `/webhooks/${hook}/deliveries`, undefined, 200)).json()).map((d) => d.id as string));
  pools.add('/products', ...items((await call('GET', '/products?limit=20', undefined, 200)).json()).map((p) => p.id as number));
}

/** Values for fields whose meaning a schema does not say: URLs (of the local site), ids that exist, calendars, selectors. */
function hintsFor(site: FuzzSite, pools: Pools): Hints {
  const urls = fc.constantFrom(...site.pages, `${DEAD}/`, 'https://shop.invalid/p/1', 'ftp://127.0.0.1/', 'javascript:alert(1)', 'http://', `${site.base}/${'a'.repeat(2100)}`);
  const orRandom = (known: () => unknown[], random: fc.Arbitrary<unknown>) =>
    fc.constant(null).chain(() => (known().length > 0 ? fc.oneof(fc.constantFrom(...known()), random) : random));
  return (name: string, schema: Schema) => {
    if (schema.type !== 'string' && schema.type !== 'integer' && !(Array.isArray(schema.type) && schema.type.includes('string'))) return undefined;
    if (/url$|^source$|^url$/.test(name) || schema.format === 'uri' || schema.pattern === '^https?://') return urls;
    if (schema.format === 'uuid') return orRandom(() => pools.uuids(), fc.uuid());
    if (name === 'product_id' || name === 'product_ids') return orRandom(() => pools.get('/products').map(Number), fc.integer({ min: 1, max: 50 }));
    if (name === 'tag' || name === 'tags') return orRandom(() => pools.get('/tags'), fc.constantFrom('espresso', ' Watch ', 'a;b', 'x'.repeat(65)));
    if (name === 'cron') return fc.constantFrom('0 7 * * *', '*/5 * * * *', '0 0 29 2 *', '61 * * * *', '* * * * * *', '0 0 31 4 *');
    if (name === 'timezone') return fc.constantFrom('UTC', 'Europe/Berlin', 'America/St_Johns', 'Mars/Olympus', '+05:00', 'utc');
    if (name === 'host' || name === 'host_pattern' || name === 'site')
      return fc.constantFrom('127.0.0.1', 'localhost', '[::1]', 'shop.invalid', '*.shop.invalid', 'xn--bcher-kva.invalid', '*');
    if (name === 'json_path') return fc.constantFrom('$.offers.price', "$['props']['sku']", '$..price', '$[', '$.a.b.c.d.e.f.g', '$.offers[0].price');
    if (/selector|^item$|^title$|^price$|^link$|^wait_for$|^description$/.test(name) && schema.type === 'string') {
      return fc.constantFrom('div', 'h1', '.price', 'a.b', 'h3 a', '>>>', '[', ':has(', '*', 'div:nth-child(2n+1)', 'h1 ~ div ~ .price', 'a[href^="x"]');
    }
    return undefined;
  };
}

/**
 * Whether a request to a route that fetches at once (it documents 502/504) names no host but the local
 * site: every http(s) URL anywhere in its body is on the site, and it asks for no browser.
 */
export function reachesOnlySite(site: FuzzSite, payload: unknown): boolean {
  // A loop, not recursion: bodies nest 200 000 deep.
  const stack: unknown[] = [payload];
  while (stack.length > 0) {
    const value = stack.pop();
    if (typeof value === 'string') {
      let url: URL | undefined;
      try {
        url = new URL(value.trim());
      } catch {}
      if (url && /^https?:$/i.test(url.protocol) && !(url.hostname === '127.0.0.1' && [String(site.port), '9'].includes(url.port))) return false;
    } else if (Array.isArray(value)) {
      for (const item of value) stack.push(item);
    } else if (value !== null && typeof value === 'object') {
      for (const [key, inner] of Object.entries(value)) {
        if (key === 'use_selenium' && inner !== false) return false;
        stack.push(inner);
      }
    }
  }
  return true;
}

export { KEYED };
