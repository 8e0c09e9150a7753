// The soak: an hour (SOAK_MINUTES) of schedules every minute over a few hundred products of a local shop whose
// prices and stock move, alert rules on, the API and two worker processes on a fresh PostgreSQL database.
// Each minute: every process's memory and event-loop delay (bench/soak-probe.mjs), the database's size, the
// jobs and alerts so far. At the end: nothing lost (every job ended well, every alert delivered once), no
// schedule run twice for one due time, and whether memory and size stayed flat after the warm-up.
//
// Run: BENCH_DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres node --import tsx bench/soak.ts
// (SOAK_MINUTES=60, SOAK_LISTINGS=15 of 20 products, BENCH_SKIP_BUILD=1 to use the existing dist/).
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { createBenchDatabase } from './database.js';
import { freePort, startChild, stopAllChildren, type Child } from './processes.js';

const ROOT = new URL('..', import.meta.url).pathname;
const MINUTES = Number(process.env.SOAK_MINUTES ?? 60);
const LISTINGS = Number(process.env.SOAK_LISTINGS ?? 15);
const PER_PAGE = 20;
const PROBE_MS = 60_000;
/** When the schedules began (set once they exist): minutes and the shop's changes count from it. */
let started = Date.now();
const minuteOf = (at = Date.now()) => Math.floor((at - started) / 60_000);

/** Product i's price and stock at a moment: a tenth of the products change every five minutes, some go out of stock and come back. */
function stateOf(i: number, at: number) {
  const bucket = Math.floor((at - started) / 300_000);
  const moved = (bucket + i) % 10 === 0 ? 1 : 0;
  const price = 10 + (i % 50) + ((Math.floor(bucket / 10) + moved + i) % 3) * 0.5;
  return { price: price.toFixed(2), inStock: (bucket + i) % 17 !== 0 };
}

function listing(n: number): string {
  const now = Date.now();
  const products = Array.from({ length: PER_PAGE }, (_, k) => {
    const i = n * PER_PAGE + k;
    const { price, inStock } = stateOf(i, now);
    return {
      '@type': 'Product',
      name: `Soak product ${i}`,
      sku: `SOAK-${i}`,
      url: `/products/${i}`,
      offers: { '@type': 'Offer', price, priceCurrency: 'EUR', availability: `https://schema.org/${inStock ? 'InStock' : 'OutOfStock'}` },
    };
  });
  const cards = products.map((p) => `<li class="product"><a href="${p.url}">${p.name}</a> <span class="price">€${p.offers.price}</span></li>`).join('');
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Listing ${n}</title><script type="application/ld+json">${JSON.stringify({ '@context': 'https://schema.org', '@graph': products })}</script></head><body><h1>Listing ${n}</h1><ul>${cards}</ul></body></html>`;
}

async function listen(server: Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

async function main(): Promise<void> {
  const adminUrl = process.env.BENCH_DATABASE_URL;
  if (adminUrl === undefined) throw new Error('set BENCH_DATABASE_URL (an administrative PostgreSQL URL)');
  if (process.env.BENCH_SKIP_BUILD !== '1') {
    const built = spawnSync('npm', ['run', 'build'], { cwd: ROOT, stdio: ['ignore', 2, 2] });
    if (built.status !== 0) throw new Error('the build failed');
  }
  const shop = createServer((req, res) => {
    const match = /^\/listing\/(\d+)$/.exec(req.url ?? '');
    if (req.url === '/robots.txt') return void res.writeHead(404).end();
    if (match === null) return void res.writeHead(404).end();
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(listing(Number(match[1])));
  });
  const shopUrl = await listen(shop);
  // Where the alerts go: an ntfy-style receiver that counts what arrives.
  let received = 0;
  const receiver = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      received += 1;
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  const receiverUrl = await listen(receiver);

  const db = await createBenchDatabase(adminUrl);
  const results = join(ROOT, 'bench', 'results');
  mkdirSync(results, { recursive: true });
  const stamp = new Date().toISOString().replace(/\D/g, '').slice(0, 14);
  const probeFile = join(results, `soak-probe-${stamp}.jsonl`);
  const port = await freePort();
  const common = {
    DATABASE_URL: db.url,
    SCRAPE_ALLOW_PRIVATE_NETWORKS: 'true',
    SCRAPE_OBEY_ROBOTS: 'false',
    LOG_LEVEL: 'warn',
    SOAK_PROBE_FILE: probeFile,
    SOAK_PROBE_MS: String(PROBE_MS),
    RATE_LIMIT_WRITES_PER_MINUTE: '0',
  };
  const probe = ['--import', join(ROOT, 'bench', 'soak-probe.mjs')];
  const children: Child[] = [];
  const api = startChild('api', [...probe, 'dist/main/server.js'], { ...common, PORT: String(port), WORKERS: '0', SOAK_PROBE_NAME: 'api' }, ROOT);
  children.push(api);
  const base = `http://127.0.0.1:${port}`;
  const call = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(`${base}${path}`, {
      method,
      headers: body === undefined ? {} : { 'content-type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await res.text();
    if (res.status >= 400) throw new Error(`${method} ${path}: ${res.status} ${text.slice(0, 300)}`);
    return { status: res.status, json: text === '' ? null : JSON.parse(text), headers: res.headers };
  };
  for (let i = 0; ; i++) {
    if (
      (await fetch(`${base}/health`)
        .then((r) => r.status)
        .catch(() => 0)) === 200
    )
      break;
    if (i > 600) throw new Error(`the API did not start: ${api.output()}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  for (const name of ['worker-1', 'worker-2']) children.push(startChild(name, [...probe, 'dist/worker/server.js'], { ...common, SOAK_PROBE_NAME: name }, ROOT));

  const channel = (await call('POST', '/channels', { name: 'soak receiver', config: { kind: 'ntfy', server_url: `${receiverUrl}/`, topic: 'soak' } })).json;
  await call('POST', '/alert-rules', {
    name: 'soak prices',
    scope: { type: 'tag', tag: 'soak' },
    condition: { type: 'price_changed' },
    cooldown_minutes: 0,
    channel_ids: [channel.id],
  });
  await call('POST', '/alert-rules', {
    name: 'soak stock',
    scope: { type: 'tag', tag: 'soak' },
    condition: { type: 'back_in_stock' },
    cooldown_minutes: 0,
    channel_ids: [channel.id],
  });
  for (let n = 0; n < LISTINGS; n++) await call('POST', '/schedules', { name: `listing ${n}`, every_minutes: 1, job: { url: `${shopUrl}/listing/${n}`, tags: ['soak'] } });
  started = Date.now();

  const rows: Array<Record<string, number | string>> = [];
  const sample = async () => {
    const size = Number((await db.query('SELECT pg_database_size(current_database()) AS n')).rows[0].n) / 1e6;
    const jobs = (
      await db.query(`SELECT count(*) FILTER (WHERE status = 'succeeded')::int AS ok, count(*) FILTER (WHERE status = 'failed')::int AS failed, count(*)::int AS n FROM jobs`)
    ).rows[0];
    const alerts = (await db.query(`SELECT count(*)::int AS firings, (SELECT count(*)::int FROM alert_deliveries WHERE status = 'succeeded') AS delivered FROM alert_firings`))
      .rows[0];
    const probes = existsSync(probeFile)
      ? readFileSync(probeFile, 'utf8')
          .trim()
          .split('\n')
          .filter(Boolean)
          .map((line) => JSON.parse(line) as { at: number; name: string; rss_mb: number; delay_p99_ms: number; delay_max_ms: number })
      : [];
    const row: Record<string, number | string> = {
      minute: minuteOf(),
      db_mb: Math.round(size * 10) / 10,
      jobs: jobs.n,
      jobs_failed: jobs.failed,
      firings: alerts.firings,
      delivered: alerts.delivered,
      received,
    };
    for (const name of ['api', 'worker-1', 'worker-2']) {
      const last = probes.filter((p) => p.name === name).at(-1);
      if (last === undefined) continue;
      row[`${name}_rss_mb`] = Math.round(last.rss_mb);
      row[`${name}_delay_p99_ms`] = Math.round(last.delay_p99_ms * 10) / 10;
      row[`${name}_delay_max_ms`] = Math.round(last.delay_max_ms);
    }
    rows.push(row);
    console.log(JSON.stringify(row));
  };
  const end = started + MINUTES * 60_000;
  while (Date.now() < end) {
    await new Promise((r) => setTimeout(r, Math.min(60_000, end - Date.now())));
    // The probes write at their own minute: read just after.
    await new Promise((r) => setTimeout(r, 2_000));
    await sample();
  }

  // Let the last runs and deliveries end, then hold the books.
  for (const schedule of (await call('GET', '/schedules?limit=100')).json) await call('PATCH', `/schedules/${schedule.id}`, { paused: true });
  for (let i = 0; i < 120; i++) {
    const open = (
      await db.query(
        `SELECT (SELECT count(*)::int FROM jobs WHERE status IN ('queued', 'running')) + (SELECT count(*)::int FROM alert_deliveries WHERE status IN ('pending', 'retrying')) AS n`,
      )
    ).rows[0].n;
    if (open === 0) break;
    await new Promise((r) => setTimeout(r, 1_000));
  }
  const twice = (
    await db.query(`SELECT schedule_id, date_trunc('minute', created_at) AS at, count(*)::int AS n FROM jobs WHERE schedule_id IS NOT NULL GROUP BY 1, 2 HAVING count(*) > 1`)
  ).rows;
  const schedules = (await db.query('SELECT sum(runs)::int AS runs, sum(skipped)::int AS skipped FROM schedules')).rows[0];
  const books = (
    await db.query(`SELECT (SELECT count(*)::int FROM jobs WHERE status <> 'succeeded') AS jobs_not_ok,
      (SELECT count(*)::int FROM alert_deliveries WHERE status <> 'succeeded') AS deliveries_not_ok,
      (SELECT count(*)::int FROM alert_deliveries) AS deliveries, (SELECT count(*)::int FROM alert_firings) AS firings,
      (SELECT count(*)::int FROM products) AS products, (SELECT count(*)::int FROM products WHERE gone_at IS NOT NULL) AS gone,
      (SELECT count(*)::int FROM price_observations) AS observations`)
  ).rows[0];
  const summary = {
    minutes: MINUTES,
    listings: LISTINGS,
    products_expected: LISTINGS * PER_PAGE,
    ...books,
    received,
    schedule_runs: schedules.runs,
    schedule_skips: schedules.skipped,
    run_twice: twice,
  };
  console.log(JSON.stringify(summary));
  writeFileSync(join(results, `soak-${stamp}.json`), JSON.stringify({ summary, rows }, null, 2));
  await stopAllChildren();
  await db.drop();
  shop.close();
  receiver.close();
}

main().catch(async (error: unknown) => {
  console.error(error);
  await stopAllChildren();
  process.exit(1);
});
