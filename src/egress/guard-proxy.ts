// A forward proxy, local to one browser render, that dials only what the guard allows, at the addresses it checked.
import http from 'node:http';
import net from 'node:net';
import type { Duplex } from 'node:stream';
import { BlockedTarget } from '../problems.js';

export interface GuardProxyOptions {
  /** Whether a connection may be made: asked with the absolute URL for plain HTTP, `https://host:port/` for tunnels. */
  allow(url: string): Promise<boolean>;
  /**
   * Resolves and vets the host as it is dialled (see `createGuardedLookup`), so the address connected
   * to is the one checked, not a second DNS answer; a BlockedTarget it reports counts as refused.
   * Undefined dials with the system resolver.
   */
  lookup?: net.LookupFunction;
  /**
   * The origin of a trusted render: its `host:port` is dialled with the system resolver, private or not.
   * Read for each connection, so a proxy started ahead of its render (a spare) learns it when bound.
   */
  trustedOrigin?: () => string | undefined;
}

export interface GuardProxy {
  readonly url: string;
  /** True when the proxy refused this URL (plain HTTP) or its host:port (tunnelled). */
  refused(url: string): boolean;
  /** Why connecting to this URL (or its host:port) failed, e.g. "connection refused". */
  failure(url: string): string | undefined;
  close(): Promise<void>;
}

// Hop-by-hop headers describe one connection, not the message, and must not be forwarded.
const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'proxy-connection', 'proxy-authorization', 'proxy-authenticate', 'te', 'trailer', 'transfer-encoding', 'upgrade']);

export async function startGuardProxy(options: GuardProxyOptions): Promise<GuardProxy> {
  const { allow } = options;
  const trustedAuthority = (): string | undefined => {
    const origin = options.trustedOrigin?.();
    return origin === undefined ? undefined : authorityOf(origin);
  };
  // The operator vouches for their own site, which may well live on a private address.
  const lookupFor = (authority: string | undefined): net.LookupFunction | undefined => (authority !== undefined && authority === trustedAuthority() ? undefined : options.lookup);
  const refusedUrls = new Set<string>();
  const refusedAuthorities = new Set<string>();
  const failures = new Map<string, string>();
  const sockets = new Set<Duplex>();
  // The guard may answer after the render ended; nothing should be dialled for a finished render.
  let closed = false;
  // Sockets are pooled per host:port, and every request to one host:port uses the same lookup.
  const agent = new http.Agent({ keepAlive: true });
  const track = (socket: Duplex): void => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  };

  const server = http.createServer((req, res) => {
    const target = req.url ?? '';
    // Chromium sends absolute http:// URLs to an HTTP proxy; https and WebSockets come as CONNECT.
    if (!/^http:\/\//i.test(target)) {
      res.writeHead(400, { 'content-type': 'text/plain' }).end('absolute http URL expected');
      return;
    }
    void allow(target).then((allowed) => {
      if (closed) {
        res.destroy();
        return;
      }
      if (!allowed) {
        refusedUrls.add(target);
        res.writeHead(403, { 'content-type': 'text/plain' }).end('blocked by the scraper');
        return;
      }
      const upstream = http.request(target, { method: req.method, headers: withoutHopByHop(req.rawHeaders), agent, lookup: lookupFor(authorityOf(target)) }, (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.statusMessage, withoutHopByHop(answer.rawHeaders));
        answer.pipe(res);
        answer.on('error', () => res.destroy());
      });
      upstream.on('error', (error) => {
        if (res.headersSent) {
          res.destroy();
        } else if (error instanceof BlockedTarget) {
          refusedUrls.add(target);
          res.writeHead(403, { 'content-type': 'text/plain' }).end('blocked by the scraper');
        } else {
          failures.set(target, describeSocketError(error));
          res.writeHead(502, { 'content-type': 'text/plain' }).end('upstream unreachable');
        }
      });
      res.on('close', () => {
        if (!res.writableFinished) upstream.destroy();
      });
      req.pipe(upstream);
    });
  });

  server.on('connection', track);
  server.on('connect', (req: http.IncomingMessage, client: Duplex, head: Buffer) => {
    track(client);
    client.on('error', () => undefined);
    const authority = parseAuthority(req.url ?? '');
    if (authority === undefined) {
      client.end('HTTP/1.1 400 Bad Request\r\n\r\n');
      return;
    }
    void allow(`https://${authority.key}/`).then((allowed) => {
      if (closed) {
        client.destroy();
        return;
      }
      if (!allowed) {
        refusedAuthorities.add(authority.key);
        client.end('HTTP/1.1 403 Forbidden\r\n\r\n');
        return;
      }
      const upstream = net.connect({ host: authority.host, port: authority.port, lookup: lookupFor(authority.key) });
      track(upstream);
      let established = false;
      upstream.once('connect', () => {
        established = true;
        client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
        if (head.length > 0) upstream.write(head);
        upstream.pipe(client);
        client.pipe(upstream);
      });
      upstream.on('error', (error) => {
        if (established) {
          client.destroy();
        } else if (error instanceof BlockedTarget) {
          refusedAuthorities.add(authority.key);
          client.end('HTTP/1.1 403 Forbidden\r\n\r\n');
        } else {
          failures.set(authority.key, describeSocketError(error));
          client.end('HTTP/1.1 502 Bad Gateway\r\n\r\n');
        }
      });
      client.on('close', () => upstream.destroy());
    });
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const port = (server.address() as net.AddressInfo).port;

  return {
    url: `http://127.0.0.1:${port}`,
    refused(url) {
      if (refusedUrls.has(url)) return true;
      const key = authorityOf(url);
      return key !== undefined && refusedAuthorities.has(key);
    },
    failure(url) {
      const key = authorityOf(url);
      return failures.get(url) ?? (key === undefined ? undefined : failures.get(key));
    },
    async close() {
      closed = true;
      // Held-open upstream responses would keep server.close() waiting forever.
      for (const socket of sockets) socket.destroy();
      agent.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

function withoutHopByHop(raw: string[]): string[] {
  const named = new Set(HOP_BY_HOP);
  for (let i = 0; i + 1 < raw.length; i += 2) {
    if (raw[i]?.toLowerCase() === 'connection') {
      for (const token of (raw[i + 1] ?? '').split(',')) named.add(token.trim().toLowerCase());
    }
  }
  const kept: string[] = [];
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const name = raw[i] as string;
    if (!named.has(name.toLowerCase())) kept.push(name, raw[i + 1] as string);
  }
  return kept;
}

/** `host:port` of a CONNECT request line, with IPv6 brackets kept in the key and dropped for dialling. */
function parseAuthority(authority: string): { key: string; host: string; port: number } | undefined {
  const match = /^(\[[^\]]+\]|[^:[\]]+):(\d{1,5})$/.exec(authority);
  if (match === null) return undefined;
  const hostPart = (match[1] as string).toLowerCase();
  const port = Number(match[2]);
  if (port < 1 || port > 65_535) return undefined;
  const host = hostPart.startsWith('[') ? hostPart.slice(1, -1) : hostPart;
  return { key: `${hostPart}:${port}`, host, port };
}

function authorityOf(url: string): string | undefined {
  try {
    const parsed = new URL(url);
    const defaultPort = parsed.protocol === 'https:' || parsed.protocol === 'wss:' ? 443 : 80;
    return `${parsed.hostname.toLowerCase()}:${parsed.port === '' ? defaultPort : parsed.port}`;
  } catch {
    return undefined;
  }
}

function describeSocketError(error: Error): string {
  // A guarded lookup wraps the resolver's error (code and all) as its cause.
  const code = (error as NodeJS.ErrnoException).code ?? (error.cause as NodeJS.ErrnoException | undefined)?.code;
  switch (code) {
    case 'ECONNREFUSED':
      return 'connection refused';
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return 'host name not resolved';
    case 'ECONNRESET':
      return 'connection reset';
    case 'ETIMEDOUT':
      return 'connection timed out';
    case 'EHOSTUNREACH':
    case 'ENETUNREACH':
      return 'host unreachable';
    default:
      return code ?? error.message;
  }
}
