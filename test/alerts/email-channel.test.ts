// E-mail channel against a real SMTP server on 127.0.0.1 (smtp-server): STARTTLS and implicit TLS with a test certificate, AUTH, the MIME that arrives, and the address guard.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createServer as createNetServer, type AddressInfo, type Socket } from 'node:net';
import { after, before, test } from 'node:test';
import { SMTPServer, type SMTPServerOptions } from 'smtp-server';
import type { ConfigOf } from '../../src/alerts/channels/channel-schema.js';
import { createEmailNotifier, type EmailDeps } from '../../src/alerts/channels/email-channel.js';
import { renderFiring } from '../../src/alerts/channels/message-render.js';
import { evaluateRule } from '../../src/alerts/rules/rule-evaluation.js';
import { createGuardedLookup } from '../../src/egress/address-guard.js';
import { until } from '../wait.js';
import { PRODUCT, rule, timeline } from './timeline.js';

const cert = readFileSync(new URL('../fixtures/smtp-tls/cert.pem', import.meta.url), 'utf8');
const key = readFileSync(new URL('../fixtures/smtp-tls/key.pem', import.meta.url), 'utf8');
const PASSWORD = 's3cret-Pa55word!';

interface Received {
  raw: string;
  secure: boolean;
  user: string | undefined;
  from: string | false | undefined;
  to: string[];
}

/** An SMTP server that takes one user's mail and keeps each message as it arrived. */
async function smtpServer(options: Partial<SMTPServerOptions>): Promise<{ port: number; received: Received[]; logins: string[]; close(): Promise<void> }> {
  const received: Received[] = [];
  const logins: string[] = [];
  const server = new SMTPServer({
    key,
    cert,
    logger: false,
    authMethods: ['PLAIN', 'LOGIN'],
    onAuth(auth, _session, callback) {
      logins.push(auth.username ?? '');
      if (auth.username === 'alerts@shop.test' && auth.password === PASSWORD) callback(null, { user: auth.username });
      else callback(Object.assign(new Error('Authentication credentials invalid'), { responseCode: 535 }));
    },
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('end', () => {
        received.push({
          raw: Buffer.concat(chunks).toString('utf8'),
          secure: session.secure,
          user: session.user as string | undefined,
          from: session.envelope.mailFrom === false ? false : session.envelope.mailFrom.address,
          to: session.envelope.rcptTo.map((r) => r.address),
        });
        callback();
      });
    },
    ...options,
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.server.address() as AddressInfo;
  return { port, received, logins, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

// The certificate names smtp.test; the guard's resolver answers it with 127.0.0.1, which this test allows.
const allowLoopback = createGuardedLookup({ allowPrivate: false, resolve: async () => ['127.0.0.1'], isBlocked: (ip) => ip !== '127.0.0.1' });
const trusting: EmailDeps = { lookup: allowLoopback, tls: { ca: [cert] }, clientName: 'alerts.test', timeoutMs: 20_000 };

const firing = (() => {
  const { history, events } = timeline([
    { at: -40, price: 250 },
    { at: -20, price: 230 },
    { at: 0, price: 180 },
  ]);
  const hostile = { ...PRODUCT, title: 'Espresso <script>alert(1)</script> \u202Eevil' };
  return evaluateRule(rule({ type: 'price_drop', baseline: 'previous', min_percent: 10 }), { event: events.at(-1)!, product: hostile, history, now: events.at(-1)!.created_at })!;
})();
const message = renderFiring(firing, { dashboardUrl: 'https://prices.example' });

const channel = (port: number, more: Partial<ConfigOf<'email'>> = {}): ConfigOf<'email'> => ({
  kind: 'email',
  host: 'smtp.test',
  port,
  security: 'starttls',
  username: 'alerts@shop.test',
  password: PASSWORD,
  from: 'alerts@shop.test',
  from_name: 'Price alerts',
  to: ['me@home.test', 'partner@home.test'],
  ...more,
});

let starttls: Awaited<ReturnType<typeof smtpServer>>;
let implicit: Awaited<ReturnType<typeof smtpServer>>;
before(async () => {
  // secure: false with a certificate offers STARTTLS; AUTH is refused before the upgrade (allowInsecureAuth is off).
  starttls = await smtpServer({ secure: false });
  implicit = await smtpServer({ secure: true });
});
after(async () => {
  await starttls.close();
  await implicit.close();
});

test('email over STARTTLS with AUTH: the server receives text, HTML and the chart from the right sender to every recipient', async () => {
  const outcome = await createEmailNotifier(channel(starttls.port), trusting).send(message);
  assert.deepEqual(outcome, { ok: true, status: 250, retryable: false });
  const mail = starttls.received.at(-1)!;
  assert.equal(mail.secure, true, 'the session was upgraded with STARTTLS');
  assert.equal(mail.user, 'alerts@shop.test', 'and authenticated');
  assert.equal(mail.from, 'alerts@shop.test');
  assert.deepEqual(mail.to, ['me@home.test', 'partner@home.test']);

  const raw = mail.raw;
  assert.match(raw, /^Subject: =\?UTF-8\?Q\?Price_drop=3A_/m, 'the subject, MIME-encoded');
  assert.match(raw, /^From: Price alerts <alerts@shop\.test>/m);
  assert.match(raw, /Content-Type: multipart\/alternative/);
  assert.match(raw, /Content-Type: text\/plain; charset=utf-8/);
  assert.match(raw, /Content-Type: text\/html; charset=utf-8/);
  assert.match(raw, /Content-Type: image\/png; name=price-chart\.png/);
  assert.match(raw, /Content-ID: <price-chart@alerts>/);
  const html = decodedPart(raw, 'text/html');
  assert.match(html, /<img src="cid:price-chart@alerts"/);
  assert.match(html, /https:\/\/prices\.example\/ui\/products\/7/);
  assert.ok(!html.includes('<script>'), 'the hostile title is escaped in the HTML part');
  assert.ok(!decodedPart(raw, 'text/plain').includes('\u202E'), 'and its bidi override removed from the text part');
  const png = Buffer.from(
    sectionOf(raw, 'image/png')
      .split(/\r?\n\r?\n/)[1]!
      .replace(/\s+/g, ''),
    'base64',
  );
  assert.deepEqual([...png.subarray(0, 8)], [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a], 'the chart is a PNG');
});

test('email over implicit TLS (port 465 style) is delivered too', async () => {
  const outcome = await createEmailNotifier(channel(implicit.port, { security: 'tls' }), trusting).send(message);
  assert.equal(outcome.ok, true, outcome.error);
  assert.equal(implicit.received.at(-1)?.secure, true);
});

test('a starttls channel refuses a server that does not offer STARTTLS, rather than log in and send in the clear', async () => {
  const plain = await smtpServer({ secure: false, disabledCommands: ['STARTTLS'], allowInsecureAuth: true });
  try {
    const outcome = await createEmailNotifier(channel(plain.port), trusting).send(message);
    assert.equal(outcome.ok, false);
    assert.deepEqual([plain.logins, plain.received], [[], []], 'no password and no message went over the plain connection');
  } finally {
    await plain.close();
  }
});

test('a wrong password is a permanent failure (535) whose error never shows the password', async () => {
  const outcome = await createEmailNotifier(channel(starttls.port, { password: 'wrong-Pa55word-xyz' }), trusting).send(message);
  assert.equal(outcome.ok, false);
  assert.equal(outcome.retryable, false);
  assert.equal(outcome.status, 535);
  assert.ok(!outcome.error?.includes('wrong-Pa55word-xyz'), outcome.error);
});

test('a certificate that does not verify is refused, not sent in the clear', async () => {
  const before = starttls.received.length;
  const outcome = await createEmailNotifier(channel(starttls.port), { ...trusting, tls: {} }).send(message);
  assert.equal(outcome.ok, false);
  assert.equal(outcome.retryable, false);
  assert.equal(starttls.received.length, before);
});

test('with the real address guard and private networks off, an SMTP host on a private address is refused before connecting', async () => {
  const logins = starttls.logins.length;
  for (const host of ['127.0.0.1', 'smtp.test']) {
    const guard = createGuardedLookup({ allowPrivate: false, resolve: async () => ['127.0.0.1'] });
    const outcome = await createEmailNotifier(channel(starttls.port, { host }), { ...trusting, lookup: guard }).send(message);
    assert.equal(outcome.ok, false);
    assert.equal(outcome.retryable, false);
    assert.match(outcome.error ?? '', /private|loopback|reserved/);
  }
  assert.equal(starttls.logins.length, logins, 'the server never saw a login');
});

test('a server that is not there is a retryable failure', async () => {
  const gone = await smtpServer({ secure: false });
  await gone.close();
  const outcome = await createEmailNotifier(channel(gone.port), trusting).send(message);
  assert.deepEqual([outcome.ok, outcome.retryable], [false, true]);
});

test('a server that answers a line every few hundred milliseconds, forever, is cut off at ALERT_TIMEOUT_MS: a retryable failure, its connection closed', {
  timeout: 30_000,
}, async () => {
  // Greets at once, then answers EHLO with an endless multi-line reply: every idle timeout is reset.
  let closed = false;
  const sockets = new Set<Socket>();
  const tarpit = createNetServer((socket) => {
    sockets.add(socket);
    socket.write('220 tarpit.test ESMTP\r\n');
    let drip: NodeJS.Timeout | undefined;
    socket.on('data', () => {
      drip ??= setInterval(() => socket.write('250-still thinking\r\n'), 200);
    });
    socket.on('close', () => {
      clearInterval(drip);
      closed = true;
    });
    socket.on('error', () => undefined);
  });
  await new Promise<void>((resolve) => tarpit.listen(0, '127.0.0.1', resolve));
  try {
    const { port } = tarpit.address() as AddressInfo;
    const outcome = await createEmailNotifier(channel(port, { security: 'none' }), { ...trusting, timeoutMs: 1500 }).send(message);
    assert.deepEqual([outcome.ok, outcome.retryable], [false, true]);
    assert.match(outcome.error ?? '', /did not finish within 1500 ms \(ALERT_TIMEOUT_MS\)/);
    await until('the conversation closed on the server', () => closed);
  } finally {
    for (const socket of sockets) socket.destroy();
    await new Promise<void>((resolve) => tarpit.close(() => resolve()));
  }
});

/** The MIME section whose Content-Type is `type`, headers included. */
function sectionOf(raw: string, type: string): string {
  const start = raw.indexOf(`Content-Type: ${type}`);
  assert.ok(start >= 0, `no ${type} part`);
  const end = raw.indexOf('\n--', start);
  return raw.slice(start, end === -1 ? undefined : end);
}

/** A text part's body, decoded from quoted-printable or base64. */
function decodedPart(raw: string, type: string): string {
  const section = sectionOf(raw, type);
  const [head = '', ...rest] = section.split(/\r?\n\r?\n/);
  const body = rest.join('\n\n');
  if (/Content-Transfer-Encoding: base64/i.test(head)) return Buffer.from(body.replace(/\s+/g, ''), 'base64').toString('utf8');
  if (/Content-Transfer-Encoding: quoted-printable/i.test(head)) {
    const bytes = body.replace(/=\r?\n/g, '').replace(/=([0-9A-F]{2})/gi, (_m, hex: string) => String.fromCharCode(Number.parseInt(hex, 16)));
    return Buffer.from(bytes, 'latin1').toString('utf8');
  }
  return body;
}
