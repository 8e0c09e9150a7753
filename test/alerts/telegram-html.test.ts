// Telegram's HTML against a stand-in Bot API on 127.0.0.1 that parses it as Telegram does: long digests cut inside a tag, an entity or a bold run still arrive.
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, test } from 'node:test';
import type { Firing } from '../../src/alerts/rules/firing.js';
import { clipHtml } from '../../src/alerts/channels/html-clip.js';
import { renderDigest, renderFiring } from '../../src/alerts/channels/message-render.js';
import { createNotifier } from '../../src/alerts/channels/notifier-factory.js';
import { evaluateRule } from '../../src/alerts/rules/rule-evaluation.js';
import { TELEGRAM_MAX, telegramText } from '../../src/alerts/channels/telegram-channel.js';
import { PRODUCT, day, rule, timeline } from './timeline.js';

/** The tags Telegram's parse_mode HTML supports (core.telegram.org/bots/api#html-style). */
const SUPPORTED = new Set(['b', 'strong', 'i', 'em', 'u', 'ins', 's', 'strike', 'del', 'span', 'tg-spoiler', 'a', 'tg-emoji', 'code', 'pre', 'blockquote']);
const NAMED: Record<string, string> = { lt: '<', gt: '>', amp: '&', quot: '"' };
const ENTITY = /^&(?:#([0-9]+)|#[xX]([0-9A-Fa-f]+)|([a-z]+));/;

/**
 * Telegram's reading of a message with parse_mode HTML: every & starts a complete entity (&lt; &gt;
 * &amp; &quot; or numeric), every < a supported tag, tags close in order, and the text left is 1-4096
 * characters. Answers the text, or the error Telegram gives.
 */
function parseTelegramHtml(html: string): { text: string } | { error: string } {
  const at = (i: number) => Buffer.byteLength(html.slice(0, i));
  const stack: string[] = [];
  let text = '';
  let i = 0;
  const entity = (from: number): { char: string; length: number } | undefined => {
    const m = ENTITY.exec(html.slice(from, from + 12));
    if (m === null) return undefined;
    const char = m[1] !== undefined ? String.fromCodePoint(Number(m[1])) : m[2] !== undefined ? String.fromCodePoint(Number.parseInt(m[2], 16)) : NAMED[m[3]!];
    return char === undefined ? undefined : { char, length: m[0].length };
  };
  while (i < html.length) {
    const c = html[i]!;
    if (c === '&') {
      const e = entity(i);
      if (e === undefined) return { error: `Bad Request: can't parse entities: Can't find end of the entity starting at byte offset ${at(i)}` };
      text += e.char;
      i += e.length;
    } else if (c === '<') {
      const end = html.indexOf('>', i);
      if (end < 0) return { error: `Bad Request: can't parse entities: Unclosed start tag at byte offset ${at(i)}` };
      const inside = html.slice(i + 1, end);
      if (inside.startsWith('/')) {
        const name = inside.slice(1).trim().toLowerCase();
        const open = stack.pop();
        if (open !== name) return { error: `Bad Request: can't parse entities: Unmatched end tag at byte offset ${at(i)}, expected "</${open}>", found "</${name}>"` };
      } else {
        const name = /^[a-z][a-z-]*/i.exec(inside)?.[0].toLowerCase() ?? '';
        if (!SUPPORTED.has(name)) return { error: `Bad Request: can't parse entities: Unsupported start tag "${name}" at byte offset ${at(i)}` };
        // Attribute values are read with their entities too.
        for (let j = inside.indexOf('&'); j >= 0; j = inside.indexOf('&', j + 1)) {
          if (entity(i + 1 + j) === undefined) return { error: `Bad Request: can't parse entities: Can't find end of the entity starting at byte offset ${at(i + 1 + j)}` };
        }
        stack.push(name);
      }
      i = end + 1;
    } else if (c === '>') {
      return { error: `Bad Request: can't parse entities: Unexpected end tag at byte offset ${at(i)}` };
    } else {
      text += c;
      i += 1;
    }
  }
  if (stack.length > 0) return { error: `Bad Request: can't parse entities: Can't find end tag corresponding to start tag "${stack.at(-1)}"` };
  if (text.trim() === '') return { error: 'Bad Request: message text is empty' };
  if (text.length > 4096) return { error: 'Bad Request: message is too long' };
  return { text };
}

const received: Array<{ text: string; parsed: ReturnType<typeof parseTelegramHtml> }> = [];
const botApi = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    const { text, parse_mode } = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { text: string; parse_mode: string };
    const parsed = parse_mode === 'HTML' ? parseTelegramHtml(text) : { text };
    received.push({ text, parsed });
    const ok = 'text' in parsed;
    res.writeHead(ok ? 200 : 400, { 'content-type': 'application/json' });
    res.end(JSON.stringify(ok ? { ok: true, result: { message_id: received.length } } : { ok: false, error_code: 400, description: parsed.error }));
  });
});
let apiUrl = '';
before(async () => {
  await new Promise<void>((resolve) => botApi.listen(0, '127.0.0.1', resolve));
  apiUrl = `http://127.0.0.1:${(botApi.address() as AddressInfo).port}`;
});
after(() => new Promise<void>((resolve) => botApi.close(() => resolve())));

const send = (message: ReturnType<typeof renderDigest>) =>
  createNotifier({ kind: 'telegram', bot_token: '123456789:AAH-secret_TelegramBotToken', chat_id: '-100123456', api_url: apiUrl }, { http: {}, email: {} }).send(message);

/** A price alert for a product whose title is full of what HTML escapes (&, quotes, <b>). */
function firing(n: number, title: string): Firing {
  const { history, events } = timeline(
    [
      { at: -30, price: 250 },
      { at: 0, price: 180 },
    ],
    n,
  );
  const fired = evaluateRule(rule({ type: 'price_at_or_below', target: 200 }), {
    event: events.at(-1)!,
    product: { ...PRODUCT, id: n, title },
    history,
    now: events.at(-1)!.created_at,
  })!;
  // No chart: a digest leaves it out anyway, and drawing 40 of them for each of 160 digests is time for nothing.
  return { ...fired, event_at: day(-n / 1000), chart: [] };
}

/** A daily digest of 40 alerts whose two newest product titles are `pad` characters longer in all: the rest of the text moves by `pad`. */
function digest(pad: number) {
  const longer = [Math.min(pad, 80), pad - Math.min(pad, 80)];
  const firings = Array.from({ length: 40 }, (_, i) => firing(i + 1, `Tom & Jerry "mug" <b>${i}</b> ${'x'.repeat(longer[i] ?? 0)}`));
  return renderDigest(firings, 'Daily', { dashboardUrl: 'https://prices.example' });
}

/** Where a plain cut after `at` characters falls: inside a tag's markup, inside an entity, inside a bold run, or between them. */
function cutPlace(html: string, at: number): 'tag' | 'entity' | 'bold' | 'between' {
  const head = html.slice(0, at);
  if (head.lastIndexOf('<') > head.lastIndexOf('>')) return 'tag';
  if (/&#?[0-9A-Za-z]*$/.test(head)) return 'entity';
  return (head.match(/<b>/g) ?? []).length > (head.match(/<\/b>/g) ?? []).length ? 'bold' : 'between';
}

test('a Telegram digest too long for one message is cut where Telegram can read it: inside a tag, an entity or a bold run, each arrives', async () => {
  const places = new Set<string>();
  received.length = 0;
  // Moving the text one character at a time, over more than a line, puts the 4000th character in each kind of place.
  for (let pad = 0; pad < 160; pad++) {
    const message = digest(pad);
    const whole = telegramText(message, Number.POSITIVE_INFINITY);
    assert.ok(whole.length > TELEGRAM_MAX + 1000, 'the digest is longer than Telegram takes');
    places.add(cutPlace(whole, TELEGRAM_MAX - 1));
    const outcome = await send(message);
    const got = received.at(-1)!;
    assert.deepEqual(outcome, { ok: true, status: 200, retryable: false }, `pad ${pad}: ${'error' in got.parsed ? got.parsed.error : ''}`);
    assert.ok(got.text.length <= TELEGRAM_MAX, `pad ${pad}: ${got.text.length} characters`);
    assert.match(got.text, /…(?:<\/[a-z]+>)*\n\n<a href="https:\/\/prices\.example\/ui\/alerts">Open in the dashboard<\/a>$/, `pad ${pad}: the cut is marked and the link kept`);
    // What arrives is the beginning of the whole digest, as Telegram reads both.
    const wholeText = (parseTelegramHtml(whole) as { text: string }).text;
    const sent = (got.parsed as { text: string }).text.split('…')[0]!;
    assert.ok(sent.length > 2500 && wholeText.startsWith(sent.trimEnd()), `pad ${pad}: a prefix of the digest`);
  }
  assert.deepEqual([...places].sort(), ['between', 'bold', 'entity', 'tag'], 'the cut fell inside a tag, an entity and a bold run');
});

test('the stand-in reads HTML as Telegram does: a cut tag or entity is refused, whole entities in text and links are read', async () => {
  assert.match((parseTelegramHtml('<b>Price alert: Tom &#38; Jer…') as { error: string }).error, /end tag corresponding to start tag "b"/);
  assert.match((parseTelegramHtml('<b>Tom &#3…</b>') as { error: string }).error, /end of the entity/);
  assert.match((parseTelegramHtml('<b>Tom</b> <am…') as { error: string }).error, /Unclosed start tag/);
  assert.match((parseTelegramHtml('<b>Tom</b> <am>…</am>') as { error: string }).error, /Unsupported start tag "am"/);
  assert.deepEqual(parseTelegramHtml('<b>Tom &#38; &amp; &#x26; Jerry</b> <a href="https://x.example/?a=1&#38;b=2">link</a>'), { text: 'Tom & & & Jerry link' });
  received.length = 0;
  const broken = { ...digest(0), facts: [{ label: 'x', value: 'y' }], title: 'Daily digest', why: 'fine' };
  const outcome = await send({ ...broken, dashboard_link: 'https://prices.example/?a=1&b' });
  assert.equal(outcome.ok, true, 'a link with & in it is escaped in the href');
  assert.match(received[0]!.text, /href="https:\/\/prices\.example\/\?a=1&#38;b"/);
});

test('clipHtml: within the length, never inside a tag, an entity or a surrogate pair, open tags closed in order', () => {
  const html = '<b>Price <i>alert &#38; “sale” 😀😀</i> now</b> and more';
  assert.equal(clipHtml(html, 1000), html, 'short enough: unchanged');
  for (let max = 12; max < html.length; max++) {
    const cut = clipHtml(html, max);
    assert.ok(cut.length <= max, `${max}: ${cut}`);
    assert.ok('text' in parseTelegramHtml(cut), `${max}: ${cut}`);
    assert.doesNotMatch(cut, /[\uD800-\uDBFF](?![\uDC00-\uDFFF])/, `${max}: no half of a surrogate pair`);
    assert.ok(cut.includes('…'));
  }
  assert.equal(clipHtml(html, 21), '<b>Price <i>…</i></b>');
  assert.equal(clipHtml(html, 20), '<b>Price…</b>', 'an element that cannot hold a character is left out');
});

test('a single alert keeps its whole Telegram text: the bold title, the facts and the link', () => {
  const message = renderFiring(firing(1, 'Grinder & "beans"'), { dashboardUrl: 'https://prices.example' });
  const text = telegramText(message);
  assert.ok(!text.includes('…'), text);
  assert.match(text, /^<b>Price alert: \u2068Grinder &#38; &#34;beans&#34;\u2069<\/b>\n/);
  assert.match(text, /\n\n<a href="https:\/\/prices\.example\/ui\/products\/1">Open in the dashboard<\/a>$/);
});
