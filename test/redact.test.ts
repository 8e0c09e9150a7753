// A password in a URL (https://user:password@host/) is used for the request and never stored, served or logged.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { App } from '../src/http/base-app.js';
import { mapStrings, redactDeep } from '../src/redact.js';
import { backends, mainServiceOn, warnIfNoPostgres } from './helpers.js';
import { startMainProcess } from './process-helpers.js';
import { until, untilOutput } from './wait.js';

warnIfNoPostgres();

const USER = 'ann';
const PASSWORD = 'hunter2-s3cr3t';
const BASIC = `Basic ${Buffer.from(`${USER}:${PASSWORD}`).toString('base64')}`;

/** A shop behind HTTP basic auth: 401 without the right credentials; one product page, one missing page. */
async function startPrivateShop() {
  const seen: IncomingHttpHeaders[] = [];
  const server: Server = createServer((req, res) => {
    seen.push(req.headers);
    if (req.url === '/robots.txt') return void res.writeHead(404).end();
    if (req.headers.authorization !== BASIC) return void res.writeHead(401, { 'www-authenticate': 'Basic realm="shop"' }).end('who are you?');
    if (req.url !== '/lamp') return void res.writeHead(404).end('no such page');
    const ld = {
      '@context': 'https://schema.org',
      '@type': 'Product',
      name: 'Private lamp',
      url: '/lamp',
      image: '/lamp.jpg',
      offers: { '@type': 'Offer', price: '42.00', priceCurrency: 'EUR' },
    };
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    res.end(
      `<!doctype html><html><head><title>Private lamp</title><script type="application/ld+json">${JSON.stringify(ld)}</script></head><body><h1>Private lamp</h1></body></html>`,
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    seen,
    url: (path: string) => `http://${USER}:${PASSWORD}@127.0.0.1:${port}${path}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A webhook receiver that records the Authorization header of each delivery. */
async function startReceiver() {
  const authorizations: Array<string | undefined> = [];
  const server = createServer((req, res) => {
    authorizations.push(req.headers.authorization);
    req.resume();
    req.on('end', () => res.writeHead(204).end());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return { authorizations, url: `http://hook:${PASSWORD}@127.0.0.1:${port}/in`, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

const noPassword = (what: string, body: string) => assert.ok(!body.includes(PASSWORD), `${what} shows the password: ${body.slice(0, 300)}`);

for (const backend of backends()) {
  describe(`passwords in URLs on ${backend.name}`, () => {
    let shop: Awaited<ReturnType<typeof startPrivateShop>>;
    let app: App;
    const closers: Array<() => Promise<void>> = [];

    before(async () => {
      shop = await startPrivateShop();
      const db = await backend.open();
      closers.push(
        () => db.close(),
        () => shop.close(),
      );
      ({ app } = await mainServiceOn(db, { after: (fn) => closers.unshift(fn) }, { SCRAPE_ALLOW_PRIVATE_NETWORKS: 'true' }, { work: true }));
    });
    after(async () => {
      for (const close of closers) await close();
    });

    test('a scrape uses the credentials; its product, its log and its answer show the URL with the password masked', async () => {
      const res = await app.inject({ method: 'POST', url: '/scrape', payload: { url: shop.url('/lamp') } });
      assert.equal(res.statusCode, 200, res.body);
      assert.ok(
        shop.seen.some((h) => h.authorization === BASIC),
        'the request carried the credentials',
      );
      noPassword('the scrape answer', res.body);
      const product = res.json().products[0];
      assert.match(product.source_url, new RegExp(`^http://(?:${USER}:\\*\\*\\*@)?127\\.0\\.0\\.1:${new URL(shop.url('/')).port}/lamp$`));
      noPassword('the product', (await app.inject({ url: `/products/${product.id}` })).body);
      noPassword('the product list', (await app.inject({ url: '/products' })).body);
      noPassword('the product export', (await app.inject({ url: '/products', headers: { accept: 'text/csv' } })).body);
      const log = await app.inject({ url: `/scrape-logs/${res.json().log_id}` });
      noPassword('the log', log.body);
      assert.match(log.json().source_url, /ann:\*\*\*@/);
      assert.match(log.json().request.url, /ann:\*\*\*@/);
      noPassword('the events', (await app.inject({ url: '/events' })).body);
      // The same page scraped again is the same product: the key never held the password.
      const again = await app.inject({ method: 'POST', url: '/scrape', payload: { url: shop.url('/lamp') } });
      assert.deepEqual([again.json().created, again.json().updated], [0, 1]);
    });

    test('a failed scrape: the problem and its log quote the URL masked', async () => {
      const res = await app.inject({ method: 'POST', url: '/scrape', payload: { url: shop.url('/missing') } });
      assert.equal(res.statusCode, 502, res.body);
      assert.match(res.json().detail, /ann:\*\*\*@|127\.0\.0\.1/);
      noPassword('the problem', res.body);
      noPassword('the logs', (await app.inject({ url: '/scrape-logs?status=failed' })).body);
    });

    test('jobs and schedules keep the password apart: they run with it, and never show it', async () => {
      const queued = await app.inject({ method: 'POST', url: '/jobs', payload: { url: shop.url('/lamp') } });
      assert.equal(queued.statusCode, 202, queued.body);
      noPassword('the queued job', queued.body);
      const id = queued.json().id;
      const ended = async (jobId: string) =>
        until(`job ${jobId} to end`, async () => {
          const body = (await app.inject({ url: `/jobs/${jobId}` })).json();
          return ['succeeded', 'failed'].includes(body.status) ? body : false;
        });
      let job = await ended(id);
      assert.equal(job.status, 'succeeded', JSON.stringify(job.error));
      noPassword('the job', JSON.stringify(job));
      assert.match(job.request.url, /ann:\*\*\*@/);
      noPassword('the job list', (await app.inject({ url: '/jobs' })).body);

      const schedule = await app.inject({ method: 'POST', url: '/schedules', payload: { cron: '0 3 * * *', job: { url: shop.url('/lamp') } } });
      assert.equal(schedule.statusCode, 201, schedule.body);
      noPassword('the schedule', schedule.body);
      // Changing something else keeps the password the schedule runs with.
      const renamed = await app.inject({ method: 'PATCH', url: `/schedules/${schedule.json().id}`, payload: { name: 'nightly' } });
      noPassword('the changed schedule', renamed.body);
      const run = await app.inject({ method: 'POST', url: `/schedules/${schedule.json().id}/run` });
      assert.equal(run.statusCode, 202, run.body);
      job = await ended(run.json().id);
      assert.equal(job.status, 'succeeded', 'the run had the password');
      noPassword('the schedules', (await app.inject({ url: '/schedules' })).body);
    });

    test('a webhook URL with a password: deliveries authenticate; the webhook shows it masked', async () => {
      const receiver = await startReceiver();
      closers.unshift(() => receiver.close());
      const made = await app.inject({ method: 'POST', url: '/webhooks', payload: { url: receiver.url, events: ['*'] } });
      assert.equal(made.statusCode, 201, made.body);
      noPassword('the new webhook', made.body.replace(made.json().secret, ''));
      assert.match(made.json().url, /hook:\*\*\*@/);
      await app.inject({ method: 'POST', url: '/products', payload: { title: 'Trigger', price: 1 } });
      await until('the delivery', () => receiver.authorizations.length > 0);
      assert.equal(receiver.authorizations[0], `Basic ${Buffer.from(`hook:${PASSWORD}`).toString('base64')}`);
      noPassword('the webhooks', (await app.inject({ url: '/webhooks' })).body);
    });
  });
}

test("the service's own log lines never carry a URL password", async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'redact-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const service = await startMainProcess({ DATA_DIR: dir, LOG_LEVEL: 'info', SCRAPE_ALLOW_PRIVATE_NETWORKS: 'true' });
  t.after(() => {
    service.child.kill('SIGKILL');
  });
  const secretUrl = `http://${USER}:${PASSWORD}@127.0.0.1:9/nothing-listens`;
  await fetch(`${service.base}/products?source_url=${encodeURIComponent(secretUrl)}`);
  await fetch(`${service.base}/scrape`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ url: secretUrl }) });
  // The request lines are written in batches: wait for the scrape's.
  await untilOutput('the request lines to be written', service.output, /"route":"\/scrape"/);
  const output = service.output();
  assert.ok(
    !output.includes(PASSWORD),
    `a log line shows the password:\n${output
      .split('\n')
      .filter((l) => l.includes(PASSWORD))
      .join('\n')}`,
  );
});

test('redactDeep masks every password, copies only what changed, and leaves the value given as it was', () => {
  const clean = { a: [{ url: 'https://shop.example/x' }, 'plain'], n: 1, none: null };
  assert.equal(redactDeep(clean), clean, 'nothing to mask: the same object, not a copy');
  const value = { keep: { deep: ['x'] }, list: ['https://ann:pw@h.example/', 'ok'], top: 'ftp://bob:pw@h.example/f' };
  const masked = redactDeep(value);
  assert.deepEqual(masked, { keep: { deep: ['x'] }, list: ['https://ann:***@h.example/', 'ok'], top: 'ftp://bob:***@h.example/f' });
  assert.equal(masked.keep, value.keep, 'an untouched branch is shared');
  assert.notEqual(masked.list, value.list);
  assert.deepEqual(value.list, ['https://ann:pw@h.example/', 'ok']);
  // Objects that are not plain become their own fields, as before: a class instance, a Date (none).
  class Box {
    inner = 'x';
  }
  assert.deepEqual(
    mapStrings({ box: new Box(), at: new Date(0) }, (s) => s.toUpperCase()),
    { box: { inner: 'X' }, at: {} },
  );
});
