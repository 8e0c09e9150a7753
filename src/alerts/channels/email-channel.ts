// E-mail over SMTP with nodemailer: STARTTLS or implicit TLS, AUTH, text and HTML parts and the chart inline; the host resolved through the address guard.
import type { LookupFunction } from 'node:net';
import { connect, isIP, type Socket } from 'node:net';
import type { ConnectionOptions } from 'node:tls';
import type nodemailer from 'nodemailer';
import { HttpProblem } from '../../problems.js';
import type { ConfigOf } from './channel-schema.js';
import { scrubSecrets, secretsOf } from './channel-secrets.js';
import type { RenderedMessage } from './message-render.js';
import type { Notifier, NotifyOutcome } from './notifier.js';

export interface EmailDeps {
  /**
   * Resolves the SMTP host, e.g. createGuardedLookup({allowPrivate}): it refuses private and
   * reserved addresses (IP literals included), and the connection then dials the vetted address
   * with the host name kept for TLS, so DNS cannot answer differently in between.
   */
  lookup?: LookupFunction;
  /** Extra TLS options (a private CA for a company relay; the tests' self-signed certificate). */
  tls?: ConnectionOptions;
  timeoutMs?: number;
  /** The name we greet the server with (EHLO); nodemailer uses the machine's host name otherwise. */
  clientName?: string;
}

/** The message as nodemailer composes it: multipart/alternative text and HTML, the PNG chart related by Content-ID. */
export function emailMessage(config: ConfigOf<'email'>, message: RenderedMessage) {
  return {
    from: config.from_name === undefined ? config.from : { name: config.from_name, address: config.from },
    to: config.to,
    subject: message.title,
    text: message.text,
    html: message.html,
    attachments:
      message.chart === null
        ? []
        : [{ filename: 'price-chart.png', content: Buffer.from(message.chart.png), contentType: 'image/png', cid: message.chart.cid, contentDisposition: 'inline' as const }],
  };
}

export function createEmailNotifier(config: ConfigOf<'email'>, deps: EmailDeps = {}): Notifier {
  const secrets = secretsOf(config);
  const timeoutMs = deps.timeoutMs ?? 30_000;
  return {
    kind: 'email',
    async send(message) {
      let transport: ReturnType<typeof nodemailer.createTransport> | undefined;
      let socket: Socket | undefined;
      // The whole conversation has one deadline: a server that answers a line every few seconds never
      // trips the idle timeouts, and would hold the delivery (and its queue message) for ever.
      const deadline = setTimeout(() => socket?.destroy(new DeadlineReached(timeoutMs)), timeoutMs);
      try {
        const address = deps.lookup === undefined ? config.host : await resolve(deps.lookup, config.host);
        // Loaded on the first e-mail, not at start (about 0.1 s and 20 MB a service without e-mail channels never needs).
        const { createTransport } = (await import('nodemailer')).default;
        transport = createTransport({
          host: address,
          port: config.port,
          // tls: the connection starts encrypted (465); starttls: it must be upgraded before AUTH (587).
          secure: config.security === 'tls',
          requireTLS: config.security === 'starttls',
          ...(config.username === undefined ? {} : { auth: { user: config.username, pass: config.password ?? '' } }),
          // The certificate is checked against the configured name, not the address dialled.
          tls: { ...(isIP(config.host) === 0 ? { servername: config.host } : {}), minVersion: 'TLSv1.2', ...deps.tls },
          ...(deps.clientName === undefined ? {} : { name: deps.clientName }),
          connectionTimeout: timeoutMs,
          greetingTimeout: timeoutMs,
          socketTimeout: timeoutMs,
          // Our own socket (nodemailer adds TLS on it), so the deadline can end the conversation.
          getSocket: (_options: unknown, callback: (error: Error | null, socket?: { connection: Socket }) => void) => {
            const opened = connect({ host: address, port: config.port });
            socket = opened;
            const failed = (error: Error) => callback(error);
            opened.once('error', failed);
            opened.once('connect', () => {
              opened.off('error', failed);
              callback(null, { connection: opened });
            });
          },
          // A message never reads local files or fetches URLs for attachments, whatever it contains.
          disableFileAccess: true,
          disableUrlAccess: true,
        });
        const info = await transport.sendMail(emailMessage(config, message));
        const status = Number.parseInt(String(info.response ?? '250'), 10);
        return { ok: true, status: Number.isNaN(status) ? 250 : status, retryable: false };
      } catch (error) {
        return failure(socket?.errored instanceof DeadlineReached ? socket.errored : error, secrets);
      } finally {
        clearTimeout(deadline);
        transport?.close();
        socket?.destroy();
      }
    },
  };
}

/** The whole SMTP conversation outlasted ALERT_TIMEOUT_MS. */
class DeadlineReached extends Error {
  readonly code = 'ETIMEDOUT';
  constructor(timeoutMs: number) {
    super(`the conversation did not finish within ${timeoutMs} ms (ALERT_TIMEOUT_MS)`);
  }
}

function resolve(lookup: LookupFunction, host: string): Promise<string> {
  return new Promise((done, fail) => {
    lookup(host, { all: true }, (error, addresses) => {
      if (error !== null) fail(error);
      else {
        const first = Array.isArray(addresses) ? addresses[0]?.address : addresses;
        if (first === undefined || first === '') fail(new Error(`Host ${host} has no addresses.`));
        else done(first);
      }
    });
  });
}

/**
 * SMTP replies 4xx are temporary by definition (RFC 5321 §4.2.1), 5xx permanent; without a reply,
 * a connection or time-out problem may pass, while a refused target, a failed login or a
 * certificate that does not match will not until someone changes the channel.
 */
function failure(error: unknown, secrets: readonly string[]): NotifyOutcome {
  const e = error as Error & { code?: string; responseCode?: number };
  const message = scrubSecrets(`The SMTP server could not take the message: ${e?.message ?? String(error)}`, secrets);
  if (error instanceof HttpProblem) return { ok: false, error: scrubSecrets(error.message, secrets), retryable: error.retryable };
  if (typeof e?.responseCode === 'number') {
    return { ok: false, status: e.responseCode, error: message, retryable: e.responseCode >= 400 && e.responseCode < 500 };
  }
  const permanent = e?.code === 'EAUTH' || e?.code === 'ETLS' || e?.code === 'EENVELOPE' || e?.code === 'EMESSAGE' || /certificate|self[- ]signed/i.test(e?.message ?? '');
  return { ok: false, error: message, retryable: !permanent };
}
