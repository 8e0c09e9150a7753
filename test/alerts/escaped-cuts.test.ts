// Discord's and Slack's texts cut to the services' limits: the limit holds on the escaped text, and a cut never splits an escape (`\*`, `&amp;`).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { discordRequest } from '../../src/alerts/channels/discord-channel.js';
import type { RenderedMessage } from '../../src/alerts/channels/message-render.js';
import { slackRequest } from '../../src/alerts/channels/slack-channel.js';
import { testMessage } from '../../src/alerts/channels/test-message.js';

const base = testMessage('https://prices.example').message;
const discord = { kind: 'discord', webhook_url: 'https://discord.com/api/webhooks/1/token' } as const;
const slack = { kind: 'slack', webhook_url: 'https://hooks.slack.com/services/T0/B0/token' } as const;
const length = (text: string) => [...text].length;

/** Texts long enough to be cut, each cut landing at another place among escapes. */
const longTexts = (n: number) => ['*'.repeat(n), 'a*'.repeat(n), '**a'.repeat(n), 'a'.repeat(n - 2) + '_b'.repeat(4)];

interface DiscordEmbed {
  title: string;
  description: string;
  fields: Array<{ name: string; value: string }>;
  footer?: { text: string };
}
const embedOf = (message: RenderedMessage) => (discordRequest(discord, message).body as { embeds: DiscordEmbed[] }).embeds[0]!;
const contentOf = (message: RenderedMessage) => String((discordRequest(discord, message).body as { content: string }).content);

/** Escaped Markdown cut well: every backslash escapes the character after it, and taken off, the text is the start of `source` then "…". */
function assertMarkdownCut(text: string, source: string, max: number, where: string): void {
  assert.ok(length(text) <= max, `${where}: ${length(text)} characters, the limit is ${max}`);
  assert.doesNotMatch(text, /\\(?![\\`*_~|>#[\]()!<@:-])|\\$/, `${where}: a backslash left without its character: ${text.slice(-8)}`);
  const shown = text.replace(/\\(.)/gsu, '$1');
  assert.ok(shown.endsWith('…') && source.startsWith(shown.slice(0, -1)), `${where}: ${shown.slice(-8)}`);
}

test('Discord: the line, the embed title, description and each field are cut at their limits on the escaped text, never inside an escape', () => {
  for (const [name, max, message, read] of [
    ['content', 2000, (t: string) => ({ ...base, short: t }), contentOf],
    ['title', 256, (t: string) => ({ ...base, title: t }), (m: RenderedMessage) => embedOf(m).title],
    ['description', 4096, (t: string) => ({ ...base, why: t }), (m: RenderedMessage) => embedOf(m).description],
    ['field name', 256, (t: string) => ({ ...base, facts: [{ label: t, value: 'x' }] }), (m: RenderedMessage) => embedOf(m).fields[0]!.name],
    ['field value', 1024, (t: string) => ({ ...base, facts: [{ label: 'x', value: t }] }), (m: RenderedMessage) => embedOf(m).fields[0]!.value],
  ] as const) {
    for (const source of longTexts(max)) assertMarkdownCut(read(message(source)), source, max, `${name} from ${source.slice(0, 6)}…`);
  }
});

test("Discord: an embed's texts together stay within 6000 characters; the fields that do not fit are left out, in order", () => {
  const facts = Array.from({ length: 25 }, (_, i) => ({ label: `${i} ${'*'.repeat(200)}`, value: `${i} ${'_'.repeat(900)}` }));
  const embed = embedOf({ ...base, title: '#'.repeat(300), why: 'a'.repeat(4000), facts });
  const texts = [embed.title, embed.description, embed.footer?.text ?? '', ...embed.fields.flatMap((f) => [f.name, f.value])];
  assert.ok(texts.reduce((sum, t) => sum + length(t), 0) <= 6000, `${texts.reduce((sum, t) => sum + length(t), 0)} characters`);
  assert.ok(embed.fields.length > 0, 'the first facts that fit are kept');
  assert.deepEqual(
    embed.fields.map((f) => f.name.split(' ')[0]),
    embed.fields.map((_, i) => String(i)),
  );
});

interface SlackBody {
  text: string;
  blocks: Array<{ type: string; text?: { text: string }; fields?: Array<{ text: string }> }>;
}
const slackOf = (message: RenderedMessage) => slackRequest(slack, message).body as SlackBody;
const section = (message: RenderedMessage) => slackOf(message).blocks.find((b) => b.type === 'section')!;

/** Escaped mrkdwn cut well: every & begins a whole &amp; &lt; or &gt;, and unescaped, the text is the start of `source` then "…". */
function assertSlackCut(text: string, source: string, max: number, where: string): void {
  assert.ok(length(text) <= max, `${where}: ${length(text)} characters, the limit is ${max}`);
  assert.doesNotMatch(text.replace(/&(?:amp|lt|gt);/g, ''), /[&<>]/, `${where}: an escape cut: ${text.slice(-8)}`);
  const shown = text.replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&');
  assert.ok(shown.endsWith('…') && source.startsWith(shown.slice(0, -1)), `${where}: ${shown.slice(-8)}`);
}

test('Slack: the fallback text, the section and each field are cut at their limits on the escaped text, never inside an &amp;', () => {
  const slackTexts = (n: number) => ['&'.repeat(n), 'a<'.repeat(n), '<&>'.repeat(n), `${'a'.repeat(n - 3)}&&&&`];
  for (const source of slackTexts(3000)) {
    assertSlackCut(slackOf({ ...base, short: source }).text, source, 3000, `text from ${source.slice(0, 6)}…`);
    assertSlackCut(section({ ...base, why: source }).text!.text, source, 3000, `section from ${source.slice(0, 6)}…`);
  }
  for (const source of slackTexts(2000)) {
    const [field] = section({ ...base, facts: [{ label: 'Now', value: source }] }).fields!;
    assert.ok(field!.text.startsWith('*Now*\n'), field!.text.slice(0, 10));
    assertSlackCut(field!.text.slice('*Now*\n'.length), source, 2000 - '*Now*\n'.length, `field value from ${source.slice(0, 6)}…`);
    const [named] = section({ ...base, facts: [{ label: source, value: 'v' }] }).fields!;
    assert.ok(length(named!.text) <= 2000 && named!.text.endsWith('*\nv'), `a long label keeps its value: ${named!.text.slice(-8)}`);
    assertSlackCut(named!.text.slice(1, -3), source, 2000, `field label from ${source.slice(0, 6)}…`);
  }
});
