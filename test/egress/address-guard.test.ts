// The SSRF table: every spelling of a private, loopback or non-HTTP target is refused before any network use.
import assert from 'node:assert/strict';
import type { LookupAddress, LookupOptions } from 'node:dns';
import net from 'node:net';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { BlockedTarget, UpstreamFailed } from '../../src/problems.js';
import { assertAllowedUrl, assertPublicUrl, createGuardedLookup, isBlockedAddress } from '../../src/egress/address-guard.js';

/** [URL, why it must be refused]. None of these is ever contacted: the check is pure. */
const REFUSED: Array<[string, string]> = [
  ['http://127.0.0.1/', 'loopback'],
  ['http://127.1/', 'short loopback'],
  ['http://0177.0.0.1/', 'octal loopback'],
  ['http://0x7f000001/', 'hex integer loopback'],
  ['http://2130706433/', 'decimal integer loopback'],
  ['http://0x7f.1/', 'hex short loopback'],
  ['http://0x7f.0x0.0x0.0x1/', 'hex dotted loopback'],
  ['http://017700000001/', 'octal integer loopback'],
  ['http://127.000.000.1/', 'zero-padded loopback'],
  ['http://127.0.0.1./', 'loopback with root dot'],
  ['http://127%2E0%2E0%2E1/', 'percent-encoded dots'],
  ['http://①②⑦.0.0.1/', 'circled digits (IDNA-mapped)'],
  ['http://127.53.1.9/', 'anywhere in 127/8'],
  ['http://[::1]/', 'IPv6 loopback'],
  ['http://[0:0:0:0:0:0:0:1]/', 'long IPv6 loopback'],
  ['http://[::ffff:127.0.0.1]/', 'IPv4-mapped loopback'],
  ['http://[::ffff:7f00:1]/', 'IPv4-mapped loopback in hex'],
  ['http://[::127.0.0.1]/', 'IPv4-compatible loopback'],
  ['http://[::ffff:0:7f00:1]/', 'RFC 6145 translated loopback'],
  ['http://[64:ff9b::7f00:1]/', 'NAT64 loopback'],
  ['http://[2002:7f00:1::]/', '6to4 loopback'],
  ['http://[2001::1]/', 'Teredo'],
  ['http://0.0.0.0/', 'unspecified'],
  ['http://0/', 'unspecified, short'],
  ['http://[::]/', 'IPv6 unspecified'],
  ['http://10.0.0.1/', 'RFC 1918 10/8'],
  ['http://172.16.5.4/', 'RFC 1918 172.16/12'],
  ['http://172.31.255.254/', 'RFC 1918 172.16/12 upper end'],
  ['http://192.168.1.1/', 'RFC 1918 192.168/16'],
  ['http://169.254.169.254/latest/meta-data/', 'cloud metadata (link-local)'],
  ['http://[::ffff:169.254.169.254]/', 'IPv4-mapped metadata'],
  ['http://[::ffff:a9fe:a9fe]/', 'IPv4-mapped metadata in hex'],
  ['http://100.64.0.1/', 'carrier-grade NAT'],
  ['http://198.18.0.1/', 'benchmarking'],
  ['http://192.0.2.1/', 'TEST-NET-1'],
  ['http://240.0.0.1/', 'reserved class E'],
  ['http://224.0.0.1/', 'multicast'],
  ['http://255.255.255.255/', 'broadcast'],
  ['http://[fe80::1]/', 'IPv6 link-local'],
  ['http://[fe80::1%25eth0]/', 'IPv6 link-local with zone (not a valid URL)'],
  ['http://[fec0::1]/', 'IPv6 site-local'],
  ['http://[fc00::1]/', 'IPv6 unique local'],
  ['http://[fd12::1]/', 'IPv6 unique local'],
  ['http://[ff02::1]/', 'IPv6 multicast'],
  ['http://[2001:db8::1]/', 'IPv6 documentation'],
  ['http://localhost/', 'localhost'],
  ['http://LOCALHOST:8080/', 'localhost, upper case, port'],
  ['http://localhost./', 'localhost with root dot'],
  ['http://foo.localhost/', 'subdomain of localhost'],
  ['https://127.0.0.1:8443/', 'https to loopback'],
  ['http://user:secret@127.0.0.1/', 'credentials to loopback'],
  ['ftp://example.com/file', 'ftp scheme'],
  ['file:///etc/passwd', 'file scheme'],
  ['gopher://example.com:70/_stats', 'gopher scheme'],
  ['javascript:alert(1)', 'javascript scheme'],
  ['data:text/html,<h1>hi</h1>', 'data scheme'],
  ['ws://example.com/socket', 'websocket scheme'],
  ['not a url', 'not a URL at all'],
  ['//example.com/', 'scheme-relative'],
];

describe('assertAllowedUrl refuses every private or non-HTTP spelling', () => {
  for (const [url, why] of REFUSED) {
    test(`${url} (${why}) is refused with BlockedTarget`, () => {
      assert.throws(
        () => assertAllowedUrl(url, false),
        (error: unknown) => {
          assert.ok(error instanceof BlockedTarget, `expected BlockedTarget, got ${String(error)}`);
          assert.equal(error.status, 422);
          assert.ok(!error.message.includes('secret'), 'credentials must never appear in messages');
          return true;
        },
      );
    });
  }
});

describe('assertAllowedUrl allows public targets (pure check, nothing is fetched)', () => {
  for (const url of [
    'http://93.184.216.34/',
    'https://[2606:4700::1]/',
    'http://8.8.8.8:8080/path?q=1',
    'https://[2001:4860:4860::8888]/',
    'https://example.com/products',
    'http://user:pass@example.com/',
    'http://localhost.example.com/',
  ]) {
    test(`${url} passes`, () => {
      assert.equal(assertAllowedUrl(url, false).href, new URL(url).href);
    });
  }

  test('allowPrivate lets loopback through but never other schemes', () => {
    assert.equal(assertAllowedUrl('http://127.0.0.1:8000/', true).hostname, '127.0.0.1');
    assert.equal(assertAllowedUrl('http://localhost/', true).hostname, 'localhost');
    assert.throws(() => assertAllowedUrl('file:///etc/passwd', true), BlockedTarget);
    assert.throws(() => assertAllowedUrl('javascript:alert(1)', true), BlockedTarget);
  });

  test('an injected predicate decides for IP literals', () => {
    const onlyMetadataBlocked = (ip: string): boolean => ip === '169.254.169.254';
    assert.equal(assertAllowedUrl('http://127.0.0.1/', false, onlyMetadataBlocked).hostname, '127.0.0.1');
    assert.throws(() => assertAllowedUrl('http://169.254.169.254/', false, onlyMetadataBlocked), BlockedTarget);
  });
});

describe('isBlockedAddress', () => {
  const blocked = [
    '127.0.0.1',
    '::1',
    '::',
    '0.0.0.0',
    '10.1.2.3',
    '172.16.0.1',
    '192.168.0.1',
    '169.254.169.254',
    '100.100.100.100',
    '224.0.0.251',
    '255.255.255.255',
    '::ffff:127.0.0.1',
    '::ffff:10.0.0.1',
    '::7f00:1',
    'fe80::1',
    'fe80::1%eth0',
    'fc00::1',
    'fd00::1',
    'ff02::1',
    '64:ff9b::a00:1',
    '2002:a00:1::',
    '2001::1',
    '2001:db8::1',
    '198.19.0.1',
    '192.0.0.8',
  ];
  for (const ip of blocked) {
    test(`${ip} is blocked`, () => assert.equal(isBlockedAddress(ip), true));
  }

  for (const ip of ['93.184.216.34', '8.8.8.8', '1.1.1.1', '2606:4700::1', '2001:4860:4860::8888', '::ffff:8.8.8.8', '[2606:4700::1]']) {
    test(`${ip} is public`, () => assert.equal(isBlockedAddress(ip), false));
  }

  for (const garbage of ['', 'localhost', 'example.com', '127.1', '2130706433', '1.2.3.4.5', '::g', '300.1.1.1']) {
    test(`"${garbage}" (not a canonical address) is blocked`, () => assert.equal(isBlockedAddress(garbage), true));
  }

  test('an IPv4 address and its IPv4-mapped IPv6 form always get the same verdict', () => {
    fc.assert(fc.property(fc.ipV4(), (ip) => isBlockedAddress(ip) === isBlockedAddress(`::ffff:${ip}`)));
  });

  test('every integer spelling of an IPv4 address gets the verdict of its dotted form', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 0xffffffff }), (n) => {
        const dotted = [n >>> 24, (n >>> 16) & 255, (n >>> 8) & 255, n & 255].join('.');
        const viaDecimal = () => assertAllowedUrl(`http://${n}/`, false);
        const viaHex = () => assertAllowedUrl(`http://0x${n.toString(16)}/`, false);
        if (isBlockedAddress(dotted)) {
          assert.throws(viaDecimal, BlockedTarget);
          assert.throws(viaHex, BlockedTarget);
        } else {
          assert.equal(viaDecimal().hostname, dotted);
          assert.equal(viaHex().hostname, dotted);
        }
      }),
    );
  });

  test('all of 10/8, 127/8, 169.254/16, 172.16/12 and 192.168/16 is blocked', () => {
    const privateIp = fc.oneof(
      fc.tuple(fc.constant(10), fc.nat(255), fc.nat(255), fc.nat(255)),
      fc.tuple(fc.constant(127), fc.nat(255), fc.nat(255), fc.nat(255)),
      fc.tuple(fc.constant(169), fc.constant(254), fc.nat(255), fc.nat(255)),
      fc.tuple(fc.constant(172), fc.integer({ min: 16, max: 31 }), fc.nat(255), fc.nat(255)),
      fc.tuple(fc.constant(192), fc.constant(168), fc.nat(255), fc.nat(255)),
    );
    fc.assert(fc.property(privateIp, (octets) => isBlockedAddress(octets.join('.'))));
  });
});

describe('assertPublicUrl checks every DNS answer', () => {
  const fakeDns = (answers: Record<string, string[]>) => {
    const asked: string[] = [];
    const resolve = async (hostname: string): Promise<string[]> => {
      asked.push(hostname);
      const found = answers[hostname];
      if (found === undefined) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
      return found;
    };
    return { asked, resolve };
  };

  test('a name resolving to public addresses passes', async () => {
    const dns = fakeDns({ 'shop.example': ['93.184.216.34', '2606:4700::1'] });
    const url = await assertPublicUrl('https://shop.example/list', false, { resolve: dns.resolve });
    assert.equal(url.hostname, 'shop.example');
    assert.deepEqual(dns.asked, ['shop.example']);
  });

  test('a name resolving to loopback is refused', async () => {
    const dns = fakeDns({ 'rebind.example': ['127.0.0.1'] });
    await assert.rejects(assertPublicUrl('http://rebind.example/', false, { resolve: dns.resolve }), BlockedTarget);
  });

  test('a name with one private answer among public ones is refused', async () => {
    const dns = fakeDns({ 'mixed.example': ['93.184.216.34', '10.0.0.5'] });
    await assert.rejects(assertPublicUrl('http://mixed.example/', false, { resolve: dns.resolve }), /10\.0\.0\.5/);
  });

  test('a name resolving to IPv4-mapped metadata is refused', async () => {
    const dns = fakeDns({ 'meta.example': ['::ffff:169.254.169.254'] });
    await assert.rejects(assertPublicUrl('http://meta.example/', false, { resolve: dns.resolve }), BlockedTarget);
  });

  test('a name that does not resolve is an upstream failure, not a block', async () => {
    const dns = fakeDns({});
    await assert.rejects(assertPublicUrl('http://nowhere.example/', false, { resolve: dns.resolve }), UpstreamFailed);
  });

  test('literals and localhost are refused without asking DNS', async () => {
    const dns = fakeDns({});
    await assert.rejects(assertPublicUrl('http://10.0.0.1/', false, { resolve: dns.resolve }), BlockedTarget);
    await assert.rejects(assertPublicUrl('http://localhost/', false, { resolve: dns.resolve }), BlockedTarget);
    await assert.rejects(assertPublicUrl('file:///etc/passwd', false, { resolve: dns.resolve }), BlockedTarget);
    assert.deepEqual(dns.asked, []);
  });

  test('allowPrivate skips resolution entirely', async () => {
    const dns = fakeDns({});
    const url = await assertPublicUrl('http://intranet.example/', true, { resolve: dns.resolve });
    assert.equal(url.hostname, 'intranet.example');
    assert.deepEqual(dns.asked, []);
  });
});

describe('createGuardedLookup dials only the addresses it checked', () => {
  const resolverFor = (answers: Record<string, string[]>) => {
    const asked: string[] = [];
    const resolve = async (hostname: string): Promise<string[]> => {
      asked.push(hostname);
      const found = answers[hostname];
      if (found === undefined) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
      return found;
    };
    return { asked, resolve };
  };

  /** Calls a callback-style lookup the way net.connect does and settles with what it answered. */
  const callLookup = (lookup: net.LookupFunction, hostname: string, options: LookupOptions) =>
    new Promise<{ address: string | LookupAddress[]; family: number | undefined }>((resolve, reject) => {
      lookup(hostname, options, (error, address, family) => (error === null ? resolve({ address, family }) : reject(error)));
    });

  test('a name resolving to a private address is refused with BlockedTarget (no real DNS)', async () => {
    const dns = resolverFor({ 'rebind.example': ['10.0.0.5'] });
    const lookup = createGuardedLookup({ allowPrivate: false, resolve: dns.resolve });
    await assert.rejects(callLookup(lookup, 'rebind.example', {}), (error: unknown) => {
      assert.ok(error instanceof BlockedTarget, `expected BlockedTarget, got ${String(error)}`);
      assert.match(error.message, /10\.0\.0\.5/);
      return true;
    });
    await assert.rejects(callLookup(lookup, 'rebind.example', { all: true }), BlockedTarget);
    assert.deepEqual(dns.asked, ['rebind.example', 'rebind.example']);
  });

  test('a name resolving to a public address returns exactly that address, singly or with all: true', async () => {
    const dns = resolverFor({ 'shop.example': ['93.184.216.34', '2606:4700::1'] });
    const lookup = createGuardedLookup({ allowPrivate: false, resolve: dns.resolve });
    assert.deepEqual(await callLookup(lookup, 'shop.example', {}), { address: '93.184.216.34', family: 4 });
    assert.deepEqual(await callLookup(lookup, 'shop.example', { all: true }), {
      address: [
        { address: '93.184.216.34', family: 4 },
        { address: '2606:4700::1', family: 6 },
      ],
      family: undefined,
    });
    assert.deepEqual(await callLookup(lookup, 'shop.example', { family: 6 }), { address: '2606:4700::1', family: 6 });
  });

  test('one private answer among public ones refuses the name', async () => {
    const dns = resolverFor({ 'mixed.example': ['93.184.216.34', '::ffff:169.254.169.254'] });
    const lookup = createGuardedLookup({ allowPrivate: false, resolve: dns.resolve });
    await assert.rejects(callLookup(lookup, 'mixed.example', { all: true }), BlockedTarget);
  });

  test('a resolver failure is passed through as the error (UpstreamFailed keeping the resolver error as cause)', async () => {
    const lookup = createGuardedLookup({ allowPrivate: false, resolve: resolverFor({}).resolve });
    await assert.rejects(callLookup(lookup, 'nowhere.example', {}), (error: unknown) => {
      assert.ok(error instanceof UpstreamFailed, `expected UpstreamFailed, got ${String(error)}`);
      assert.equal((error.cause as NodeJS.ErrnoException).code, 'ENOTFOUND');
      return true;
    });
  });

  test('allowPrivate returns private answers, and an injected predicate decides what is blocked', async () => {
    const dns = resolverFor({ 'intranet.example': ['10.0.0.5'], 'meta.example': ['169.254.169.254'] });
    const open = createGuardedLookup({ allowPrivate: true, resolve: dns.resolve });
    assert.deepEqual(await callLookup(open, 'intranet.example', {}), { address: '10.0.0.5', family: 4 });
    const onlyMetadataBlocked = createGuardedLookup({ allowPrivate: false, resolve: dns.resolve, isBlocked: (ip) => ip === '169.254.169.254' });
    assert.deepEqual(await callLookup(onlyMetadataBlocked, 'intranet.example', {}), { address: '10.0.0.5', family: 4 });
    await assert.rejects(callLookup(onlyMetadataBlocked, 'meta.example', {}), BlockedTarget);
  });

  for (const autoSelectFamily of [true, false]) {
    test(`net.connect (autoSelectFamily ${autoSelectFamily}) dials the checked address, and a blocked one is never dialled`, async () => {
      let connections = 0;
      const server = net.createServer((socket) => {
        connections += 1;
        socket.end('hello');
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      const { port } = server.address() as net.AddressInfo;
      const dns = resolverFor({ 'shop.example': ['127.0.0.1'] });
      const connect = (lookup: net.LookupFunction) =>
        new Promise<void>((resolve, reject) => {
          const socket = net.connect({ host: 'shop.example', port, lookup, autoSelectFamily });
          // Resolved on the server's greeting, so the server has surely counted the connection.
          socket.once('data', () => {
            socket.destroy();
            resolve();
          });
          socket.once('error', reject);
        });
      try {
        // The name exists only in the injected resolver, so connecting at all proves the lookup was used.
        await connect(createGuardedLookup({ allowPrivate: false, resolve: dns.resolve, isBlocked: () => false }));
        assert.equal(connections, 1);
        await assert.rejects(connect(createGuardedLookup({ allowPrivate: false, resolve: dns.resolve })), BlockedTarget);
        assert.equal(connections, 1);
      } finally {
        await new Promise((resolve) => server.close(resolve));
      }
    });
  }
});
