// Apprise-style channel URLs as a table: what each documented form becomes, and clear errors (without the URL's secrets) for malformed ones.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Ajv } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { InvalidChannelUrl, parseAppriseUrl } from '../../src/alerts/channels/apprise-url.js';
import { ChannelConfig } from '../../src/alerts/channels/channel-schema.js';

const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;
const validConfig = addFormats(new Ajv({ strict: false })).compile(ChannelConfig);

// As Teams shows it (with :443), and as stored (the https default port dropped).
const WORKFLOW_SHOWN =
  'https://prod-12.westeurope.logic.azure.com:443/workflows/a1b2c3d4e5/triggers/manual/paths/invoke?api-version=2016-06-01&sp=%2Ftriggers%2Fmanual%2Frun&sv=1.0&sig=Sig_nature-123';
const WORKFLOW = WORKFLOW_SHOWN.replace(':443', '');

const cases: Array<[string, unknown]> = [
  // e-mail (Apprise: mailto:// plain on 25, mailtos:// STARTTLS on 587, mode=ssl implicit TLS)
  [
    'mailtos://alerts:pa55@example.com?to=me@home.test',
    { kind: 'email', host: 'example.com', port: 587, security: 'starttls', username: 'alerts', password: 'pa55', from: 'alerts@example.com', to: ['me@home.test'] },
  ],
  [
    'mailtos://alerts:pa55@example.com:465?mode=ssl&smtp=smtp.example.com&from=shop@example.com&name=Price%20alerts',
    {
      kind: 'email',
      host: 'smtp.example.com',
      port: 465,
      security: 'tls',
      username: 'alerts',
      password: 'pa55',
      from: 'shop@example.com',
      from_name: 'Price alerts',
      to: ['shop@example.com'],
    },
  ],
  [
    'mailtos://example.com?mode=ssl&user=a%40example.com&pass=p%3Aw%2Fd&to=x@home.test,y@home.test',
    {
      kind: 'email',
      host: 'example.com',
      port: 465,
      security: 'tls',
      username: 'a@example.com',
      password: 'p:w/d',
      from: 'a@example.com',
      to: ['x@home.test', 'y@home.test'],
    },
  ],
  [
    'mailto://user:pw@mail.example.org/first@home.test/second@home.test',
    {
      kind: 'email',
      host: 'mail.example.org',
      port: 25,
      security: 'none',
      username: 'user',
      password: 'pw',
      from: 'user@mail.example.org',
      to: ['first@home.test', 'second@home.test'],
    },
  ],
  // ntfy (Apprise: ntfy://topic is the public server; ntfys:// is https; token@ or ?token=)
  ['ntfy://my-alerts', { kind: 'ntfy', server_url: 'https://ntfy.sh/', topic: 'my-alerts' }],
  ['ntfys://ntfy.example.com/my_alerts', { kind: 'ntfy', server_url: 'https://ntfy.example.com/', topic: 'my_alerts' }],
  ['ntfy://bob:pw@ntfy.local:8080/alerts?priority=high', { kind: 'ntfy', server_url: 'http://ntfy.local:8080/', topic: 'alerts', username: 'bob', password: 'pw', priority: 4 }],
  ['ntfys://tk_abcdef123@ntfy.example.com/alerts', { kind: 'ntfy', server_url: 'https://ntfy.example.com/', topic: 'alerts', token: 'tk_abcdef123' }],
  ['ntfys://ntfy.example.com/alerts?token=tk_zzz999', { kind: 'ntfy', server_url: 'https://ntfy.example.com/', topic: 'alerts', token: 'tk_zzz999' }],
  // Discord (Apprise: discord://webhook_id/webhook_token; the https webhook URL as shown)
  ['discord://112233445566778899/AbC-dEf_123456789012345', { kind: 'discord', webhook_url: 'https://discord.com/api/webhooks/112233445566778899/AbC-dEf_123456789012345' }],
  ['discord://botname@112233445566778899/AbC-dEf_123456789012345', { kind: 'discord', webhook_url: 'https://discord.com/api/webhooks/112233445566778899/AbC-dEf_123456789012345' }],
  [
    'https://discordapp.com/api/webhooks/112233445566778899/AbC-dEf_123456789012345',
    { kind: 'discord', webhook_url: 'https://discord.com/api/webhooks/112233445566778899/AbC-dEf_123456789012345' },
  ],
  // Telegram (Apprise: tgram://bot_token/chat_id)
  ['tgram://123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw/-1001234567', { kind: 'telegram', bot_token: '123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw', chat_id: '-1001234567' }],
  ['tgram://bot123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw/@mychannel', { kind: 'telegram', bot_token: '123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw', chat_id: '@mychannel' }],
  // Slack (Apprise: slack://TokenA/TokenB/TokenC[/#channel]; the hooks.slack.com URL)
  ['slack://T1JJ3T3L2/A1BRTD4JD/TIiajkdnlazkcOXrIdevi7FQ', { kind: 'slack', webhook_url: 'https://hooks.slack.com/services/T1JJ3T3L2/A1BRTD4JD/TIiajkdnlazkcOXrIdevi7FQ' }],
  [
    'slack://mybot@T1JJ3T3L2/A1BRTD4JD/TIiajkdnlazkcOXrIdevi7FQ/#general',
    { kind: 'slack', webhook_url: 'https://hooks.slack.com/services/T1JJ3T3L2/A1BRTD4JD/TIiajkdnlazkcOXrIdevi7FQ' },
  ],
  [
    'https://hooks.slack.com/services/T1JJ3T3L2/A1BRTD4JD/TIiajkdnlazkcOXrIdevi7FQ',
    { kind: 'slack', webhook_url: 'https://hooks.slack.com/services/T1JJ3T3L2/A1BRTD4JD/TIiajkdnlazkcOXrIdevi7FQ' },
  ],
  // Teams workflows (Apprise: workflows://host[:port]/workflow/signature; the workflow's https URL)
  ['workflows://prod-12.westeurope.logic.azure.com:443/a1b2c3d4e5/Sig_nature-123', { kind: 'teams', workflow_url: WORKFLOW }],
  [WORKFLOW_SHOWN, { kind: 'teams', workflow_url: WORKFLOW }],
  // Gotify (Apprise: gotify://host[:port][/path]/token, gotifys:// for https)
  ['gotifys://push.example.com/AbCdEf123', { kind: 'gotify', server_url: 'https://push.example.com/', token: 'AbCdEf123' }],
  ['gotify://10.0.0.5:8080/gotify/AbCdEf123?priority=high', { kind: 'gotify', server_url: 'http://10.0.0.5:8080/gotify', token: 'AbCdEf123', priority: 8 }],
];

for (const [url, expected] of cases) {
  test(`apprise: ${url.split(/[:?]/)[0]} ${url.length > 60 ? `${url.slice(0, 57)}...` : url}`, () => {
    const config = parseAppriseUrl(url);
    assert.deepEqual(config, expected);
    assert.equal(validConfig(config), true, `the config passes the channel schema: ${JSON.stringify(validConfig.errors)}`);
  });
}

const malformed: Array<[string, RegExp]> = [
  ['not a url', /scheme:\/\//],
  ['sms://+15551234567', /Unsupported channel URL scheme "sms"/],
  ['mailtos://example.com', /needs a sender/],
  ['mailtos://user:pw@example.com?to=not-an-address', /is not an e-mail address/],
  ['mailtos://user:pw@example.com?mode=tls13', /mode must be/],
  ['ntfy://', /one topic/],
  ['ntfys://ntfy.example.com/one/two', /One ntfy topic per channel/],
  ['ntfys://ntfy.example.com/alerts?priority=11', /priority/],
  ['discord://112233445566778899', /webhook's id/],
  ['tgram://123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw', /chat id/],
  ['tgram://not-a-token/12345', /bot token/],
  ['slack://xoxb-1234-5678-abcdefgh', /bot tokens/],
  ['slack://T1JJ3T3L2/A1BRTD4JD', /three tokens/],
  ['msteams://team/aaa@bbb/ccc/ddd', /retired/],
  ['workflows://host.example.com/only-id', /signature/],
  ['gotify://push.example.com', /application token/],
  ['https://example.com/hook', /not a Slack, Discord or Teams/],
  ['ntfys://ntfy.example.com/%E0%A4%A', /malformed %-escape/],
];
for (const [url, message] of malformed) {
  test(`apprise: "${url}" is refused with a clear error`, () => {
    assert.throws(
      () => parseAppriseUrl(url),
      (error: unknown) => error instanceof InvalidChannelUrl && error.status === 422 && message.test(error.message),
    );
  });
}

test('apprise: errors never quote the secrets of the URL they refuse', () => {
  const secrets = ['SuperSecretPw1', 'ZZsecretTokenZZ', 'tk_hiddenTokenValue'];
  const urls = [
    'mailtos://user:SuperSecretPw1@example.com?to=bad-address',
    'tgram://ZZsecretTokenZZ/12345',
    'slack://ZZsecretTokenZZ/B1/C1',
    'ntfys://tk_hiddenTokenValue@ntfy.example.com/a/b',
    'gotify://push.example.com/ZZsecretTokenZZ?priority=99',
    'discord://1234567/ZZsecretTokenZZ',
  ];
  for (const url of urls) {
    const error = (() => {
      try {
        parseAppriseUrl(url);
      } catch (e) {
        return e as Error;
      }
      assert.fail(`accepted ${url}`);
    })();
    for (const secret of secrets) assert.ok(!error.message.includes(secret), `${url}: ${error.message}`);
  }
});
