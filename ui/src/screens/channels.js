// Notification channels: the list (disabled ones with their reason), Test, enable, delete; a form per kind, or an Apprise URL.
import { useState } from 'preact/hooks';
import { api } from '../lib/api.js';
import { Badge, Empty, ErrorBox, Field, html, Loading, time, useApi, useTitle } from '../lib/ui.js';
import { AlertsNav } from './alerts.js';

/** Each kind's fields: [name, label, input type, hint]. */
const KINDS = {
  url: {
    label: 'Apprise URL or webhook URL',
    fields: [['url', 'URL', 'text', 'mailtos://user:pass@example.com?to=me@example.com, ntfys://ntfy.sh/topic, discord://id/token, tgram://token/chat, slack://A/B/C…']],
  },
  ntfy: {
    label: 'ntfy',
    fields: [
      ['server_url', 'Server', 'url', 'https://ntfy.sh'],
      ['topic', 'Topic', 'text'],
      ['token', 'Access token (optional)', 'password'],
    ],
  },
  email: {
    label: 'E-mail (SMTP)',
    fields: [
      ['host', 'SMTP host', 'text'],
      ['port', 'Port', 'number', '587'],
      ['security', 'Security', 'security'],
      ['username', 'User name (optional)', 'text'],
      ['password', 'Password (optional)', 'password'],
      ['from', 'From address', 'email'],
      ['to', 'To (comma-separated)', 'text'],
    ],
  },
  slack: { label: 'Slack', fields: [['webhook_url', 'Incoming webhook URL', 'password']] },
  discord: { label: 'Discord', fields: [['webhook_url', 'Webhook URL', 'password']] },
  telegram: {
    label: 'Telegram',
    fields: [
      ['bot_token', 'Bot token', 'password'],
      ['chat_id', 'Chat id', 'text'],
    ],
  },
  teams: { label: 'Microsoft Teams (Workflows)', fields: [['workflow_url', 'Workflow URL', 'password']] },
  gotify: {
    label: 'Gotify',
    fields: [
      ['server_url', 'Server', 'url'],
      ['token', 'Application token', 'password'],
    ],
  },
  webhook: { label: 'Signed webhook', fields: [['webhook_id', 'Webhook id (see /webhooks)', 'text']] },
};

function configOf(kind, get) {
  if (kind === 'url') return { url: get('url') };
  const config = { kind };
  for (const [name, , type] of KINDS[kind].fields) {
    const value = get(name);
    if (value === '') continue;
    if (type === 'number') config[name] = Number(value);
    else if (name === 'to')
      config.to = value
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean);
    else config[name] = value;
  }
  return { config };
}

function CreateChannel({ onCreated }) {
  const [kind, setKind] = useState('ntfy');
  const [error, setError] = useState(null);
  const [busy, setBusy] = useState(false);
  const submit = async (event) => {
    event.preventDefault();
    const form = event.currentTarget;
    const data = new FormData(form);
    const get = (name) => String(data.get(name) ?? '').trim();
    setBusy(true);
    setError(null);
    try {
      await api('/channels', { method: 'POST', body: { name: get('name'), ...configOf(kind, get) } });
      form.reset();
      onCreated();
    } catch (failure) {
      setError(failure);
    } finally {
      setBusy(false);
    }
  };
  return html`<form class="card" onSubmit=${submit} aria-labelledby="new-channel-h">
    <h2 id="new-channel-h">New channel</h2>
    <div class="row">
      <${Field} label="Name" id="c-name"><input id="c-name" name="name" required maxlength="200" placeholder="My phone" /><//>
      <${Field} label="Kind" id="c-kind">
        <select id="c-kind" value=${kind} onChange=${(e) => setKind(e.currentTarget.value)}>
          ${Object.entries(KINDS).map(([value, k]) => html`<option value=${value}>${k.label}</option>`)}
        </select>
      <//>
    </div>
    <div class="row" key=${kind}>
      ${KINDS[kind].fields.map(([name, label, type, hint]) =>
        type === 'security'
          ? html`<${Field} label=${label} id=${`c-${name}`}><select id=${`c-${name}`} name=${name}><option value="starttls">STARTTLS (587)</option><option value="tls">TLS (465)</option><option value="none">none</option></select><//>`
          : html`<${Field} label=${label} id=${`c-${name}`} hint=${kind === 'url' ? hint : undefined}>
              <input id=${`c-${name}`} name=${name} type=${type} placeholder=${kind === 'url' ? '' : (hint ?? '')} autocomplete="off" aria-describedby=${kind === 'url' ? `c-${name}-hint` : undefined} />
            <//>`,
      )}
    </div>
    <p class="muted">Secrets (passwords, tokens, webhook URLs) are stored and never shown again.</p>
    <${ErrorBox} error=${error} />
    <div class="actions"><button type="submit" class="primary" disabled=${busy}>${busy ? 'Creating…' : 'Create channel'}</button></div>
  </form>`;
}

export function ChannelsScreen() {
  useTitle('Channels');
  const { data, error, loading, reload } = useApi('/channels?limit=500');
  const [actionError, setActionError] = useState(null);
  const [tests, setTests] = useState({});
  const act = async (path, method, body) => {
    setActionError(null);
    try {
      return (await api(path, { method, body })).data;
    } catch (failure) {
      setActionError(failure);
      return undefined;
    }
  };
  const test = async (channel) => {
    setTests((t) => ({ ...t, [channel.id]: { sending: true } }));
    const outcome = await act(`/channels/${channel.id}/test`, 'POST');
    setTests((t) => ({ ...t, [channel.id]: outcome ?? { ok: false, error: 'the request failed' } }));
  };
  return html`
    <h1>Channels</h1>
    <${AlertsNav} current="channels" />
    <${ErrorBox} error=${error} />
    <${ErrorBox} error=${actionError} />
    ${loading && !data ? html`<${Loading} what="Loading channels" />` : ''}
    ${data && data.length === 0 ? html`<${Empty}><p>No channels yet: add one below (e-mail, ntfy, Slack, Discord, Telegram, Teams, Gotify or a webhook).</p><//>` : ''}
    ${
      data &&
      data.length > 0 &&
      html`<div class="table-wrap"><table class="channels">
        <caption class="visually-hidden">Channels</caption>
        <thead><tr><th scope="col">Channel</th><th scope="col">Kind</th><th scope="col">State</th><th scope="col">Actions</th></tr></thead>
        <tbody>
          ${data.map((ch) => {
            const result = tests[ch.id];
            return html`<tr data-channel-id=${ch.id}>
              <td>${ch.name}</td>
              <td>${ch.kind}</td>
              <td>
                ${ch.enabled ? html`<${Badge} value="enabled" />` : html`<${Badge} value="disabled" /> <span class="muted">since ${time(ch.disabled_at)}</span><div class="disabled-reason">${ch.disabled_reason}</div>`}
                ${
                  result &&
                  html`<div class="test-result" role="status">${result.sending ? 'Sending a test message…' : result.ok ? `Test sent (${result.status ?? 'ok'}).` : `Test failed: ${result.error}`}</div>`
                }
              </td>
              <td class="buttons">
                <button type="button" onClick=${() => test(ch)}>Test</button>
                <button type="button" onClick=${async () => (await act(`/channels/${ch.id}`, 'PATCH', { enabled: !ch.enabled })) && reload()}>${ch.enabled ? 'Disable' : 'Enable'}</button>
                <button type="button" class="danger" onClick=${async () => confirm(`Delete the channel "${ch.name}"? Rules stop sending to it.`) && (await act(`/channels/${ch.id}`, 'DELETE')) && reload()}>Delete</button>
              </td>
            </tr>`;
          })}
        </tbody>
      </table></div>`
    }
    <${CreateChannel} onCreated=${reload} />
  `;
}
