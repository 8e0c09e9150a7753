// What a web page in the operator's browser must not do to a service on loopback: reach it under a rebound name, or change anything cross-site.
import { isIP } from 'node:net';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { HttpProblem } from '../problems.js';
import type { App } from './app-type.js';

export class MisdirectedRequest extends HttpProblem {
  constructor(host: string) {
    super(
      421,
      'misdirected-request',
      'Misdirected Request',
      `This service does not answer to the host name "${host.slice(0, 200)}"; add it to ALLOWED_HOSTS if it is yours (a guard against DNS rebinding).`,
    );
  }
}

export class CrossSiteRefused extends HttpProblem {
  constructor(detail: string) {
    super(403, 'cross-site', 'Forbidden', detail);
  }
}

export interface OriginGuardSettings {
  /** Host names (no port) the service answers to besides IP addresses and localhost; `*` answers to any. */
  allowedHosts: readonly string[];
  /** Origins allowed by CORS: they may also send state-changing requests. */
  corsOrigins: readonly string[];
}

const SAFE_METHODS: ReadonlySet<string> = new Set(['GET', 'HEAD', 'OPTIONS']);

/** The host name of a Host header ("[::1]:8000" -> "::1", "Shop.example:80" -> "shop.example"). */
export function hostName(header: string): string {
  const host = header.trim().toLowerCase();
  if (host.startsWith('[')) return host.slice(1, host.indexOf(']') === -1 ? undefined : host.indexOf(']'));
  const colon = host.lastIndexOf(':');
  return colon === -1 ? host : host.slice(0, colon);
}

/**
 * Whether a Host header names this service. An IP address cannot be rebound (a rebinding page must
 * use its own name), and neither can localhost; any other name must be configured.
 */
export function hostAllowed(header: string | undefined, allowedHosts: readonly string[]): boolean {
  if (allowedHosts.includes('*')) return true;
  if (header === undefined || header === '') return false;
  const name = hostName(header).replace(/\.$/, '');
  return isIP(name) !== 0 || name === 'localhost' || name.endsWith('.localhost') || allowedHosts.includes(name);
}

/**
 * Refuses requests under a host name the service does not own (421), and state-changing requests a
 * browser marks as cross-site (`Sec-Fetch-Site: cross-site`) or sends from an origin that is neither
 * the service's own nor one of CORS_ORIGINS (403). Scripts and curl send neither header: they pass.
 */
export function installOriginGuard(app: App, settings: OriginGuardSettings): void {
  const allowedOrigins = new Set(settings.corsOrigins.map((o) => o.toLowerCase()));
  const anyOrigin = allowedOrigins.has('*');
  app.addHook('onRequest', (request: FastifyRequest, _reply: FastifyReply, done: (error?: Error) => void) => {
    if (!hostAllowed(request.headers.host, settings.allowedHosts)) return done(new MisdirectedRequest(request.headers.host ?? ''));
    if (SAFE_METHODS.has(request.method)) return done();
    const origin = request.headers.origin?.toLowerCase();
    const allowedOrigin = origin !== undefined && (anyOrigin || allowedOrigins.has(origin));
    if (request.headers['sec-fetch-site'] === 'cross-site' && !allowedOrigin) {
      return done(new CrossSiteRefused('A page of another site may not change anything here (Sec-Fetch-Site: cross-site); allow its origin in CORS_ORIGINS if you trust it.'));
    }
    if (origin !== undefined && origin !== 'null' && !allowedOrigin && !sameOrigin(origin, request.headers.host)) {
      return done(new CrossSiteRefused(`Origin ${origin.slice(0, 200)} may not change anything here; allow it in CORS_ORIGINS if you trust it.`));
    }
    if (origin === 'null' && !anyOrigin) {
      return done(new CrossSiteRefused('A page with an opaque origin (a sandboxed frame, a file) may not change anything here.'));
    }
    done();
  });
}

function sameOrigin(origin: string, host: string | undefined): boolean {
  if (host === undefined) return false;
  try {
    return new URL(origin).host === host.toLowerCase();
  } catch {
    return false;
  }
}
