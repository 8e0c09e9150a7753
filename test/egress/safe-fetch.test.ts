// The safe fetcher against the local fixture site: guard, redirects, limits, charsets, robots.txt, per-host concurrency.
import assert from 'node:assert/strict';
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { test, type TestContext } from 'node:test';
import { BlockedTarget, PageTooLarge, UpstreamFailed, UpstreamTimeout } from '../../src/problems.js';
import { isBlockedAddress } from '../../src/egress/address-guard.js';
import { createHostLimiter } from '../../src/egress/host-limiter.js';
import { createSafeFetcher, type SafeFetcherOptions, type SafeFetchSettings } from '../../src/egress/safe-fetch.js';
import type { FetchTrace, PageFetcher } from '../../src/egress/page-fetcher.js';
import { startFixtureSite, type FixtureSite, type FixtureSiteOptions } from '../fixtures/site.js';
import { until } from '../wait.js';

const SETTINGS: SafeFetchSettings = {
  timeoutMs: 5_000,
  maxBodyBytes: 1024 * 1024,
  maxRedirects: 5,
  userAgent: 'DataAggregatorTestBot/1.0 (+https://example.invalid/bot)',
  obeyRobots: true,
  hostConcurrency: 4,
  allowPrivateNetworks: true,
};

async function setup(
  t: TestContext,
  settings: Partial<SafeFetchSettings> = {},
  fetcherOptions: SafeFetcherOptions = {},
  siteOptions: FixtureSiteOptions = {},
): Promise<{ site: FixtureSite; fetcher: PageFetcher; port: string }> {
  const site = await startFixtureSite(siteOptions);
  const fetcher = createSafeFetcher({ ...SETTINGS, ...settings }, fetcherOptions);
  t.after(async () => {
    await fetcher.close();
    await site.close();
  });
  return { site, fetcher, port: new URL(site.url).port };
}

function totalHits(site: FixtureSite): number {
  return [...site.hits.values()].reduce((sum, n) => sum + n, 0);
}

/** Lets 127.0.0.1 through (the fixture) while every other private address stays blocked, and remembers what it was asked. */
function loopbackOnlyPredicate(): { asked: string[]; isBlocked: (ip: string) => boolean } {
  const asked: string[] = [];
  return {
    asked,
    isBlocked: (ip) => {
      asked.push(ip);
      return ip !== '127.0.0.1' && isBlockedAddress(ip);
    },
  };
}

/** Records every host undici is about to open a connection to. */
function watchConnects(t: TestContext): string[] {
  const hosts: string[] = [];
  const onConnect = (message: unknown): void => {
    hosts.push((message as { connectParams: { hostname: string } }).connectParams.hostname);
  };
  subscribe('undici:client:beforeConnect', onConnect);
  t.after(() => unsubscribe('undici:client:beforeConnect', onConnect));
  return hosts;
}

test('fetches an HTML page with our User-Agent and Accept headers', async (t) => {
  const { site, fetcher } = await setup(t);
  const page = await fetcher.fetchPage(`${site.url}echo-headers`);
  assert.equal(page.status, 200);
  assert.equal(page.url, `${site.url}echo-headers`);
  assert.match(page.contentType, /^text\/html/);
  assert.match(page.html, /data-name="user-agent">DataAggregatorTestBot\/1\.0/);
  assert.match(page.html, /data-name="accept">text\/html/);
});

test('a private target is refused when private networks are not allowed, and the site sees no request', async (t) => {
  const { site, fetcher } = await setup(t, { allowPrivateNetworks: false });
  await assert.rejects(fetcher.fetchPage(`${site.url}echo-headers`), BlockedTarget);
  assert.equal(totalHits(site), 0);
});

test('every spelling of loopback aimed at the fixture port is refused without a single hit', async (t) => {
  const { site, fetcher, port } = await setup(t, { allowPrivateNetworks: false });
  const hosts = [
    '127.0.0.1',
    '127.1',
    '0177.0.0.1',
    '0x7f000001',
    '2130706433',
    '0x7f.1',
    '017700000001',
    '127.000.000.1',
    '127.0.0.1.',
    '[::1]',
    '[::ffff:127.0.0.1]',
    '[::ffff:7f00:1]',
    '[::127.0.0.1]',
    'localhost',
    'LocalHost.',
    'a.localhost',
    '0.0.0.0',
    '0',
    '[::]',
  ];
  for (const host of hosts) {
    await assert.rejects(fetcher.fetchPage(`http://${host}:${port}/echo-headers`), BlockedTarget, host);
  }
  assert.equal(totalHits(site), 0);
});

test('a trusted (operator) URL may be private, everything else still applies', async (t) => {
  const { site, fetcher } = await setup(t, { allowPrivateNetworks: false });
  const page = await fetcher.fetchPage(`${site.url}redirect-chain/2`, { trusted: true });
  assert.match(page.html, /End of the chain/);
  await assert.rejects(fetcher.fetchPage(`${site.url}json`, { trusted: true }), /not HTML/);
});

test('trust does not follow a redirect off the trusted origin', async (t) => {
  const { site, fetcher, port } = await setup(t, { allowPrivateNetworks: false });
  const target = encodeURIComponent(`http://localhost:${port}/echo-headers`);
  await assert.rejects(fetcher.fetchPage(`${site.url}redirect-to?url=${target}`, { trusted: true }), BlockedTarget);
  assert.equal(site.hits.get('/echo-headers'), undefined);
});

test('upstream 404 and 500 become 502 naming the status', async (t) => {
  const { site, fetcher } = await setup(t);
  for (const status of [404, 500]) {
    await assert.rejects(fetcher.fetchPage(`${site.url}status/${status}`), (error: unknown) => {
      assert.ok(error instanceof UpstreamFailed);
      assert.equal(error.status, 502);
      assert.match(error.message, new RegExp(`HTTP ${status}`));
      return true;
    });
  }
});

test('a page slower than timeoutMs fails with 504 at that timeout, cutting the request short', { timeout: 60_000 }, async (t) => {
  const { site, fetcher } = await setup(t);
  // /slow answers after 30 s; the 504 naming 300 ms, with nothing received, is the timer cutting it short.
  await assert.rejects(fetcher.fetchPage(`${site.url}slow`, { timeoutMs: 300 }), (error: unknown) => {
    assert.ok(error instanceof UpstreamTimeout, String(error));
    assert.equal(error.status, 504);
    assert.match(error.message, /300 ms/);
    return true;
  });
  assert.equal(site.bytesSent.get('/slow'), undefined, 'the page had not answered');
});

test('the page timeout also bounds a robots.txt that never answers', { timeout: 60_000 }, async (t) => {
  // robots.txt redirects to /slow, so the robots request hangs and the page deadline must still win.
  const { site, fetcher } = await setup(t, {}, {}, { robots: { status: 302, location: '/slow' } });
  await assert.rejects(fetcher.fetchPage(`${site.url}echo-headers`, { timeoutMs: 1_500 }), /1500 ms/);
  assert.equal(site.hits.get('/slow'), 1, 'the robots.txt redirect was followed');
  assert.equal(site.bytesSent.get('/slow'), undefined, 'robots.txt had not answered');
  assert.equal(site.hits.get('/echo-headers'), undefined);
});

test('a body over maxBodyBytes is cut off with 502 and the download stops early', async (t) => {
  const { site, fetcher } = await setup(t);
  const before = process.memoryUsage().arrayBuffers;
  await assert.rejects(fetcher.fetchPage(`${site.url}huge`), (error: unknown) => {
    assert.ok(error instanceof UpstreamFailed);
    assert.match(error.message, /larger than 1048576 bytes/);
    // The service's own cap refused it, and the error says so: its own type, the setting named.
    assert.ok(error instanceof PageTooLarge);
    assert.equal(error.type, 'urn:data-aggregator:problem:page-too-large');
    assert.equal(error.retryable, false);
    assert.match(error.message, /the cap this service sets on a page \(SCRAPE_MAX_BODY_BYTES\): the site answered/);
    return true;
  });
  // The server notices the hang-up once it has written what the socket would take.
  await until('the server to stop sending', () => !site.inFlight().includes('/huge'));
  const sent = site.bytesSent.get('/huge') ?? 0;
  assert.ok(sent < 20 * 1024 * 1024, `the server should not have managed to send all 20 MiB (sent ${sent})`);
  assert.ok(process.memoryUsage().arrayBuffers - before < 16 * 1024 * 1024, 'memory must not grow with the upstream body');
});

test('gzip bodies are decoded, and the size cap counts decoded bytes', async (t) => {
  const { site, fetcher } = await setup(t);
  assert.match((await fetcher.fetchPage(`${site.url}gzip`)).html, /gzip body/);
  await assert.rejects(fetcher.fetchPage(`${site.url}gzip-bomb`), /larger than 1048576 bytes/);
});

test('layered codings (gzip, then br) are decoded in turn; a coding nobody knows is refused by name', async (t) => {
  const { site, fetcher } = await setup(t);
  assert.match((await fetcher.fetchPage(`${site.url}gzip-then-br`)).html, /two codings/);
  await assert.rejects(fetcher.fetchPage(`${site.url}unknown-coding`), /unsupported content encoding "x-fancy"/);
});

test('an XHTML page naming its encoding only in the XML declaration is decoded by it', async (t) => {
  const { site, fetcher } = await setup(t);
  const trace: FetchTrace = { hops: [], robots: [] };
  const page = await fetcher.fetchPage(`${site.url}latin1-xhtml`, { trace });
  assert.match(page.html, /Café crème/);
  assert.equal(trace.charset, 'windows-1252 (XML declaration)');
});

test('binary, JSON and image responses are refused as not HTML', async (t) => {
  const { site, fetcher } = await setup(t);
  for (const path of ['binary', 'json', 'image.png', 'no-content-type-binary']) {
    await assert.rejects(fetcher.fetchPage(`${site.url}${path}`), (error: unknown) => {
      assert.ok(error instanceof UpstreamFailed, `${path}: ${String(error)}`);
      assert.match(error.message, /not HTML/);
      return true;
    });
  }
});

test('a body without Content-Type is accepted when it starts like markup', async (t) => {
  const { site, fetcher } = await setup(t);
  const page = await fetcher.fetchPage(`${site.url}no-content-type`);
  assert.match(page.html, /sniffed/);
});

test('a redirect loop fails with 502 too many redirects', async (t) => {
  const { site, fetcher } = await setup(t);
  await assert.rejects(fetcher.fetchPage(`${site.url}redirect-loop`), (error: unknown) => {
    assert.ok(error instanceof UpstreamFailed);
    assert.match(error.message, /too many redirects/i);
    return true;
  });
});

test('up to maxRedirects redirects are followed; one more fails', async (t) => {
  const { site, fetcher } = await setup(t);
  const three = await fetcher.fetchPage(`${site.url}redirect-chain/3`);
  assert.equal(three.url, `${site.url}redirect-chain/0`);
  assert.match((await fetcher.fetchPage(`${site.url}redirect-chain/5`)).html, /End of the chain/);
  await assert.rejects(fetcher.fetchPage(`${site.url}redirect-chain/6`), /too many redirects/i);
});

test('a redirect into cloud metadata is refused before any connection to it', async (t) => {
  const predicate = loopbackOnlyPredicate();
  const { site, fetcher } = await setup(t, { allowPrivateNetworks: false }, { isBlocked: predicate.isBlocked });
  const connects = watchConnects(t);
  await assert.rejects(fetcher.fetchPage(`${site.url}redirect-to-metadata`), (error: unknown) => {
    assert.ok(error instanceof BlockedTarget, String(error));
    assert.equal(error.status, 422);
    assert.match(error.message, /redirected/);
    return true;
  });
  assert.equal(site.hits.get('/redirect-to-metadata'), 1, 'the first hop was fetched');
  assert.ok(predicate.asked.includes('169.254.169.254'), 'the redirect target was checked');
  assert.ok(!connects.includes('169.254.169.254'), `no connection may be opened to the metadata address (saw ${connects.join(', ')})`);
});

test('a redirect to file:// is refused with 422', async (t) => {
  const { site, fetcher } = await setup(t);
  await assert.rejects(fetcher.fetchPage(`${site.url}redirect-to-file`), (error: unknown) => {
    assert.ok(error instanceof BlockedTarget);
    assert.match(error.message, /file:/);
    return true;
  });
});

test('a redirect to another loopback spelling is refused for an untrusted URL', async (t) => {
  const predicate = loopbackOnlyPredicate();
  const { site, fetcher, port } = await setup(t, { allowPrivateNetworks: false }, { isBlocked: predicate.isBlocked });
  for (const target of [`http://localhost:${port}/echo-headers`, `http://[::1]:${port}/echo-headers`, `http://10.0.0.1:${port}/`]) {
    await assert.rejects(fetcher.fetchPage(`${site.url}redirect-to?url=${encodeURIComponent(target)}`), BlockedTarget, target);
  }
  assert.equal(site.hits.get('/echo-headers'), undefined);
});

test('DNS answers are checked at connect time, and the checked address is the one dialled', async (t) => {
  const predicate = loopbackOnlyPredicate();
  const answers: Record<string, string[]> = {
    'fixture.test': ['127.0.0.1'],
    'rebind.test': ['127.0.0.2'],
    'mixed.test': ['93.184.216.34', '10.0.0.1'],
  };
  const resolve = async (hostname: string): Promise<string[]> => {
    const found = answers[hostname];
    if (found === undefined) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
    return found;
  };
  const { site, fetcher, port } = await setup(t, { allowPrivateNetworks: false, obeyRobots: false }, { isBlocked: predicate.isBlocked, resolve });
  const page = await fetcher.fetchPage(`http://fixture.test:${port}/echo-headers`);
  assert.match(page.html, new RegExp(`data-name="host">fixture\\.test:${port}<`), 'the Host header keeps the name');
  await assert.rejects(fetcher.fetchPage(`http://rebind.test:${port}/echo-headers`), /127\.0\.0\.2/);
  await assert.rejects(fetcher.fetchPage(`http://mixed.test:${port}/echo-headers`), BlockedTarget);
  await assert.rejects(fetcher.fetchPage(`http://unknown.test:${port}/`), (error: unknown) => {
    assert.ok(error instanceof UpstreamFailed);
    assert.match(error.message, /resolve/);
    return true;
  });
  assert.equal(site.hits.get('/echo-headers'), 1);
});

test('robots.txt disallow is a 422, and is ignored when obeyRobots is false', async (t) => {
  const { site, fetcher } = await setup(t);
  await assert.rejects(fetcher.fetchPage(`${site.url}private/page.html`), (error: unknown) => {
    assert.ok(error instanceof BlockedTarget);
    assert.match(error.message, /robots\.txt/);
    return true;
  });
  assert.equal(site.hits.get('/private/page.html'), undefined);

  const relaxed = createSafeFetcher({ ...SETTINGS, obeyRobots: false });
  t.after(() => relaxed.close());
  assert.match((await relaxed.fetchPage(`${site.url}private/page.html`)).html, /Private/);
});

test('robots.txt rules for our user agent apply', async (t) => {
  const robots = 'User-agent: *\nDisallow:\n\nUser-agent: DataAggregatorTestBot\nDisallow: /echo-headers\n';
  const { site, fetcher } = await setup(t, {}, {}, { robots });
  await assert.rejects(fetcher.fetchPage(`${site.url}echo-headers`), /robots\.txt/);
  assert.match((await fetcher.fetchPage(`${site.url}private/page.html`)).html, /Private/);
});

test('robots.txt is fetched once per origin for many pages, also concurrently', async (t) => {
  const { site, fetcher } = await setup(t, {}, {}, { latencyMs: 20 });
  await Promise.all([1, 2, 3, 4, 5, 6].map((n) => fetcher.fetchPage(`${site.url}redirect-chain/${n % 2}`)));
  await fetcher.fetchPage(`${site.url}echo-headers`);
  assert.equal(site.hits.get('/robots.txt'), 1);
});

test('robots.txt is fetched again once its cache entry expires', async (t) => {
  // A clock like performance.now(): some time after its origin.
  let clock = 5_000;
  const { site, fetcher } = await setup(t, {}, { now: () => clock, robotsTtlMs: 1_000 });
  await fetcher.fetchPage(`${site.url}echo-headers`);
  clock += 900;
  await fetcher.fetchPage(`${site.url}echo-headers`);
  assert.equal(site.hits.get('/robots.txt'), 1);
  clock += 600;
  await fetcher.fetchPage(`${site.url}echo-headers`);
  assert.equal(site.hits.get('/robots.txt'), 2);
});

test('robots.txt answering 404 allows everything (RFC 9309 2.3.1.3)', async (t) => {
  const missing = await setup(t, {}, {}, { robots: { status: 404 } });
  assert.match((await missing.fetcher.fetchPage(`${missing.site.url}private/page.html`)).html, /Private/);
});

test('robots.txt answering 5xx or not at all disallows the whole site for a minute, then is asked again (RFC 9309 2.3.1.4)', async (t) => {
  const warnings: string[] = [];
  let clock = 5_000;
  const broken = await setup(t, {}, { now: () => clock, logger: { warn: (_details, message) => warnings.push(message) } }, { robots: { status: 503 } });
  await assert.rejects(broken.fetcher.fetchPage(`${broken.site.url}echo-headers`), (error: unknown) => {
    assert.ok(error instanceof UpstreamFailed, String(error));
    assert.equal(error.retryable, true, 'a job tries again later');
    assert.match(error.message, /robots\.txt of .* could not be read \(HTTP 503\).*RFC 9309/);
    return true;
  });
  assert.equal(broken.site.hits.get('/echo-headers'), undefined, 'no page was fetched');
  await assert.rejects(broken.fetcher.fetchPage(`${broken.site.url}pages/microdata.html`), UpstreamFailed);
  assert.equal(broken.site.hits.get('/robots.txt'), 1, 'the failure is remembered');
  assert.equal(warnings.length, 1);
  clock += 61_000;
  await assert.rejects(broken.fetcher.fetchPage(`${broken.site.url}echo-headers`), UpstreamFailed);
  assert.equal(broken.site.hits.get('/robots.txt'), 2, 'asked again after a minute');

  // No answer at all (a connection refused) is the same.
  const { fetcher } = await setup(t);
  const closedPort = await new Promise<number>((resolve) => {
    const probe = createServer();
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as AddressInfo;
      probe.close(() => resolve(port));
    });
  });
  await assert.rejects(fetcher.fetchPage(`http://127.0.0.1:${closedPort}/page.html`), /robots\.txt of .* could not be read \(no answer\)/);
});

test('concurrent fetches to one host never exceed hostConcurrency', async (t) => {
  const { site, fetcher } = await setup(t, { hostConcurrency: 2 }, {}, { latencyMs: 60 });
  const pages = await Promise.all(Array.from({ length: 8 }, () => fetcher.fetchPage(`${site.url}echo-headers`)));
  assert.equal(pages.length, 8);
  assert.equal(site.hits.get('/echo-headers'), 8);
  assert.equal(site.maxConcurrent, 2, 'two at a time: bounded, but still parallel');
});

test('the host limiter serves waiters in arrival order, per host, and drops waiters whose signal aborts', async () => {
  const limiter = createHostLimiter(1);
  const order: string[] = [];
  const recordAs = (name: string) => (release: () => void) => {
    order.push(name);
    return release;
  };
  const first = await limiter.acquire('shop.example');
  const second = limiter.acquire('shop.example').then(recordAs('second'));
  const controller = new AbortController();
  const impatient = limiter.acquire('shop.example', controller.signal);
  const third = limiter.acquire('shop.example').then(recordAs('third'));
  (await limiter.acquire('other.example'))();
  controller.abort(new Error('gave up'));
  await assert.rejects(impatient, /gave up/);
  assert.equal(limiter.active('shop.example'), 1);
  first();
  first(); // a second release must not free a slot twice
  (await second)();
  (await third)();
  assert.deepEqual(order, ['second', 'third']);
  assert.equal(limiter.active('shop.example'), 0);
});

test('the books catalogue can be walked page by page through its relative "next" links', async (t) => {
  const { site, fetcher } = await setup(t, {}, {}, { catalogue: { pages: 3, perPage: 5 } });
  const visited: string[] = [];
  let url: string | undefined = `${site.url}books/`;
  while (url !== undefined) {
    const page = await fetcher.fetchPage(url);
    visited.push(new URL(page.url).pathname);
    assert.equal(page.html.match(/<article class="product_pod">/g)?.length, 5, page.url);
    const next = page.html.match(/<li class="next"><a href="([^"]+)"/)?.[1];
    url = next === undefined ? undefined : new URL(next, page.url).href;
  }
  assert.deepEqual(visited, ['/books/', '/books/catalogue/page-2.html', '/books/catalogue/page-3.html']);
  await assert.rejects(fetcher.fetchPage(`${site.url}books/catalogue/page-4.html`), /HTTP 404/);
  const detail = await fetcher.fetchPage(`${site.url}books/catalogue/whatever_1/index.html`);
  assert.match(detail.html, /class="price_color"/);
});

test('ISO-8859-1 pages are decoded by the header charset or by <meta charset>', async (t) => {
  const { site, fetcher } = await setup(t);
  for (const path of ['latin1', 'latin1-meta']) {
    const page = await fetcher.fetchPage(`${site.url}${path}`);
    assert.match(page.html, /Café crème/, path);
    assert.match(page.html, /café à emporter/, path);
  }
});

test('a closed port is a 502 naming the refusal', async (t) => {
  const closed = createServer();
  await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
  const { port } = closed.address() as AddressInfo;
  await new Promise<void>((resolve) => closed.close(() => resolve()));
  const fetcher = createSafeFetcher({ ...SETTINGS, obeyRobots: false });
  t.after(() => fetcher.close());
  await assert.rejects(fetcher.fetchPage(`http://127.0.0.1:${port}/`), (error: unknown) => {
    assert.ok(error instanceof UpstreamFailed, String(error));
    assert.match(error.message, /refused/);
    return true;
  });
});

test('URL credentials are sent as Basic auth to their own origin and never echoed back', async (t) => {
  const { site, fetcher } = await setup(t);
  const withCredentials = site.url.replace('http://', 'http://scraper:s3cret@');
  const page = await fetcher.fetchPage(`${withCredentials}echo-headers`);
  assert.match(page.html, new RegExp(`data-name="authorization">Basic ${Buffer.from('scraper:s3cret').toString('base64')}<`));
  assert.equal(page.url, `${site.url}echo-headers`);
  await assert.rejects(fetcher.fetchPage(`${withCredentials}status/404`), (error: unknown) => {
    assert.ok(error instanceof UpstreamFailed);
    assert.ok(!error.message.includes('s3cret'));
    return true;
  });
});

test("a caller's abort signal stops the fetch with the caller's reason", async (t) => {
  const { site, fetcher } = await setup(t);
  const controller = new AbortController();
  const reason = new Error('client went away');
  setTimeout(() => controller.abort(reason), 100);
  await assert.rejects(fetcher.fetchPage(`${site.url}slow`, { signal: controller.signal }), (error: unknown) => error === reason);
});
