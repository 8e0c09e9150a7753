// Explain's "pin": pick the right candidate for a field of a page's product and save it as the site's rule in one step.
import { useState } from 'preact/hooks';
import { ErrorBox, html } from '../lib/ui.js';
import { pinField, RULE_FIELDS } from './site-rules.js';

/** The explain field each rule field reads (the rule's `image` is the item's `image_url`). */
const ITEM_FIELD = { image: 'image_url' };

/** A candidate's locator as a rule: a JSON path where it names one in the page's JSON, else a CSS selector; null for the page's URL. */
export function whereOf(candidate) {
  if (candidate.source === 'url') return null;
  const json = /^(?:ld\+json\[\d+\]|script\[\d+\]\S*)(?: \S+)? (\$\S*)$/.exec(candidate.locator);
  if (json) return { json_path: json[1] };
  return candidate.locator.startsWith('the ') ? null : { selector: candidate.locator };
}

const shown = (value) => (typeof value === 'string' && value.length > 60 ? `${value.slice(0, 57)}…` : String(value));

export function PinRule({ page, item, index }) {
  const host = new URL(page.url).hostname;
  const [saved, setSaved] = useState(null);
  const [error, setError] = useState(null);
  const rows = RULE_FIELDS.flatMap(([name, label]) => {
    const decision = item.fields[ITEM_FIELD[name] ?? name];
    if (!decision) return [];
    const candidates = [decision.chosen, ...decision.others].filter((c) => whereOf(c) !== null);
    return candidates.length === 0 ? [] : [{ name, label, candidates }];
  });
  if (rows.length === 0) return null;
  const pin = async (event) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    const name = event.submitter?.value;
    const row = rows.find((r) => r.name === name);
    const candidate = row.candidates[Number(form.get(`${name}_pick`) ?? 0)];
    setError(null);
    setSaved(null);
    try {
      const rule = await pinField(host, name, whereOf(candidate));
      setSaved({ label: row.label, rule });
    } catch (failure) {
      setError(failure);
    }
  };
  const id = `pin-${index}`;
  return html`<form class="pin-rule" onSubmit=${pin} aria-labelledby=${`${id}-h`}>
    <h4 id=${`${id}-h`}>Pin the right value for ${host}</h4>
    <div class="table-wrap"><table>
      <thead><tr><th scope="col">Field</th><th scope="col">Candidate</th><th scope="col">Action</th></tr></thead>
      <tbody>
        ${rows.map(
          (row) => html`<tr>
            <th scope="row">${row.label}</th>
            <td><select name=${`${row.name}_pick`} aria-label=${`${row.label}: candidate`}>
              ${row.candidates.map((c, i) => html`<option value=${i}>${shown(c.value)} — ${c.source} ${c.locator}${i === 0 ? ' (chosen)' : ''}</option>`)}
            </select></td>
            <td><button type="submit" value=${row.name}>Pin ${row.label.toLowerCase()}</button></td>
          </tr>`,
        )}
      </tbody>
    </table></div>
    <${ErrorBox} error=${error} />
    ${saved && html`<p role="status">Pinned ${saved.label.toLowerCase()} for ${saved.rule.host_pattern}: every scrape of it now reads it there. <a href="/ui/site-rules">Site rules</a></p>`}
  </form>`;
}
