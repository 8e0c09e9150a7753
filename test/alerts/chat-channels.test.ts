// Chat channels against local HTTP receivers on 127.0.0.1: each service's documented request, its failure answers, and the address guard.
import assert from 'node:assert/strict';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, test } from 'node:test';
import type { ChannelConfig } from '../../src/alerts/channels/channel-schema.js';
import { cleanText } from '../../src/alerts/channels/hostile-text.js';
import { renderDigest, renderFiring } from '../../src/alerts/channels/message-render.js';
import { createNotifier, type DirectChannelConfig } from '../../src/alerts/channels/notifier-factory.js';
import { evaluateRule } from '../../src/alerts/rules/rule-evaluation.js';
import { testMessage } from '../../src/alerts/channels/test-message.js';
import { assertPublicUrl, createGuardedAgent } from '../../src/egress/address-guard.js';
import { PRODUCT, rule, timeline } from './timeline.js';

interface Seen {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: Record<string, unknown>;
}
interface Answer {
  status: number;
  headers?: Record<string, string>;
  body?: unknown;
}

const seen: Seen[] = [];
let answer: Answer = { status: 200 };
const receiver = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    seen.push({ method: req.method ?? '', path: req.url ?? '', headers: req.headers, body: JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}') });
    res.writeHead(answer.status, { 'content-type': typeof answer.body === 'string' ? 'text/plain' : 'application/json', ...answer.headers });
    res.end(answer.body === undefined ? '' : typeof answer.body === 'string' ? answer.body : JSON.stringify(answer.body));
  });
});
let base = '';
before(async () => {
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
});
after(() => new Promise<void>((resolve) => receiver.close(() => resolve())));

const SLACK_SECRET = 'Zx9SecretSlackToken0123';
const TG_TOKEN = '123456789:AAH-secret_TelegramBotToken';
const configs = (): Record<string, DirectChannelConfig> => ({
  ntfy: { kind: 'ntfy', server_url: `${base}/`, topic: 'price-alerts-4f2a', token: 'tk_secretntfytoken' },
  slack: { kind: 'slack', webhook_url: `${base}/services/T0001/B0001/${SLACK_SECRET}` },
  discord: { kind: 'discord', webhook_url: `${base}/api/webhooks/112233445566/Secret-Discord_Token-abcdefghij` },
  telegram: { kind: 'telegram', bot_token: TG_TOKEN, chat_id: '-100123456', api_url: base },
  teams: { kind: 'teams', workflow_url: `${base}/workflows/abc123/triggers/manual/paths/invoke?api-version=2016-06-01&sp=%2Ftriggers%2Fmanual%2Frun&sv=1.0&sig=SecretSignature42` },
  gotify: { kind: 'gotify', server_url: `${base}/gotify`, token: 'AgotifySecretTok' },
});

const { history, events } = timeline([
  { at: -30, price: 250 },
  { at: 0, price: 180 },
]);
const hostile = { ...PRODUCT, title: 'Grinder *bold* <b>x</b> @everyone [link](https://evil.example)' };
const firing = evaluateRule(rule({ type: 'price_at_or_below', target: 200 }), { event: events.at(-1)!, product: hostile, history, now: events.at(-1)!.created_at })!;
const message = renderFiring(firing, { dashboardUrl: 'https://prices.example' });
const send = (config: DirectChannelConfig, http = {}, what = message) => createNotifier(config, { http, email: {} }).send(what);

type Check = (request: Seen) => void;
const formats: Record<string, Check> = {
  ntfy: (r) => {
    assert.equal(r.path, '/', 'JSON is published to the root URL, not /{topic}');
    assert.equal(r.headers.authorization, 'Bearer tk_secretntfytoken');
    assert.equal(r.body.topic, 'price-alerts-4f2a');
    assert.equal(r.body.click, 'https://prices.example/ui/products/7');
    assert.equal(r.body.priority, 4, 'a target reached is urgent');
    assert.match(String(r.body.message), /at or below the target/);
  },
  slack: (r) => {
    assert.equal(r.path, `/services/T0001/B0001/${SLACK_SECRET}`);
    const blocks = r.body.blocks as Array<{ type: string; text?: { type: string; text: string } }>;
    assert.deepEqual(
      blocks.map((b) => b.type),
      ['header', 'section', 'context'],
    );
    assert.equal(blocks[0]?.text?.type, 'plain_text');
    // plain_text is never parsed; every mrkdwn text has Slack's control characters escaped.
    const mrkdwn = [String(r.body.text), JSON.stringify(blocks.slice(1))];
    assert.ok(
      mrkdwn.every((t) => !t.includes('<b>')),
      'no markup from the title in mrkdwn',
    );
    assert.match(String(r.body.text), /&lt;b&gt;/);
  },
  discord: (r) => {
    assert.equal(r.path, '/api/webhooks/112233445566/Secret-Discord_Token-abcdefghij');
    assert.deepEqual(r.body.allowed_mentions, { parse: [] }, 'no @everyone from a title');
    const [embed] = r.body.embeds as Array<{ title: string; url: string; fields: unknown[] }>;
    assert.equal(embed?.url, 'https://prices.example/ui/products/7');
    assert.match(String(r.body.content), /\\\*bold\\\*/, 'Markdown in the title is escaped');
  },
  telegram: (r) => {
    assert.equal(r.path, `/bot${TG_TOKEN}/sendMessage`);
    assert.equal(r.body.chat_id, '-100123456');
    assert.equal(r.body.parse_mode, 'HTML');
    assert.deepEqual(r.body.link_preview_options, { is_disabled: true });
    assert.match(String(r.body.text), /&#60;b&#62;x&#60;\/b&#62;/, 'HTML in the title is escaped');
    assert.match(String(r.body.text), /<a href="https:\/\/prices\.example\/ui\/products\/7">/);
  },
  teams: (r) => {
    assert.equal(r.path.split('?')[0], '/workflows/abc123/triggers/manual/paths/invoke');
    assert.equal(r.body.type, 'message');
    const [attachment] = r.body.attachments as Array<{ contentType: string; content: { type: string; version: string; actions: Array<{ url: string }> } }>;
    assert.equal(attachment?.contentType, 'application/vnd.microsoft.card.adaptive');
    assert.equal(attachment?.content.type, 'AdaptiveCard');
    assert.equal(attachment?.content.actions[0]?.url, 'https://prices.example/ui/products/7');
  },
  gotify: (r) => {
    assert.equal(r.path, '/gotify/message', 'the server path prefix is kept');
    assert.equal(r.headers['x-gotify-key'], 'AgotifySecretTok');
    assert.deepEqual(r.body.extras, { 'client::display': { contentType: 'text/plain' }, 'client::notification': { click: { url: 'https://prices.example/ui/products/7' } } });
    assert.equal(r.body.priority, 8);
  },
};

const okAnswers: Record<string, Answer> = {
  ntfy: { status: 200, body: { id: 'x1', event: 'message' } },
  slack: { status: 200, body: 'ok' },
  discord: { status: 204 },
  telegram: { status: 200, body: { ok: true, result: { message_id: 5 } } },
  teams: { status: 202 },
  gotify: { status: 200, body: { id: 9 } },
};

for (const [service, check] of Object.entries(formats)) {
  test(`${service}: POSTs the documented JSON request and reads its success answer`, async () => {
    answer = okAnswers[service]!;
    seen.length = 0;
    const outcome = await send(configs()[service]!);
    assert.deepEqual(outcome, { ok: true, status: answer.status, retryable: false });
    assert.equal(seen.length, 1);
    assert.equal(seen[0]!.method, 'POST');
    assert.match(String(seen[0]!.headers['content-type']), /^application\/json/);
    check(seen[0]!);
  });

  test(`${service}: a 4xx is not retried; a 5xx and a 429 are, and Retry-After is kept`, async () => {
    answer = { status: 404, body: 'no_such_thing' };
    assert.deepEqual(pick(await send(configs()[service]!)), { ok: false, status: 404, retryable: false });
    answer = { status: 503, body: 'down' };
    assert.deepEqual(pick(await send(configs()[service]!)), { ok: false, status: 503, retryable: true });
    answer = { status: 429, headers: { 'retry-after': '7' }, body: '' };
    const limited = await send(configs()[service]!);
    assert.deepEqual(pick(limited), { ok: false, status: 429, retryable: true });
    assert.equal(limited.retry_after_ms, 7000);
  });
}

test('Retry-After as an HTTP date is turned into a wait from now', async () => {
  answer = { status: 503, headers: { 'retry-after': 'Wed, 21 Oct 2026 07:28:30 GMT' } };
  const outcome = await send(configs().slack!, { now: () => Date.parse('2026-10-21T07:28:00Z') });
  assert.equal(outcome.retry_after_ms, 30_000);
});

test("Discord's 429 body says how long to wait (retry_after, in seconds)", async () => {
  answer = { status: 429, body: { message: 'You are being rate limited.', retry_after: 1.5, global: false } };
  const outcome = await send(configs().discord!);
  assert.deepEqual([outcome.retryable, outcome.retry_after_ms], [true, 1500]);
});

test("Telegram's own answer decides: ok:false is a failure, flood control says when, a bad chat is permanent", async () => {
  answer = { status: 429, body: { ok: false, error_code: 429, description: 'Too Many Requests: retry after 3', parameters: { retry_after: 3 } } };
  const flooded = await send(configs().telegram!);
  assert.deepEqual([flooded.ok, flooded.retryable, flooded.retry_after_ms], [false, true, 3000]);
  answer = { status: 400, body: { ok: false, error_code: 400, description: 'Bad Request: chat not found' } };
  const lost = await send(configs().telegram!);
  assert.deepEqual([lost.ok, lost.retryable], [false, false]);
  assert.match(lost.error ?? '', /chat not found/);
});

test('a secret the service quotes back never reaches the outcome', async () => {
  answer = { status: 404, body: `no webhook at /services/T0001/B0001/${SLACK_SECRET}` };
  const slack = await send(configs().slack!);
  assert.ok(!slack.error?.includes(SLACK_SECRET), slack.error);
  answer = { status: 401, body: { ok: false, error_code: 401, description: `Unauthorized bot${TG_TOKEN}` } };
  const telegram = await send(configs().telegram!);
  assert.ok(!telegram.error?.includes(TG_TOKEN) && !telegram.error?.includes('AAH-secret'), telegram.error);
});

test('a service that is not listening is a retryable failure', async () => {
  const closed = createServer();
  await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
  const port = (closed.address() as AddressInfo).port;
  await new Promise<void>((resolve) => closed.close(() => resolve()));
  const outcome = await send({ kind: 'gotify', server_url: `http://127.0.0.1:${port}`, token: 'AgotifySecretTok' });
  assert.deepEqual([outcome.ok, outcome.retryable], [false, true]);
  assert.ok(!outcome.error?.includes('AgotifySecretTok'));
});

const guards: Array<[string, (config: ChannelConfig) => Record<string, unknown>]> = [
  ['the guarded dispatcher refuses 127.0.0.1 at connect time', () => ({ dispatcher: createGuardedAgent({ allowPrivate: false }) })],
  ['assertPublicUrl refuses 127.0.0.1 before sending', () => ({ guard: (url: URL) => assertPublicUrl(url, false) })],
];
for (const [name, deps] of guards) {
  test(`address guard, private networks off: ${name}, for every chat channel`, async () => {
    answer = { status: 200, body: { ok: true } };
    seen.length = 0;
    for (const config of Object.values(configs())) {
      const outcome = await send(config, deps(config));
      assert.equal(outcome.ok, false, config.kind);
      assert.equal(outcome.retryable, false, `${config.kind}: a refused address stays refused`);
      assert.match(outcome.error ?? '', /private|loopback|reserved/, config.kind);
    }
    assert.equal(seen.length, 0, 'the receiver never saw a request');
  });
}

test('address guard: a host name that resolves to a private address is refused too (no rebinding)', async () => {
  seen.length = 0;
  const port = new URL(base).port;
  const dispatcher = createGuardedAgent({ allowPrivate: false, resolve: async () => ['127.0.0.1'] });
  const outcome = await send({ kind: 'ntfy', server_url: `http://ntfy.test:${port}/`, topic: 'alerts' }, { dispatcher });
  assert.deepEqual([outcome.ok, outcome.retryable, seen.length], [false, false, 0]);
  // The same agent with loopback allowed delivers: the dispatcher given is the one used.
  const allowing = createGuardedAgent({ allowPrivate: false, resolve: async () => ['127.0.0.1'], isBlocked: (ip) => ip !== '127.0.0.1' });
  answer = okAnswers.ntfy!;
  assert.equal((await send({ kind: 'ntfy', server_url: `http://ntfy.test:${port}/`, topic: 'alerts' }, { dispatcher: allowing })).ok, true);
  assert.equal(seen.length, 1);
});

/** Where each kind shows a message's title first (Markdown escapes taken off). */
const headlines: Record<string, (r: Seen) => string[]> = {
  ntfy: (r) => [String(r.body.title)],
  gotify: (r) => [String(r.body.title)],
  slack: (r) => [String(r.body.text), (r.body.blocks as Array<{ text: { text: string } }>)[0]!.text.text],
  discord: (r) => [unescapeMarkdown(String(r.body.content)), unescapeMarkdown((r.body.embeds as Array<{ title: string }>)[0]!.title)],
  telegram: (r) => [/^<b>([^<]*)<\/b>/.exec(String(r.body.text))?.[1] ?? String(r.body.text)],
  teams: (r) => [unescapeMarkdown(cardTexts(r)[0]!)],
};

test('the channel test message is marked "Test:" where each kind shows its title first, e-mail and webhook included', async () => {
  const outgoing = testMessage('https://prices.example');
  for (const [service, headline] of Object.entries(headlines)) {
    answer = okAnswers[service]!;
    seen.length = 0;
    assert.equal((await send(configs()[service]!, {}, outgoing.message)).ok, true, service);
    for (const shown of headline(seen[0]!)) assert.match(shown, /^Test: Price alert: /, `${service}: ${shown}`);
  }
  // E-mail sends the rendered title, text and HTML as they are (emailMessage): each begins with the mark.
  assert.match(outgoing.message.title, /^Test: /);
  assert.match(outgoing.message.text, /^Test: Price alert: /);
  assert.match(outgoing.message.html, /<h2[^>]*>Test: Price alert: /);
  assert.match(String((outgoing.webhook.data as { title?: unknown }).title), /^Test: Price alert: /, 'the webhook kind: alert.test names it too');
});

test('Teams: a digest names its products in the card as text, every Markdown special escaped', async () => {
  const other = { ...firing, dedupe_key: 'other', product: { ...firing.product, id: 8, title: '**Sale** _now_ `x` ~y~ # <at>everyone</at> | !z' } };
  const digest = renderDigest([firing, other], 'Daily', { dashboardUrl: 'https://prices.example' });
  answer = okAnswers.teams!;
  seen.length = 0;
  assert.equal((await send(configs().teams!, {}, digest)).ok, true);
  const texts = cardTexts(seen[0]!);
  for (const text of texts) assert.ok(markdownInert(text), `Markdown left in ${JSON.stringify(text)}`);
  const titles = texts.map(unescapeMarkdown);
  for (const product of [hostile.title, other.product.title])
    assert.ok(titles.includes(`Price alert: ${cleanText(product, 120)}`), `${product} arrives as text: ${JSON.stringify(titles)}`);
});

test("Discord: a product title arrives as text in the line, the embed title and a digest's fields, and can ping no one", async () => {
  const title = '**Sale** _now_ `x` ~y~ ||z|| > [a](https://evil.example) <@123> @everyone @here';
  const single = renderFiring({ ...firing, product: { ...firing.product, title } }, { dashboardUrl: 'https://prices.example' });
  const other = { ...firing, dedupe_key: 'other', product: { ...firing.product, id: 8, title } };
  const digest = renderDigest([firing, other], 'Daily', { dashboardUrl: 'https://prices.example' });
  answer = okAnswers.discord!;
  for (const [what, sent, expected] of [
    ['a firing', single, single.title],
    ['a digest', digest, `Price alert: ${cleanText(title, 120)}`],
  ] as const) {
    seen.length = 0;
    assert.equal((await send(configs().discord!, {}, sent)).ok, true, what);
    const body = seen[0]!.body;
    assert.deepEqual(body.allowed_mentions, { parse: [] }, `${what}: no mention pings`);
    const texts = discordTexts(seen[0]!);
    for (const text of texts) assert.ok(markdownInert(text), `${what}: Markdown left in ${JSON.stringify(text)}`);
    assert.ok(texts.map(unescapeMarkdown).includes(expected), `${what}: the title arrives as text: ${JSON.stringify(texts)}`);
  }
});

/** Every Markdown text of a Discord request: the line, the embed's title and description, each field's name and value. */
function discordTexts(r: Seen): string[] {
  const [embed] = r.body.embeds as Array<{ title: string; description: string; fields: Array<{ name: string; value: string }> }>;
  return [String(r.body.content), embed!.title, embed!.description, ...embed!.fields.flatMap((f) => [f.name, f.value])];
}

/** Every text of a Teams request's card: its TextBlocks, then each fact's title and value. */
function cardTexts(r: Seen): string[] {
  const [attachment] = r.body.attachments as Array<{ content: { body: Array<{ type: string; text?: string; facts?: Array<{ title: string; value: string }> }> } }>;
  return attachment!.content.body.flatMap((block) => (block.type === 'FactSet' ? (block.facts ?? []).flatMap((f) => [f.title, f.value]) : [block.text ?? '']));
}

/** No character that starts Markdown formatting, a link or a mention, unless a backslash escapes it. */
function markdownInert(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    if (text[i] === '\\') i += 1;
    else if ('*_`~[]()<>#|!@'.includes(text[i]!)) return false;
  }
  return true;
}

function unescapeMarkdown(text: string): string {
  return text.replace(/\\(.)/gs, '$1');
}

function pick(outcome: { ok: boolean; status?: number; retryable: boolean }) {
  return { ok: outcome.ok, status: outcome.status, retryable: outcome.retryable };
}
