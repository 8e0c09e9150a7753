// SSRF guard: which URLs and IP addresses a scrape may contact, enforced again at connect time.
import { lookup } from 'node:dns/promises';
import { isIP, type LookupFunction, type Socket } from 'node:net';
import ipaddr from 'ipaddr.js';
import { Agent, buildConnector } from 'undici';
import { BlockedTarget, HttpProblem, UpstreamFailed } from '../problems.js';

/** True when an address must not be contacted. */
export type AddressPredicate = (ip: string) => boolean;
/** Resolves a host name to every address it has (like `dns.lookup` with `all: true`). */
export type HostResolver = (hostname: string) => Promise<string[]>;

export interface GuardOptions {
  /** Replaces `isBlockedAddress`, e.g. so a test may reach 127.0.0.1 while 169.254.169.254 stays refused. */
  isBlocked?: AddressPredicate;
  /** Replaces DNS resolution, so tests can simulate hostile DNS answers without a resolver. */
  resolve?: HostResolver;
}

// ipaddr.js calls the deprecated IPv4-compatible block (::a.b.c.d) "unicast", yet it embeds a v4
// address some stacks still route; nothing legitimate lives there.
const IPV4_COMPATIBLE = ipaddr.parseCIDR('::/96');

const ALLOWED_PROTOCOLS = new Set(['http:', 'https:']);

/**
 * True unless `ip` is a canonical IPv4/IPv6 address in ordinary global unicast space.
 * IPv4-mapped IPv6 is unwrapped first, so `::ffff:127.0.0.1` is judged as 127.0.0.1; NAT64, 6to4,
 * Teredo and the other translation prefixes are refused outright because they can embed a private v4.
 * Non-canonical spellings ("127.1", "2130706433") are refused too: callers pass addresses that URL
 * parsing or DNS already normalised, so anything else is suspicious rather than something to interpret.
 */
export function isBlockedAddress(ip: string): boolean {
  const bare = stripBrackets(ip);
  if (isIP(bare) === 0) return true;
  let address: ipaddr.IPv4 | ipaddr.IPv6;
  try {
    address = ipaddr.process(bare);
  } catch {
    return true;
  }
  if (address.range() !== 'unicast') return true;
  return address.kind() === 'ipv6' && address.match(IPV4_COMPATIBLE);
}

/**
 * Parses a target URL and applies every check that needs no network: scheme, IP-literal host,
 * `localhost` names. WHATWG parsing already rewrites `0x7f.1`, `0177.0.0.1`, `2130706433` and
 * `127.1` to `127.0.0.1`, so one check on the normalised host covers every spelling.
 * Credentials in the URL are allowed; error messages never include them.
 */
export function assertAllowedUrl(url: string | URL, allowPrivate: boolean, isBlocked: AddressPredicate = isBlockedAddress): URL {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new BlockedTarget('The target is not a valid absolute URL.');
  }
  if (!ALLOWED_PROTOCOLS.has(parsed.protocol)) {
    throw new BlockedTarget(`Only http and https URLs can be scraped, not ${parsed.protocol}.`);
  }
  if (parsed.hostname === '') throw new BlockedTarget('The target URL has no host.');
  if (allowPrivate) return parsed;
  const host = normaliseHost(parsed.hostname);
  if (isIP(host) !== 0) {
    if (isBlocked(host)) throw blocked(host);
  } else if (host === 'localhost' || host.endsWith('.localhost')) {
    // RFC 6761: resolvers may answer these with loopback without asking DNS, so refuse the name itself.
    throw blocked(host);
  }
  return parsed;
}

/**
 * `assertAllowedUrl` plus DNS: every address the host resolves to must be public. For callers that
 * cannot guard the connection itself (the headless browser's request interception); the HTTP fetcher
 * relies on `createGuardedAgent`, which also defeats DNS rebinding between check and connect.
 */
export async function assertPublicUrl(url: string | URL, allowPrivate: boolean, options: GuardOptions = {}): Promise<URL> {
  const isBlocked = options.isBlocked ?? isBlockedAddress;
  const parsed = assertAllowedUrl(url, allowPrivate, isBlocked);
  if (!allowPrivate) {
    await resolveAllowed(normaliseHost(parsed.hostname), false, isBlocked, options.resolve ?? resolveAll);
  }
  return parsed;
}

/** The guard's verdict on a URL, with every address its host resolves to: what explain shows. */
export interface TargetVerdict {
  url: string;
  verdict: 'allowed' | 'blocked' | 'unresolved';
  reason?: string;
  /** True when SCRAPE_ALLOW_PRIVATE_NETWORKS (or trust in an operator URL) lifts the address checks. */
  private_networks_allowed: boolean;
  addresses: Array<{ address: string; blocked: boolean }>;
}

/**
 * Judges `url` the way a scrape will, without fetching it, and never throws. The fetch itself still
 * checks every connection, so this is a description, not the enforcement.
 */
export async function describeTarget(url: string, allowPrivate: boolean, options: GuardOptions = {}): Promise<TargetVerdict> {
  const isBlocked = options.isBlocked ?? isBlockedAddress;
  const verdict: TargetVerdict = { url, verdict: 'allowed', private_networks_allowed: allowPrivate, addresses: [] };
  let parsed: URL;
  try {
    parsed = assertAllowedUrl(url, allowPrivate, isBlocked);
  } catch (error) {
    return { ...verdict, verdict: 'blocked', reason: error instanceof Error ? error.message : String(error) };
  }
  const host = normaliseHost(parsed.hostname);
  try {
    const addresses = isIP(host) !== 0 ? [host] : await (options.resolve ?? resolveAll)(host);
    verdict.addresses = addresses.map((address) => ({ address, blocked: isBlocked(address) }));
  } catch (error) {
    return { ...verdict, verdict: 'unresolved', reason: `Could not resolve host ${host}: ${error instanceof Error ? error.message : String(error)}` };
  }
  const bad = verdict.addresses.find((a) => a.blocked);
  if (!allowPrivate && bad !== undefined) {
    return { ...verdict, verdict: 'blocked', reason: `${host} resolves to ${bad.address}, a private or reserved address.` };
  }
  return verdict;
}

export interface GuardedAgentOptions extends GuardOptions {
  allowPrivate: boolean;
  /** TCP+TLS connect timeout per address, ms. */
  connectTimeoutMs?: number;
}

/**
 * An undici Agent whose every new connection resolves the host itself, refuses it when ANY address
 * is blocked, and then dials that exact IP (keeping the name for TLS SNI and certificate checks).
 * Checking at connect time rather than before the request is what makes it rebinding-safe: there is
 * no second lookup an attacker's DNS could answer differently.
 */
export function createGuardedAgent(options: GuardedAgentOptions): Agent {
  const isBlocked = options.isBlocked ?? isBlockedAddress;
  const resolve = options.resolve ?? resolveAll;
  const base = buildConnector({ timeout: options.connectTimeoutMs ?? 10_000 });

  const connect: buildConnector.connector = (connectOptions, callback) => {
    const hostname = normaliseHost(connectOptions.hostname);
    const servername = connectOptions.servername || (isIP(hostname) === 0 ? hostname : undefined);
    resolveAllowed(hostname, options.allowPrivate, isBlocked, resolve).then(
      (addresses) => {
        // Dial the checked addresses in order; fall through only on errors that mean "try another".
        const attempt = (index: number): void => {
          const address = addresses[index] as string;
          base({ ...connectOptions, hostname: address, servername }, (error, socket) => {
            if (error !== null && index + 1 < addresses.length && isUnreachable(error)) {
              attempt(index + 1);
            } else if (error !== null) {
              callback(error, null);
            } else {
              callback(null, socket as Socket);
            }
          });
        };
        attempt(0);
      },
      (error: unknown) => callback(error instanceof Error ? error : new Error(String(error)), null),
    );
  };
  return new Agent({ connect });
}

export interface GuardedLookupOptions extends GuardOptions {
  allowPrivate: boolean;
}

/**
 * A `lookup` for `net.connect` / `http.request` that resolves the host once, refuses it (BlockedTarget)
 * when ANY address is blocked, and hands back exactly the checked addresses, so the socket dials what
 * was vetted: the same rebinding defence as `createGuardedAgent`, for code that dials with Node's net.
 * Node skips `lookup` for IP literals, so those must be judged before dialling (`assertAllowedUrl`).
 */
export function createGuardedLookup(options: GuardedLookupOptions): LookupFunction {
  const isBlocked = options.isBlocked ?? isBlockedAddress;
  const resolve = options.resolve ?? resolveAll;
  return (hostname, lookupOptions, callback) => {
    resolveAllowed(normaliseHost(hostname), options.allowPrivate, isBlocked, resolve).then(
      (addresses) => {
        const wanted = lookupOptions.family === 'IPv4' ? 4 : lookupOptions.family === 'IPv6' ? 6 : (lookupOptions.family ?? 0);
        const answers = addresses.map((address) => ({ address, family: isIP(address) })).filter((answer) => wanted === 0 || answer.family === wanted);
        const first = answers[0];
        if (first === undefined) {
          callback(Object.assign(new Error(`Host ${hostname} has no IPv${wanted} address.`), { code: 'ENOTFOUND' }), '');
        } else if (lookupOptions.all === true) {
          // Node asks for every address when it races IPv4 and IPv6 (autoSelectFamily, on by default).
          callback(null, answers);
        } else {
          callback(null, first.address, first.family);
        }
      },
      (error: unknown) => callback(error instanceof Error ? error : new Error(String(error)), ''),
    );
  };
}

/** Resolves `hostname` (or takes the IP literal as is) and refuses if any answer is blocked. */
async function resolveAllowed(hostname: string, allowPrivate: boolean, isBlocked: AddressPredicate, resolve: HostResolver): Promise<string[]> {
  let addresses: string[];
  if (isIP(hostname) !== 0) {
    addresses = [hostname];
  } else {
    try {
      addresses = await resolve(hostname);
    } catch (error) {
      if (error instanceof HttpProblem) throw error;
      throw new UpstreamFailed(`Could not resolve host ${hostname}.`, { cause: error });
    }
    if (addresses.length === 0) throw new UpstreamFailed(`Host ${hostname} has no addresses.`);
  }
  if (!allowPrivate) {
    // Refuse on any blocked answer rather than picking a good one: a name that mixes public and
    // private addresses is either misconfigured or an attack, and both deserve a refusal.
    const bad = addresses.find((address) => isBlocked(address));
    if (bad !== undefined) {
      throw new BlockedTarget(`${hostname} resolves to ${bad}, a private or reserved address.`);
    }
  }
  return addresses;
}

async function resolveAll(hostname: string): Promise<string[]> {
  const answers = await lookup(hostname, { all: true, verbatim: true });
  return answers.map((answer) => answer.address);
}

function isUnreachable(error: Error): boolean {
  const code = (error as NodeJS.ErrnoException).code;
  return code === 'ECONNREFUSED' || code === 'ENETUNREACH' || code === 'EHOSTUNREACH' || code === 'EADDRNOTAVAIL';
}

function blocked(host: string): BlockedTarget {
  return new BlockedTarget(`${host} is a private, loopback or reserved address and cannot be scraped.`);
}

function stripBrackets(host: string): string {
  return host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
}

/** Lower-case, without IPv6 brackets or the DNS root dot (`localhost.` is still localhost). */
function normaliseHost(hostname: string): string {
  return stripBrackets(hostname.toLowerCase()).replace(/\.$/, '');
}
