// Both services as a default install runs them (the address guard refusing private networks, no API key), upstreams on a closed port, for the deeper fuzz suites.
import assert from 'node:assert/strict';
import type { LightMyRequestResponse } from 'fastify';
import { buildAuxApp } from '../../src/auxiliary/app.js';
import { createMainClient } from '../../src/auxiliary/main-client.js';
import type { App } from '../../src/http/base-app.js';
import { type Backend, mainAppOn } from '../helpers.js';
import { type Call as ContractCall, checkAnswer, type Service, show as showCall, UPSTREAM } from './fuzz-contract.js';
import { DEAD } from './fuzz-values.js';

const MAIN_ENV = {
  RATE_LIMIT_WRITES_PER_MINUTE: '0',
  RATE_LIMIT_SCRAPE_PER_MINUTE: '0',
  DEMO_SITE_URL: `${DEAD}/`,
  EXTERNAL_POSTS_URL: `${DEAD}/posts`,
  EXTERNAL_POSTS_TIMEOUT_MS: '300',
};

export interface Call extends Omit<ContractCall, 'allowed5xx'> {
  /** The route calls an upstream, so 502/504 are allowed answers. */
  upstream: boolean;
}

const contractCall = ({ upstream, ...call }: Call): ContractCall => ({ ...call, allowed5xx: upstream ? UPSTREAM : [] });
export const show = (call: Call) => showCall(contractCall(call));

export interface StrictServices {
  main: App;
  aux: App;
  /** Requests sent so far. */
  readonly cases: number;
  /** Sends `call` and checks the contract every answer must keep; returns the response for more checks. */
  send(call: Call): Promise<LightMyRequestResponse>;
  /** Both services still answer /health with 200. */
  assertHealthy(): Promise<void>;
  /** How many scrape logs are stored. */
  logCount(): Promise<number>;
  close(): Promise<void>;
}

/** The services on a fresh database of `backend`, with five products for PUT and PATCH to find (ids 1 to 5). */
export async function startStrictServices(backend: Backend): Promise<StrictServices> {
  const closers: Array<() => Promise<void>> = [];
  const closeAll = async () => {
    const failures: unknown[] = [];
    for (const close of [...closers].reverse()) await close().catch((error: unknown) => failures.push(error));
    if (failures.length > 0) throw new AggregateError(failures, 'closing the services failed');
  };
  try {
    return await openStrictServices(backend, closers, closeAll);
  } catch (error) {
    // A start that fails half-way closes what it opened: a service left open keeps the test process alive.
    await closeAll().catch(() => undefined);
    throw error;
  }
}

async function openStrictServices(backend: Backend, closers: Array<() => Promise<void>>, closeAll: () => Promise<void>): Promise<StrictServices> {
  const db = await backend.open();
  closers.push(() => db.close());
  const main = await mainAppOn(db, { after: (fn) => closers.push(fn) }, MAIN_ENV);
  const client = createMainClient(DEAD, 300);
  const aux = await buildAuxApp({
    config: { logLevel: 'silent', bodyLimitBytes: 1_048_576, requestTimeoutMs: 30_000, mainServiceUrl: DEAD, proxyTimeoutMs: 300, corsOrigins: [], allowedHosts: [] },
    main: client,
  });
  closers.push(async () => {
    await aux.close();
    await client.close();
  });
  for (let i = 1; i <= 5; i += 1) {
    const res = await main.inject({ method: 'POST', url: '/products', payload: { title: `Seed ${i}`, price: i } });
    assert.equal(res.statusCode, 201, res.body);
  }
  let cases = 0;
  const appFor = (service: Service): App => (service === 'main' ? main : aux);
  return {
    main,
    aux,
    get cases() {
      return cases;
    },
    async send(call) {
      cases += 1;
      const res = await appFor(call.service).inject({
        method: call.method,
        url: call.url,
        ...(call.headers ? { headers: call.headers } : {}),
        ...(call.payload === undefined ? {} : { payload: call.payload }),
      });
      checkAnswer(contractCall(call), res);
      return res;
    },
    async assertHealthy() {
      for (const service of ['main', 'aux'] as const) {
        const res = await appFor(service).inject({ method: 'GET', url: '/health' });
        assert.equal(res.statusCode, 200, `${service} /health after fuzzing: ${res.body}`);
      }
    },
    async logCount() {
      const res = await main.inject({ method: 'GET', url: '/scrape-logs?limit=1' });
      assert.equal(res.statusCode, 200, res.body);
      return Number(res.headers['x-total-count']);
    },
    close: closeAll,
  };
}
