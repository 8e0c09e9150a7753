// The ways out of a page besides its HTTP requests (WebRTC, WebTransport, service workers, prefetching) reach nothing the guard refuses.
import assert from 'node:assert/strict';
import dgram from 'node:dgram';
import net from 'node:net';
import { after, before, describe, test } from 'node:test';
import { createBrowserRenderer, type BrowserRenderer } from '../../../src/scraping/browser/index.js';
import { executablePath, html, noChromium, RENDER_MS, send, startSite, USER_AGENT, type Site } from './browser-site.js';
import { until } from '../../wait.js';

/** Each probe page reports into #out and writes #done when it has tried everything. */
function probe(script: string, head = ''): string {
  return html(
    `<div id="out"></div><script>
      const finish = (how) => {
        if (document.getElementById('done') === null) document.getElementById('out').insertAdjacentHTML('beforeend', '<p id="done">' + how + '</p>');
      };
      ${script}
    </script>`,
    head,
  );
}

describe('browser egress beyond HTTP, with private networks not allowed', { skip: noChromium }, () => {
  let site: Site;
  let renderer: BrowserRenderer;
  /** A UDP listener on loopback standing in for an internal service (a STUN/TURN or QUIC port). */
  let udp: dgram.Socket;
  let udpPort: number;
  const datagrams: string[] = [];
  const guardCalls: string[] = [];
  const forbiddenPort = (): string => new URL(site.forbiddenOrigin).port;

  before(async () => {
    udp = dgram.createSocket('udp4');
    udp.on('message', (message, from) => datagrams.push(`${message.length} bytes from ${from.address}:${from.port}`));
    await new Promise<void>((resolve) => udp.bind(0, '127.0.0.1', resolve));
    udpPort = udp.address().port;
    site = await startSite({
      '/webrtc': (_req, res) =>
        send(
          res,
          probe(`
            const connection = new RTCPeerConnection({ iceServers: [
              { urls: 'stun:127.0.0.1:${udpPort}' },
              { urls: 'turn:127.0.0.1:${udpPort}?transport=udp', username: 'u', credential: 'p' },
              { urls: 'turn:127.0.0.1:${forbiddenPort()}?transport=tcp', username: 'u', credential: 'p' },
            ] });
            const candidates = [];
            connection.onicecandidate = (event) => {
              if (event.candidate !== null) candidates.push(event.candidate.type);
              else finish('gathered:' + candidates.join(','));
            };
            connection.createDataChannel('probe');
            connection.createOffer().then((offer) => connection.setLocalDescription(offer));
            setTimeout(() => finish('still gathering:' + candidates.join(',')), 2500);
          `),
        ),
      '/webtransport': (_req, res) =>
        send(
          res,
          probe(`
            try {
              const transport = new WebTransport('https://127.0.0.1:${udpPort}/probe');
              transport.ready.then(() => finish('connected'), (error) => finish('refused: ' + error.name));
            } catch (error) {
              finish('threw: ' + error.name);
            }
            setTimeout(() => finish('no answer'), 2500);
          `),
        ),
      '/service-worker': (_req, res) =>
        send(
          res,
          probe(`
            // Also from a fresh realm, in case the page's own register() was replaced.
            const frame = document.createElement('iframe');
            document.body.append(frame);
            const register = frame.contentWindow.ServiceWorkerContainer.prototype.register;
            Promise.all([navigator.serviceWorker.register('/sw.js'), register.call(navigator.serviceWorker, '/sw.js?realm=frame')])
              .then(() => navigator.serviceWorker.ready)
              .then(() => finish('active'), (error) => finish('refused: ' + error));
            setTimeout(() => finish('not active'), 1500);
          `),
        ),
      '/sw.js': (_req, res) => send(res, 'self.addEventListener("fetch", () => {});', 'text/javascript'),
      '/prefetch': (_req, res) =>
        send(
          res,
          probe(
            `setTimeout(() => finish('waited'), 1500);`,
            `<link rel="dns-prefetch" href="${site.forbiddenOrigin}">
             <link rel="preconnect" href="${site.forbiddenOrigin}">
             <link rel="prefetch" href="${site.forbiddenOrigin}/prefetched">
             <link rel="preload" as="fetch" crossorigin href="${site.forbiddenOrigin}/preloaded">
             <script type="speculationrules">{"prefetch": [{"source": "list", "urls": ["${site.forbiddenOrigin}/speculated"]}],
               "prerender": [{"source": "list", "urls": ["${site.forbiddenOrigin}/prerendered"]}]}</script>`,
          ),
        ),
    });
    // Stands in for the real guard with SCRAPE_ALLOW_PRIVATE_NETWORKS off: only the site (the "public" target) passes.
    const guardRequest = async (url: string): Promise<boolean> => {
      guardCalls.push(url);
      return url.startsWith(`${site.origin}/`);
    };
    renderer = createBrowserRenderer({ executablePath, guardRequest, userAgent: USER_AGENT });
  });

  after(async () => {
    await renderer.close();
    await site.close();
    udp.close();
  });

  /** The client ports of the barrier's own connections to the forbidden server. */
  const barrierPorts = new Set<number>();
  /**
   * A barrier after the page said it was done trying: our own datagram to the listener and our own
   * connection to the forbidden server, each waited for. Anything the browser sent before the render
   * returned reached loopback before them, so once they arrived it has arrived too.
   */
  const settle = async (): Promise<void> => {
    const sender = dgram.createSocket('udp4');
    await new Promise<void>((resolve) => sender.bind(0, '127.0.0.1', resolve));
    const mark = `1 bytes from 127.0.0.1:${sender.address().port}`;
    sender.send(Buffer.from('!'), udpPort, '127.0.0.1');
    await until('the barrier datagram', () => datagrams.includes(mark));
    datagrams.splice(datagrams.indexOf(mark), 1);
    sender.close();
    const socket = net.connect(Number(forbiddenPort()), '127.0.0.1');
    socket.on('error', () => undefined);
    await new Promise((resolve) => socket.once('connect', resolve));
    barrierPorts.add(socket.localPort!);
    await until('the barrier connection', () => site.forbiddenPeers().includes(socket.localPort!));
    socket.destroy();
  };
  const strayConnections = () => site.forbiddenPeers().filter((port) => !barrierPorts.has(port)).length;

  test('WebRTC: STUN and TURN over UDP send nothing to a loopback UDP listener, and TURN over TCP never connects', async () => {
    const page = await renderer.render(`${site.origin}/webrtc`, { timeoutMs: RENDER_MS, waitFor: '#done' });
    await settle();
    assert.deepEqual(datagrams, [], 'the UDP listener received nothing');
    assert.equal(strayConnections(), 0, 'the TURN server on TCP was never connected to');
    // Without the policy the page gathers host (mDNS) candidates and asks the STUN server for a reflexive one.
    assert.doesNotMatch(page.html, /host|srflx|relay/);
  });

  test('WebTransport (HTTP/3 over UDP) sends nothing and never connects', async () => {
    const page = await renderer.render(`${site.origin}/webtransport`, { timeoutMs: RENDER_MS, waitFor: '#done' });
    await settle();
    assert.deepEqual(datagrams, []);
    assert.doesNotMatch(page.html, /id="done">connected/);
  });

  test('service workers are never registered, not even from a fresh realm', async () => {
    const page = await renderer.render(`${site.origin}/service-worker`, { timeoutMs: RENDER_MS, waitFor: '#done' });
    assert.doesNotMatch(page.html, /id="done">active/);
    assert.equal(site.hits.get('/sw.js'), undefined, 'no worker script was fetched');
  });

  test('prefetch, preconnect, DNS prefetch, preload and speculation rules into a refused address never connect', async () => {
    const page = await renderer.render(`${site.origin}/prefetch`, { timeoutMs: RENDER_MS, waitFor: '#done' });
    assert.match(page.html, /id="done">waited/);
    await settle();
    assert.equal(strayConnections(), 0);
    assert.ok(
      guardCalls.some((url) => url.includes(new URL(site.forbiddenOrigin).host)),
      'the prefetches were put to the guard (and refused), not merely skipped',
    );
  });
});
