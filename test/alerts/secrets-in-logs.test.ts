// Channel secrets never appear in an answer or a log line: the service runs as a process at the most verbose log level while channels are made, listed, tested and fail.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { startMainProcess, type ServiceProcess } from '../process-helpers.js';
import { until } from '../wait.js';
import { startReceiver, type Receiver } from './receiver.js';

const SLACK = 'Zx9SecretSlackToken0123';
const NTFY_TOKEN = 'tk_secretntfytoken42';
const TOPIC = 'hidden-topic-93bd';
const GOTIFY = 'AgotifyS3cretTok';
const TELEGRAM = '123456789:AAH-secret_TelegramBotToken';
const SMTP = 'smtp-Pa55word!';
const SECRETS = [SLACK, NTFY_TOKEN, TOPIC, GOTIFY, TELEGRAM, SMTP, encodeURIComponent(SMTP), encodeURIComponent(TELEGRAM)];

let service: ServiceProcess;
let receiver: Receiver;
let dataDir: string;

before(async () => {
  receiver = await startReceiver();
  // A service that quotes the request it was sent in its error (path, credentials, body): the adapters must scrub it.
  receiver.answer = { status: 500, echo: true };
  dataDir = mkdtempSync(join(tmpdir(), 'alerts-secrets-'));
  service = await startMainProcess({ DATA_DIR: dataDir, LOG_LEVEL: 'trace', SCRAPE_ALLOW_PRIVATE_NETWORKS: 'true', ALERT_RETRY_DELAYS_MS: '50' });
});

after(async () => {
  service?.child.kill('SIGTERM');
  await service?.exited;
  await receiver?.close();
  rmSync(dataDir, { recursive: true, force: true });
});

test('secrets are in no answer and no log line: channels created, listed, changed, tested, failing and disabled', async () => {
  const call = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(`${service.base}${path}`, {
      method,
      ...(body === undefined ? {} : { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }),
    });
    return { status: res.status, text: await res.text() };
  };
  const answers: string[] = [];
  const configs = [
    { name: 'slack', config: { kind: 'slack', webhook_url: `${receiver.base}/services/T0/B0/${SLACK}` } },
    { name: 'ntfy', url: `ntfy://${NTFY_TOKEN}@${receiver.base.replace('http://', '')}/${TOPIC}` },
    { name: 'gotify', url: `gotify://${receiver.base.replace('http://', '')}/${GOTIFY}` },
    { name: 'telegram', config: { kind: 'telegram', bot_token: TELEGRAM, chat_id: '-100123', api_url: receiver.base } },
    { name: 'mail', url: `mailto://alerts:${encodeURIComponent(SMTP)}@127.0.0.1:9?to=me@home.test` },
  ];
  const ids: string[] = [];
  for (const body of configs) {
    const res = await call('POST', '/channels', body);
    assert.equal(res.status, 201, res.text);
    answers.push(res.text);
    ids.push(JSON.parse(res.text).id);
  }
  // A bad URL's error names the form, not the URL.
  answers.push((await call('POST', '/channels', { name: 'bad', url: `discord://${SLACK}` })).text);
  answers.push((await call('GET', '/channels')).text);
  for (const id of ids) {
    answers.push((await call('GET', `/channels/${id}`)).text);
    answers.push((await call('POST', `/channels/${id}/test`)).text);
  }
  answers.push((await call('PATCH', `/channels/${ids[0]}`, { name: 'renamed' })).text);
  // Real alerts through every channel; they fail (the receiver answers 500, the SMTP port is closed) and the channels are disabled.
  const product = JSON.parse((await call('POST', '/products', { title: 'Secret-free kettle', price: 50, currency: 'EUR' })).text);
  await call('POST', '/alert-rules', { name: 'any change', scope: { type: 'all' }, condition: { type: 'price_changed' }, cooldown_minutes: 0, channel_ids: ids });
  await call('PATCH', `/products/${product.id}`, { price: 45 });
  await until(
    'every channel disabled',
    async () => {
      const channels = JSON.parse((await call('GET', '/channels')).text) as Array<{ enabled: boolean }>;
      return channels.every((c) => !c.enabled);
    },
    { withinMs: 120_000, everyMs: 250 },
  );
  answers.push((await call('GET', '/channels')).text, (await call('GET', '/alerts')).text, (await call('GET', '/openapi.json')).text);
  const alerts = JSON.parse(answers.at(-2)!) as Array<{ deliveries: Array<{ status: string; error: string }> }>;
  assert.equal(alerts[0]!.deliveries.length, 5);
  assert.ok(
    alerts[0]!.deliveries.every((d) => d.status === 'failed' && d.error.length > 0),
    JSON.stringify(alerts[0]!.deliveries),
  );
  const output = service.output();
  assert.match(output, /alert channel disabled/, 'the log says what happened');
  assert.ok(receiver.received.length >= 8, 'the services were really called');
  for (const secret of SECRETS) {
    for (const [i, answer] of answers.entries()) assert.equal(answer.includes(secret), false, `answer ${i} shows ${secret}: ${answer.slice(0, 300)}`);
    const line = output.split('\n').find((l) => l.includes(secret));
    assert.equal(line, undefined, `a log line shows ${secret}`);
  }
});
