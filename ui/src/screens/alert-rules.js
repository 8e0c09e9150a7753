// Alert rules: the list with enable/disable, preview and delete; the form to make one, with its preview.
import { useState } from 'preact/hooks';
import { api } from '../lib/api.js';
import { Badge, Empty, ErrorBox, html, Loading, useApi, useTitle } from '../lib/ui.js';
import { AlertsNav } from './alerts.js';
import { describeRule, RuleForm } from './rule-form.js';

export function RulesScreen() {
  useTitle('Alert rules');
  const { data, error, loading, reload } = useApi('/alert-rules?limit=500');
  const channels = useApi('/channels?limit=500');
  const [actionError, setActionError] = useState(null);
  const [previews, setPreviews] = useState({});
  const names = new Map((channels.data ?? []).map((c) => [c.id, c.name]));
  const act = async (path, method, body) => {
    setActionError(null);
    try {
      const { data: answer } = await api(path, { method, body });
      return answer;
    } catch (failure) {
      setActionError(failure);
      return undefined;
    }
  };
  const preview = async (rule) => {
    const answer = await act(`/alert-rules/${rule.id}/preview?days=30`, 'GET');
    if (answer) setPreviews((p) => ({ ...p, [rule.id]: answer.summary }));
  };
  return html`
    <h1>Alert rules</h1>
    <${AlertsNav} current="rules" />
    <${ErrorBox} error=${error} />
    <${ErrorBox} error=${actionError} />
    ${loading && !data ? html`<${Loading} what="Loading rules" />` : ''}
    ${data && data.length === 0 ? html`<${Empty}><p>No rules yet: create one below, or use "Alert me" on a product.</p><//>` : ''}
    ${
      data &&
      data.length > 0 &&
      html`<div class="table-wrap"><table class="rules">
        <caption class="visually-hidden">Alert rules</caption>
        <thead><tr><th scope="col">Rule</th><th scope="col">Watches</th><th scope="col">When</th><th scope="col">Sends to</th><th scope="col">Actions</th></tr></thead>
        <tbody>
          ${data.map((rule) => {
            const { condition, scope } = describeRule(rule);
            return html`<tr data-rule-id=${rule.id}>
              <td>${rule.name} ${rule.enabled ? '' : html`<${Badge} value="paused" />`}${previews[rule.id] ? html`<div class="preview-line" role="status">${previews[rule.id]}</div>` : ''}</td>
              <td>${scope}</td>
              <td>${condition}<div class="muted">cool-down ${rule.cooldown_minutes} min${rule.digest === 'immediate' ? '' : ` · ${rule.digest} digest`}</div></td>
              <td>${rule.channel_ids.length === 0 ? html`<span class="muted">recorded only</span>` : rule.channel_ids.map((id) => names.get(id) ?? id).join(', ')}</td>
              <td class="buttons">
                <button type="button" onClick=${() => preview(rule)}>Preview</button>
                <button type="button" onClick=${async () => (await act(`/alert-rules/${rule.id}`, 'PATCH', { enabled: !rule.enabled })) && reload()}>${rule.enabled ? 'Pause' : 'Resume'}</button>
                <button type="button" class="danger" onClick=${async () => confirm(`Delete the rule "${rule.name}"? Its alerts stay in the history.`) && (await act(`/alert-rules/${rule.id}`, 'DELETE')) && reload()}>Delete</button>
              </td>
            </tr>`;
          })}
        </tbody>
      </table></div>`
    }
    <${RuleForm} onCreated=${reload} />
  `;
}
