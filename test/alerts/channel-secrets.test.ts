// Channel secrets: the public view masks every one, a notifier has nothing to leak, and scrubbing catches the pieces of a secret URL, short secrets and derived credentials.
import assert from 'node:assert/strict';
import { inspect } from 'node:util';
import { test } from 'node:test';
import type { Channel, ChannelConfig } from '../../src/alerts/channels/channel-schema.js';
import { publicView, scrubSecrets, secretsOf } from '../../src/alerts/channels/channel-secrets.js';
import { createNotifier, isDirect } from '../../src/alerts/channels/notifier-factory.js';
import { testMessage } from '../../src/alerts/channels/test-message.js';
import { startReceiver } from './receiver.js';

const SECRETS = {
  email: 'Smtp-Pa55word',
  ntfyTopic: 'private-topic-93k2',
  ntfyToken: 'tk_ntfyTokenValue',
  slack: 'SlackTokenXYZ123456',
  discord: 'DiscordTokenABCDEFGH123',
  telegram: '123456789:AAHsecretTelegramToken',
  teams: 'TeamsSig_secret99',
  gotify: 'GotifyAppToken1',
};

const configs: ChannelConfig[] = [
  { kind: 'email', host: 'smtp.example.com', port: 587, security: 'starttls', username: 'me', password: SECRETS.email, from: 'me@example.com', to: ['you@example.com'] },
  { kind: 'ntfy', server_url: 'https://ntfy.sh/', topic: SECRETS.ntfyTopic, token: SECRETS.ntfyToken },
  { kind: 'slack', webhook_url: `https://hooks.slack.com/services/T000AAA/B000BBB/${SECRETS.slack}` },
  { kind: 'discord', webhook_url: `https://discord.com/api/webhooks/1234567/${SECRETS.discord}` },
  { kind: 'telegram', bot_token: SECRETS.telegram, chat_id: '12345' },
  { kind: 'teams', workflow_url: `https://prod.logic.azure.com/workflows/abc/triggers/manual/paths/invoke?api-version=2016-06-01&sig=${SECRETS.teams}` },
  { kind: 'gotify', server_url: 'https://push.example.com', token: SECRETS.gotify },
  { kind: 'webhook', webhook_id: '0b8d7e1c-3f4a-4c39-9d7e-5a6b7c8d9e0f' },
];
const channels: Channel[] = configs.map((config, i) => ({ id: `00000000-0000-4000-8000-00000000000${i}`, name: `channel ${i}`, enabled: true, config }));

test('publicView masks every secret of every kind, and keeps what says where it goes', () => {
  const shown = JSON.stringify(channels.map(publicView));
  for (const secret of Object.values(SECRETS)) assert.ok(!shown.includes(secret), `${secret} shown: ${shown}`);
  const [email, ntfy, slack, , telegram] = channels.map(publicView);
  assert.deepEqual(email?.config, { ...configs[0], password: '***' });
  assert.equal(ntfy?.config.topic, '***', "an ntfy topic is its subscribers' password");
  assert.equal(slack?.config.webhook_url, 'https://hooks.slack.com/***');
  assert.equal(telegram?.config.chat_id, '12345');
});

test('publicView leaves the stored channel as it was', () => {
  const channel = structuredClone(channels[1]!);
  publicView(channel);
  assert.deepEqual(channel, channels[1]);
});

test('a notifier has nothing to serialise or inspect but its kind', () => {
  for (const config of configs.filter(isDirect)) {
    const notifier = createNotifier(config, { http: {}, email: {} });
    const dumped = `${JSON.stringify(notifier)} ${inspect(notifier, { depth: 5, showHidden: true })}`;
    for (const secret of Object.values(SECRETS)) assert.ok(!dumped.includes(secret), `${config.kind}: ${dumped}`);
  }
});

test('scrubbing removes a secret URL whole, its segments, its query values and their encodings', () => {
  const slack = secretsOf(configs[2]!);
  assert.equal(scrubSecrets(`failed: https://hooks.slack.com/services/T000AAA/B000BBB/${SECRETS.slack} gone`, slack), 'failed: *** gone');
  assert.equal(scrubSecrets(`token ${SECRETS.slack} refused`, slack), 'token *** refused');
  const teams = secretsOf(configs[5]!);
  assert.equal(scrubSecrets(`sig=${encodeURIComponent(SECRETS.teams)}`, teams), 'sig=***');
  const telegram = secretsOf(configs[4]!);
  assert.equal(scrubSecrets(`bot${encodeURIComponent(SECRETS.telegram)}/sendMessage`, telegram), 'bot***/sendMessage');
  assert.equal(scrubSecrets('user https://u:pw-in-url@host/x', []), 'user https://u:***@host/x', 'and URL passwords, as everywhere in the service');
});

test('a secret shorter than 6 characters is scrubbed where it stands as a whole token, not inside other words', () => {
  const ntfy = secretsOf({ kind: 'ntfy', server_url: 'https://ntfy.example/', topic: 't0p', username: 'alice', password: 'pw9' });
  assert.equal(
    scrubSecrets('wrong password pw9 for alice on topic t0p; {"topic":"t0p"} /t0p/ key=pw9&x', ntfy),
    'wrong password *** for alice on topic ***; {"topic":"***"} /***/ key=***&x',
  );
  assert.equal(scrubSecrets('t0pping pw99 xpw9 t0p_1 t0p-2 laptop', ntfy), 't0pping pw99 xpw9 t0p_1 t0p-2 laptop', 'a short secret inside a longer token is left alone');
  const gotify = secretsOf({ kind: 'gotify', server_url: 'https://push.example', token: 'a' });
  assert.equal(
    scrubSecrets('Gotify answered HTTP 401: a token was given: a', gotify),
    'Gotify answered HTTP 401: *** token was given: ***',
    'even one character, as a word of its own',
  );
});

test('credentials derived from a user and password are scrubbed: HTTP Basic (plain and percent-encoded), SMTP AUTH LOGIN and PLAIN', () => {
  const basic = Buffer.from('alice:pw9').toString('base64');
  const ntfy = secretsOf({ kind: 'ntfy', server_url: 'https://ntfy.example/', topic: 'alerts-topic', username: 'alice', password: 'pw9' });
  assert.equal(scrubSecrets(`got Authorization: Basic ${basic} and Basic%20${encodeURIComponent(basic)}`, ntfy), 'got Authorization: Basic *** and Basic%20***');
  const long = Buffer.from('alice:a-longer-secret?').toString('base64');
  const longer = secretsOf({ kind: 'ntfy', server_url: 'https://ntfy.example/', topic: 'alerts-topic', username: 'alice', password: 'a-longer-secret?' });
  assert.equal(scrubSecrets(`auth=Basic ${long}`, longer), 'auth=Basic ***');
  const email = secretsOf({
    kind: 'email',
    host: 'smtp.example.com',
    port: 587,
    security: 'starttls',
    username: 'me',
    password: 'pw',
    from: 'me@example.com',
    to: ['you@example.com'],
  });
  const login = Buffer.from('pw').toString('base64');
  const plain = Buffer.from('\0me\0pw').toString('base64');
  assert.equal(scrubSecrets(`C: AUTH LOGIN ${login} / C: AUTH PLAIN ${plain}`, email), 'C: AUTH LOGIN *** / C: AUTH PLAIN ***');
});

test('a service that echoes the request in its error (Authorization header, URL path, body) has every short secret and derived credential scrubbed', async () => {
  const receiver = await startReceiver();
  try {
    receiver.answer = { status: 500, echo: true };
    const ntfy = { kind: 'ntfy', server_url: `${receiver.base}/`, topic: 't0p', username: 'alice', password: 'pw9' } as const;
    const gotify = { kind: 'gotify', server_url: `${receiver.base}/gotify`, token: 'Gk4' } as const;
    const discord = { kind: 'discord', webhook_url: `${receiver.base}/api/webhooks/42/abc` } as const;
    const basic = Buffer.from('alice:pw9').toString('base64');
    const message = testMessage('https://prices.example').message;
    const outcomes = [];
    for (const config of [ntfy, gotify, discord]) outcomes.push(await createNotifier(config, { http: {}, email: {} }).send(message));
    // The receiver really got (and echoed) the credentials: the scrubbing, not luck, keeps them out.
    assert.equal(receiver.received[0]?.headers.authorization, `Basic ${basic}`);
    assert.equal(receiver.received[1]?.headers['x-gotify-key'], 'Gk4');
    assert.equal(receiver.received[2]?.path, '/api/webhooks/42/abc');
    for (const outcome of outcomes) {
      assert.match(outcome.error ?? '', /answered HTTP 500: cannot handle POST/, 'the echo is quoted');
      for (const secret of [basic, 'pw9', 't0p', 'Gk4', '/42/abc']) assert.ok(!outcome.error?.includes(secret), `${secret} in ${outcome.error}`);
    }
    assert.match(outcomes[0]?.error ?? '', /auth=Basic \*\*\* key= body=\{"topic":"\*\*\*"/);
    assert.match(outcomes[1]?.error ?? '', /key=\*\*\* body=/);
  } finally {
    await receiver.close();
  }
});

test("a secret the service quotes where the error's quote is cut (200 characters) shows no part of it", async () => {
  const receiver = await startReceiver();
  try {
    const slack = { kind: 'slack', webhook_url: `${receiver.base}/services/T000AAA/B000BBB/${SECRETS.slack}` } as const;
    const telegram = { kind: 'telegram', bot_token: SECRETS.telegram, chat_id: '12345', api_url: receiver.base } as const;
    const message = testMessage('https://prices.example').message;
    const cases = [
      { config: slack, secret: SECRETS.slack, answer: (text: string) => text },
      { config: telegram, secret: SECRETS.telegram, answer: (text: string) => ({ ok: false, error_code: 400, description: text }) },
    ];
    for (const { config, secret, answer } of cases) {
      // The quote keeps 199 characters and "…": the secret starts `before` characters ahead of the cut.
      for (let before = 1; before < secret.length; before++) {
        receiver.answer = { status: 400, body: answer(`${'x'.repeat(199 - before)}${secret}\nand more`) };
        const outcome = await createNotifier(config, { http: {}, email: {} }).send(message);
        const said = (outcome.error ?? '').replace(/^\w+ answered HTTP 400: /, '');
        assert.ok(said.startsWith('xxx'), `the answer is quoted: ${outcome.error}`);
        assert.ok(!said.includes(secret.slice(0, before)), `${config.kind}, ${before} characters before the cut: ${said}`);
        assert.ok([...said].length <= 200 && !said.includes('\n'), `one line of at most 200 characters: ${said}`);
      }
    }
  } finally {
    await receiver.close();
  }
});

test('a secret where a long answer is cut off (read up to 64 KiB) shows no part of it, whatever space comes before it', async () => {
  const receiver = await startReceiver();
  try {
    const slack = { kind: 'slack', webhook_url: `${receiver.base}/services/T000AAA/B000BBB/${SECRETS.slack}` } as const;
    const message = testMessage('https://prices.example').message;
    for (const before of [1, 6, SECRETS.slack.length - 1]) {
      // Space collapses to one in the quote, so the bytes before the bound are what it shows.
      receiver.answer = { status: 400, body: `${' '.repeat(64 * 1024 - before)}${SECRETS.slack} and more` };
      const outcome = await createNotifier(slack, { http: {}, email: {} }).send(message);
      assert.equal(outcome.error, 'Slack answered HTTP 400', `${before} bytes of the secret before the bound`);
    }
  } finally {
    await receiver.close();
  }
});
