// Property tests over every route of both services, read from the apps themselves, on each backend: random and malformed input never breaks the error contract.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import fc from 'fast-check';
import { backends, warnIfNoPostgres } from '../helpers.js';
import { type Answer, checkAnswer, names, namedPaths, where } from './fuzz-contract.js';
import { KEYED, reachesOnlySite, type Services, startServices } from './fuzz-services.js';
import { NOT_JSON, runs } from './fuzz-values.js';
import { catalog, type Route } from './route-catalog.js';
import { brokenRequestFor, parseJson, plainRequest, requestFor, type Surroundings } from './route-requests.js';

warnIfNoPostgres();

interface Tally {
  sent: number;
  /** Answers from the route itself: not the router's 404, not refused for the key, the host or the origin. */
  reached: number;
  heads: number;
  statuses: Map<number, number>;
}

/** Whether the answer came from the route rather than from what stands before it. */
function reachedRoute(res: Answer): boolean {
  if ([401, 403, 421].includes(res.statusCode)) return false;
  return !(res.statusCode === 404 && /"detail":"No route /.test(res.body));
}

/** The paths the services' own pages link to (src, href, import maps): the files their wildcard routes serve. */
async function linkedFiles(s: Services): Promise<string[]> {
  const files = new Set<string>();
  for (const [app, page] of [
    [s.main, '/ui'],
    [s.main, '/docs/static/index.html'],
    [s.aux, '/docs/static/index.html'],
  ] as const) {
    const html = (await app.inject({ url: page })).body;
    for (const m of html.matchAll(/(?:src|href)="([^"]+)"|"(\/ui\/[^"]+)"/g)) files.add(new URL(m[1] ?? m[2]!, `http://x${page}`).pathname);
  }
  return [...files];
}

/**
 * A route's property, shrinking included, ends within this: a request that hangs fails after ANSWER_MS,
 * and shrinking one could otherwise retry it for hours. Normal runs take a second or two.
 */
const BOUNDED = { interruptAfterTimeLimit: runs(180_000), markInterruptAsFailure: true };

/** Deletes last, so the other routes meet the stored rows first. */
const order = (routes: Route[]) => [...routes.filter((r) => r.method !== 'DELETE'), ...routes.filter((r) => r.method === 'DELETE')];

for (const backend of backends()) {
  describe(`every route of both services on ${backend.name}: random and malformed input keeps the error contract`, () => {
    let s: Services;
    let routes: Route[] = [];
    let missing: string[] = [];
    let around: Surroundings = { queryNames: [], files: [] };
    const tallies = new Map<string, Tally>();
    const prototypeBefore = Object.getOwnPropertyNames(Object.prototype).sort();

    before(async () => {
      s = await startServices(backend);
      const main = catalog('main', s.main);
      const aux = catalog('aux', s.aux);
      routes = [...main.routes, ...aux.routes];
      missing = [...main.missing, ...aux.missing];
      around = { queryNames: [...new Set(routes.flatMap((r) => r.query.map((q) => q.name)))], files: await linkedFiles(s) };
      for (const route of routes) tallies.set(route.title, { sent: 0, reached: 0, heads: 0, statuses: new Map() });
    });
    after(async () => {
      await s?.close();
    });

    test('every route of both services has a generator', (t) => {
      assert.deepEqual(missing, [], `routes the fuzzer cannot generate requests for:\n  ${missing.join('\n  ')}`);
      for (const service of ['main', 'aux'] as const) {
        const own = routes.filter((r) => r.service === service);
        assert.ok(
          own.some((r) => r.documented && r.params.length > 0),
          `${service}: no route with a path parameter was found; is the route list read right?`,
        );
        t.diagnostic(`${service}: ${own.length} routes (${new Set(own.map((r) => r.path)).size} paths), ${own.filter((r) => !r.documented).length} undocumented`);
      }
    });

    test('random requests to each route: never a 5xx but an upstream route’s 502/503/504, every error a problem, the key where documented', async (t) => {
      for (const route of order(routes)) {
        await t.test(route.title, async (st) => {
          const tally = tallies.get(route.title)!;
          const request = requestFor(s, route, around);
          const fetchesNow = route.service === 'main' && route.allowed5xx.length > 0;
          await fc.assert(
            fc.asyncProperty(request, async (r) => {
              // A request that would fetch at once may name no host but the local site (and ask for no browser).
              if (fetchesNow && r.json === 'valid') fc.pre(reachesOnlySite(s.site, parseJson(String(r.call.payload))));
              const res = await s.send(r.call, route.stream);
              checkAnswer(r.call, res);
              tally.sent += 1;
              tally.statuses.set(res.statusCode, (tally.statuses.get(res.statusCode) ?? 0) + 1);
              if (r.call.method === 'HEAD') tally.heads += 1;
              else if (reachedRoute(res)) tally.reached += 1;
              if (route.service === 'main') s.pools.learn(res);
              if (route.service === 'main' && route.documented) {
                if (r.key === 'right') assert.notEqual(res.statusCode, 401, `the right key was refused${where(r.call, res)}`);
                else if (!route.secured) assert.notEqual(res.statusCode, 401, `a key was asked where none is documented${where(r.call, res)}`);
                else if (r.plain) assert.equal(res.statusCode, 401, `no key or a wrong one, and no 401${where(r.call, res)}`);
              }
              const type = (r.call.headers?.['content-type'] ?? '').toLowerCase();
              const text = r.call.payload?.toString() ?? '';
              const takes = route.bodies.map((b) => b.type);
              if (r.clean && takes.length === 1 && takes[0] === 'application/json' && text !== '') {
                if (NOT_JSON.has(type)) assert.equal(res.statusCode, 415, `a body that is not JSON must be 415${where(r.call, res)}`);
                if (type === 'application/json' && text.trim() !== '' && r.json === 'invalid') assert.equal(res.statusCode, 400, `malformed JSON must be 400${where(r.call, res)}`);
              }
              if (route.path.endsWith('*') && res.statusCode < 300) {
                assert.doesNotMatch(res.body, /root:x:0:|"devDependencies"|"dependencies"\s*:|DATABASE_URL=/, `a file from outside what the route serves${where(r.call, res)}`);
              }
            }),
            { numRuns: runs(route.documented ? 40 : 15), includeErrorInReport: true, ...BOUNDED },
          );
          if (route.head) {
            // HEAD answers as GET would, without a body; once at least, whatever the draws.
            const head = plainRequest(s, route, 'HEAD');
            const res = await s.send(head, route.stream);
            checkAnswer(head, res);
            assert.equal(res.body, '', `a HEAD answer with a body${where(head, res)}`);
            tally.heads += 1;
          }
          st.diagnostic(
            `${tally.sent} requests, ${tally.reached} answered by the route: ${[...tally.statuses]
              .sort(([a], [b]) => a - b)
              .map(([code, n]) => `${code}×${n}`)
              .join(' ')}`,
          );
        });
      }
    });

    test('a request valid but in one place is a 422 naming that place', async (t) => {
      for (const route of order(routes)) {
        const broken = brokenRequestFor(s, route);
        if (broken === undefined) continue;
        await t.test(route.title, async (st) => {
          let checked = 0;
          await fc.assert(
            fc.asyncProperty(broken, async (b) => {
              fc.pre(b !== undefined && (route.allowed5xx.length === 0 || reachesOnlySite(s.site, b.body ?? null)));
              const res = await s.send(b!.call, route.stream);
              const problem = checkAnswer(b!.call, res);
              checked += 1;
              assert.equal(res.statusCode, 422, `${b!.path} broken (${b!.how}) and no 422${where(b!.call, res)}`);
              const named = namedPaths(problem);
              assert.ok(
                named.some((p) => names(p, b!.path)),
                `${b!.path} broken (${b!.how}), the 422 names ${JSON.stringify(named)}${where(b!.call, res)}`,
              );
            }),
            { numRuns: runs(25), includeErrorInReport: true, ...BOUNDED },
          );
          st.diagnostic(`${checked} broken requests`);
        });
      }
    });

    test('each route was reached: answered by the route itself, not by the router or the key check', (t) => {
      for (const line of s.slow) t.diagnostic(`slow: ${line}`);
      const unreached = routes.filter((r) => tallies.get(r.title)!.reached === 0).map((r) => r.title);
      assert.deepEqual(unreached, [], 'routes no fuzzed request reached');
      const headless = routes.filter((r) => r.head && tallies.get(r.title)!.heads === 0).map((r) => r.title);
      assert.deepEqual(headless, [], 'GET routes never sent a HEAD');
    });

    test('afterwards both services answer /health and ordinary requests, and no prototype was polluted', async () => {
      for (const app of [s.main, s.aux]) {
        const health = await app.inject({ url: '/health' });
        assert.equal(health.statusCode, 200, health.body);
      }
      const created = await s.main.inject({ method: 'POST', url: '/products', headers: KEYED, payload: { title: 'After the storm', price: 19.99, currency: 'EUR' } });
      assert.equal(created.statusCode, 201, created.body);
      const id = created.json().id as number;
      const read = await s.aux.inject({ url: `/proxy/products/${id}` });
      assert.equal(read.statusCode, 200, read.body);
      assert.equal(read.json().title, 'After the storm');
      assert.equal(read.json().price, 19.99);
      const listed = await s.main.inject({ url: '/products?q=storm' });
      assert.equal(listed.statusCode, 200, listed.body);
      assert.ok(
        listed.json().some((p: { id: number }) => p.id === id),
        listed.body,
      );
      const text = await s.aux.inject({ method: 'POST', url: '/process/text', payload: { text: 'Still here. Still counting.' } });
      assert.equal(text.statusCode, 200, text.body);
      assert.equal(text.json().word_count, 4);
      assert.deepEqual(Object.getOwnPropertyNames(Object.prototype).sort(), prototypeBefore, 'Object.prototype gained properties');
      assert.equal(({} as Record<string, unknown>).x, undefined);
    });
  });
}
