// /alert-rules, /channels and /alerts as the API contract: validation that names the field, Apprise URLs, secrets never shown, the address guard, previews from stored history.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { assertProblem, backends, mainServiceOn, warnIfNoPostgres, openService, type OpenService } from '../helpers.js';
import { startReceiver, type Receiver } from './receiver.js';

warnIfNoPostgres();

const SECRETS = ['Zx9SecretSlackToken0123', 'tk_secretntfytoken', '123456789:AAH-secret_TelegramBotToken', 'smtp-Pa55word!', 'price-alerts-4f2a'];

for (const backend of backends()) {
  describe(`alerts API on ${backend.name}`, () => {
    let app: Awaited<ReturnType<typeof mainServiceOn>>['app'];
    let guarded: Awaited<ReturnType<typeof mainServiceOn>>['app'];
    let receiver: Receiver;
    let opened: OpenService;

    before(async () => {
      receiver = await startReceiver();
      const other = await backend.open();
      app = (opened = await openService(backend, { SCRAPE_ALLOW_PRIVATE_NETWORKS: 'true' })).app;
      opened.own(other);
      opened.own(receiver);
      // The default: private networks refused, for channels as for scrapes.
      guarded = (await mainServiceOn(other, { after: (fn) => opened.onClose(fn) })).app;
    });
    after(() => opened.close());

    const post = (url: string, payload: unknown, on = app) => on.inject({ method: 'POST', url, payload: payload as object });

    test('POST /channels stores each kind from a config or an Apprise URL; every answer masks the secrets', async () => {
      const bodies = [
        { name: 'slack', url: `${receiver.base}/services/T0001/B0001/Zx9SecretSlackToken0123`.replace('http://', 'http://') },
        { name: 'ntfy', config: { kind: 'ntfy', server_url: `${receiver.base}/`, topic: 'price-alerts-4f2a', token: 'tk_secretntfytoken' } },
        { name: 'telegram', url: 'tgram://123456789:AAH-secret_TelegramBotToken/-100123456' },
        { name: 'mail', url: 'mailtos://alerts:smtp-Pa55word!@mail.example?to=me@home.example' },
      ];
      // A Slack URL on a receiver: the Apprise reader takes hooks.slack.com only, so this one goes as config.
      bodies[0] = { name: 'slack', config: { kind: 'slack', webhook_url: `${receiver.base}/services/T0001/B0001/Zx9SecretSlackToken0123` } } as never;
      const created = [];
      for (const body of bodies) {
        const res = await post('/channels', body);
        assert.equal(res.statusCode, 201, res.body);
        assert.match(String(res.headers.location), /^\/channels\/[0-9a-f-]{36}$/);
        created.push(res.json());
      }
      assert.equal(created[2].config.kind, 'telegram');
      assert.equal(created[2].config.bot_token, '***');
      assert.equal(created[2].config.chat_id, '-100123456');
      assert.equal(created[3].config.kind, 'email');
      assert.equal(created[3].config.security, 'starttls', 'mailtos:// upgrades on 587 unless mode=ssl');
      assert.equal(created[3].config.port, 587);
      assert.equal(created[1].config.topic, '***');
      assert.match(created[0].config.webhook_url, /^http:\/\/127\.0\.0\.1:\d+\/\*\*\*$/, 'a secret URL keeps its origin');
      const answers = [
        ...created.map((c) => JSON.stringify(c)),
        (await app.inject({ url: '/channels' })).body,
        ...(await Promise.all(created.map(async (c) => (await app.inject({ url: `/channels/${c.id}` })).body))),
        (await app.inject({ method: 'PATCH', url: `/channels/${created[1].id}`, payload: { name: 'phone' } })).body,
      ];
      for (const secret of SECRETS) {
        for (const answer of answers) assert.equal(answer.includes(secret), false, `an answer showed ${secret}`);
      }
    });

    test('bad channels are 422s naming the field, never quoting the secret URL', async () => {
      const cases: Array<[unknown, RegExp]> = [
        [{ name: 'x' }, /\/body\/config/],
        [{ name: 'x', url: 'msteams://a/b/c', config: { kind: 'webhook', webhook_id: '0b8d7e1c-3f4a-4c39-9d7e-5a6b7c8d9e0f' } }, /exactly one of config and url/],
        [{ name: 'x', url: 'carrier-pigeon://secret-coop/7' }, /Unsupported channel URL scheme/],
        [{ name: 'x', url: 'msteams://Alpha123/Beta456secret/Gamma789' }, /retired/],
        [{ name: 'x', config: { kind: 'ntfy', server_url: 'https://ntfy.sh', topic: 'has spaces' } }, /\/body\/config\/topic/],
        [{ name: 'x', config: { kind: 'webhook', webhook_id: '0b8d7e1c-3f4a-4c39-9d7e-5a6b7c8d9e0f' } }, /\/body\/config\/webhook_id.*names no registered webhook/],
        [{ name: 'x', url: 'discord://1234/' }, /discord:\/\/webhook_id\/webhook_token/],
      ];
      for (const [body, pattern] of cases) {
        const res = await post('/channels', body);
        const problem = assertProblem(res, 422);
        assert.match(JSON.stringify(problem), pattern, res.body);
        assert.doesNotMatch(res.body, /secret-coop|Beta456secret/, 'the URL is not quoted');
      }
      assertProblem(await app.inject({ url: '/channels/not-a-uuid' }), 422);
      assertProblem(await app.inject({ url: '/channels/0b8d7e1c-3f4a-4c39-9d7e-5a6b7c8d9e0f' }), 404);
    });

    test('the address guard: with private networks refused, a channel cannot point at loopback or a private address', async () => {
      for (const config of [
        { kind: 'ntfy', server_url: 'http://127.0.0.1:8080/', topic: 'local' },
        { kind: 'gotify', server_url: 'http://10.0.0.5/', token: 'AgotifyS3cretTok' },
        { kind: 'email', host: 'localhost', port: 25, security: 'none', from: 'a@b.example', to: ['c@d.example'] },
        { kind: 'slack', webhook_url: 'http://[::1]/services/T/B/Zx9SecretSlackToken0123' },
      ]) {
        const res = await post('/channels', { name: 'inside', config }, guarded);
        const problem = assertProblem(res, 422);
        assert.match(problem.errors[0].path, /^\/body\/config\/(server_url|host|webhook_url)$/);
        assert.match(problem.detail, /SCRAPE_ALLOW_PRIVATE_NETWORKS/);
        assert.doesNotMatch(res.body, /Zx9SecretSlackToken0123|AgotifyS3cretTok/);
      }
      // The same target is fine where private networks are allowed (the tests' receivers).
      assert.equal((await post('/channels', { name: 'local', config: { kind: 'ntfy', server_url: 'http://127.0.0.1:8080/', topic: 'local' } })).statusCode, 201);
    });

    test('POST /channels/{id}/test sends a test message and answers the outcome; a refusing service is a failed outcome, not an error', async () => {
      const channel = (await post('/channels', { name: 'test me', config: { kind: 'ntfy', server_url: `${receiver.base}/`, topic: 'test-topic-1' } })).json();
      const ok = await post(`/channels/${channel.id}/test`, {});
      assert.equal(ok.statusCode, 200, ok.body);
      assert.deepEqual(ok.json(), { ok: true, status: 200, retryable: false });
      const got = receiver.received.at(-1)!;
      assert.equal(got.body.topic, 'test-topic-1');
      assert.match(String(got.body.title), /^Test: /);
      assert.match(String(got.body.click), /\/ui\/channels$/);
      receiver.answer = { status: 401, body: { error: 'unauthorized' } };
      try {
        const refused = await post(`/channels/${channel.id}/test`, {});
        assert.equal(refused.statusCode, 200);
        assert.equal(refused.json().ok, false);
        assert.equal(refused.json().status, 401);
        assert.match(refused.json().error, /ntfy answered HTTP 401/);
        assert.equal((await app.inject({ url: `/channels/${channel.id}` })).json().enabled, true, 'a failed test disables nothing');
      } finally {
        receiver.answer = { status: 200 };
      }
    });

    test('alert rules: create, read, list, patch, delete; 422s name the field; a deleted channel leaves its rules', async () => {
      const channel = (await post('/channels', { name: 'rules', config: { kind: 'ntfy', server_url: `${receiver.base}/`, topic: 'rules-topic' } })).json();
      const product = (await post('/products', { title: 'Grinder', price: 120, currency: 'EUR' })).json();
      const body = {
        name: 'Grinder drops',
        scope: { type: 'product', product_id: product.id },
        condition: { type: 'price_drop', baseline: 'previous', min_percent: 10 },
        channel_ids: [channel.id],
      };
      const res = await post('/alert-rules', body);
      assert.equal(res.statusCode, 201, res.body);
      const rule = res.json();
      assert.deepEqual({ cooldown: rule.cooldown_minutes, digest: rule.digest, enabled: rule.enabled }, { cooldown: 60, digest: 'immediate', enabled: true }, 'defaults');
      assert.deepEqual((await app.inject({ url: `/alert-rules/${rule.id}` })).json(), rule);
      const patched = (await app.inject({ method: 'PATCH', url: `/alert-rules/${rule.id}`, payload: { enabled: false, cooldown_minutes: 0 } })).json();
      assert.equal(patched.enabled, false);
      assert.equal(patched.cooldown_minutes, 0);
      assert.equal(patched.name, 'Grinder drops');
      assert.deepEqual(patched.channel_ids, [channel.id], 'an absent field stays as it was');
      assert.equal((await app.inject({ method: 'PATCH', url: `/alert-rules/${rule.id}`, payload: { name: 'Grinder falls' } })).json().enabled, false);
      const listed = await app.inject({ url: '/alert-rules?enabled=false' });
      assert.equal(listed.headers['x-total-count'], '1');
      // A tag is normalised, a source canonical.
      const tagged = (await post('/alert-rules', { name: 'tag', scope: { type: 'tag', tag: '  Kitchen  ' }, condition: { type: 'back_in_stock' } })).json();
      assert.deepEqual(tagged.scope, { type: 'tag', tag: 'kitchen' });
      assert.deepEqual(tagged.channel_ids, []);
      const sourced = (
        await post('/alert-rules', { name: 'src', scope: { type: 'source', source: 'https://Shop.example/list/?utm_source=x' }, condition: { type: 'product_gone' } })
      ).json();
      assert.deepEqual(sourced.scope, { type: 'source', source: 'https://shop.example/list' });

      const bad: Array<[unknown, string]> = [
        [{ ...body, condition: { type: 'price_drop', baseline: 'previous' } }, '/body/condition'],
        [{ ...body, channel_ids: ['0b8d7e1c-3f4a-4c39-9d7e-5a6b7c8d9e0f'] }, '/body/channel_ids/0'],
        [{ ...body, scope: { type: 'product', product_id: 999999 } }, '/body/scope/product_id'],
        [{ ...body, condition: { type: 'suspicious_discount', days: 7 } }, '/body/condition/days'],
        [{ ...body, digest: 'hourly' }, '/body/digest'],
        [{ ...body, extra: 1 }, '/body/extra'],
      ];
      for (const [payload, path] of bad) {
        const problem = assertProblem(await post('/alert-rules', payload), 422);
        assert.ok(
          problem.errors.some((e: { path: string }) => e.path.startsWith(path)),
          `${path} in ${JSON.stringify(problem.errors)}`,
        );
      }
      assertProblem(await app.inject({ method: 'PATCH', url: `/alert-rules/${rule.id}`, payload: {} }), 422);
      assertProblem(await app.inject({ url: '/alert-rules/0b8d7e1c-3f4a-4c39-9d7e-5a6b7c8d9e0f' }), 404);

      assert.equal((await app.inject({ method: 'DELETE', url: `/channels/${channel.id}` })).statusCode, 200);
      assert.deepEqual((await app.inject({ url: `/alert-rules/${rule.id}` })).json().channel_ids, [], 'the rule no longer names the deleted channel');
      assert.deepEqual((await app.inject({ method: 'DELETE', url: `/alert-rules/${rule.id}` })).json(), { id: rule.id, deleted: true });
      assertProblem(await app.inject({ method: 'DELETE', url: `/alert-rules/${rule.id}` }), 404);
    });

    test('preview: "would have fired N times in the last 30 days" from the stored history, cool-down included', async () => {
      const product = (await post('/products', { title: 'Kettle', price: 100, currency: 'EUR' })).json();
      for (const price of [90, 95, 80, 81, 70]) await app.inject({ method: 'PATCH', url: `/products/${product.id}`, payload: { price } });
      const rule = {
        name: 'Kettle drops',
        scope: { type: 'product', product_id: product.id },
        condition: { type: 'price_drop', baseline: 'previous', min_percent: 5 },
        cooldown_minutes: 0,
      };
      const preview = await post('/alert-rules/preview', rule);
      assert.equal(preview.statusCode, 200, preview.body);
      const answer = preview.json();
      assert.equal(answer.count, 3, 'the drops 100→90, 95→80 and 81→70; not the rises, not 80→81');
      assert.equal(answer.summary, 'This rule would have fired 3 times in the last 30 days.');
      assert.deepEqual(
        answer.firings.map((f: { before: { price: number }; after: { price: number } }) => [f.before.price, f.after.price]),
        [
          [100, 90],
          [95, 80],
          [81, 70],
        ],
      );
      assert.deepEqual(answer.products, [{ product_id: product.id, title: 'Kettle', count: 3 }]);
      // Stored, with a long cool-down: only the first would have gone out.
      const stored = (await post('/alert-rules', { ...rule, cooldown_minutes: 600 })).json();
      const cooled = (await app.inject({ url: `/alert-rules/${stored.id}/preview?days=7` })).json();
      assert.equal(cooled.count, 1);
      assert.equal(cooled.days, 7);
      assert.equal(cooled.summary, 'This rule would have fired once in the last 7 days.');
      assertProblem(await app.inject({ url: `/alert-rules/${stored.id}/preview?days=0` }), 422);
      assert.equal((await app.inject({ url: '/alerts' })).json().length, 0, 'a preview stores no alert');
    });

    test('/openapi.json documents rules, preview, channels, test, alerts, tags and the CSV import from the same schemas', async () => {
      const doc = (await app.inject({ url: '/openapi.json' })).json();
      for (const path of [
        '/alert-rules',
        '/alert-rules/preview',
        '/alert-rules/{id}/preview',
        '/alerts',
        '/alerts/{id}',
        '/channels',
        '/channels/{id}/test',
        '/tags',
        '/products/{id}/tags',
        '/source-tags',
        '/watch-lists/import',
      ]) {
        assert.ok(doc.paths[path], `${path} is documented`);
      }
      assert.ok(doc.paths['/watch-lists/import'].post.requestBody.content['text/csv'], 'the import takes text/csv');
      const channelBody = JSON.stringify(doc.paths['/channels'].post.requestBody.content['application/json'].schema);
      for (const kind of ['email', 'ntfy', 'slack', 'discord', 'telegram', 'teams', 'gotify', 'webhook']) assert.match(channelBody, new RegExp(`"const":"${kind}"|"${kind}"`));
      assert.match(doc.paths['/channels'].post.description, /mailtos:\/\//);
      assert.match(JSON.stringify(doc.paths['/alert-rules'].post.requestBody.content['application/json'].schema), /suspicious_discount/);
    });

    test('GET /alerts is cursor-paged newest first with X-Total-Count and Link', async () => {
      const product = (await post('/products', { title: 'Tin', price: 10, currency: 'EUR' })).json();
      const rule = (
        await post('/alert-rules', { name: 'Tin changes', scope: { type: 'product', product_id: product.id }, condition: { type: 'price_changed' }, cooldown_minutes: 0 })
      ).json();
      for (const price of [11, 12, 13, 14, 15]) await app.inject({ method: 'PATCH', url: `/products/${product.id}`, payload: { price } });
      const first = await app.inject({ url: `/alerts?rule_id=${rule.id}&limit=2` });
      assert.equal(first.headers['x-total-count'], '5');
      const page1 = first.json();
      assert.deepEqual(
        page1.map((a: { after: { price: number } }) => a.after.price),
        [15, 14],
      );
      const next = /<([^>]+)>; rel="next"/.exec(String(first.headers.link))![1]!;
      assert.match(next, new RegExp(`before=${page1[1].id}`));
      const page2 = (await app.inject({ url: next })).json();
      assert.deepEqual(
        page2.map((a: { after: { price: number } }) => a.after.price),
        [13, 12],
      );
      const one = (await app.inject({ url: `/alerts/${page1[0].id}` })).json();
      assert.equal(one.id, page1[0].id);
      assert.deepEqual(one.deliveries, []);
      assertProblem(await app.inject({ url: '/alerts/999999' }), 404);
      assertProblem(await app.inject({ url: '/alerts?before=abc' }), 422);
    });
  });
}
