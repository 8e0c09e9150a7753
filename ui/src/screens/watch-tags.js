// On a product's or an article's screen: its watch-list tags (add, remove), each linking to its list.
import { useState } from 'preact/hooks';
import { api } from '../lib/api.js';
import { ErrorBox, html, useApi } from '../lib/ui.js';

/** `kind` is 'products' or 'articles': the API's collection and the dashboard's list screen alike. */
export function WatchTags({ kind, id, initial = [] }) {
  const base = `/${kind}/${id}/tags`;
  const { data, reload } = useApi(base);
  const [error, setError] = useState(null);
  const tags = data?.tags ?? initial;
  const change = async (method, path, body) => {
    setError(null);
    try {
      await api(path, { method, body });
      reload();
      return true;
    } catch (failure) {
      setError(failure);
      return false;
    }
  };
  const add = async (event) => {
    event.preventDefault();
    const form = event.currentTarget;
    const names = String(new FormData(form).get('tag') ?? '')
      .split(',')
      .map((t) => t.trim())
      .filter(Boolean);
    if (names.length > 0 && (await change('POST', base, { tags: names }))) form.reset();
  };
  return html`<section aria-labelledby="tags-h">
    <h2 id="tags-h">Tags</h2>
    <ul class="tag-list">
      ${tags.length === 0 ? html`<li class="muted">No tags.</li>` : ''}
      ${tags.map(
        (t) => html`<li class="tag">
          <a href=${`/ui/${kind}?tag=${encodeURIComponent(t)}`}>${t}</a>
          <button type="button" class="small" onClick=${() => change('DELETE', `${base}/${encodeURIComponent(t)}`)}>Remove<span class="visually-hidden"> tag ${t}</span></button>
        </li>`,
      )}
    </ul>
    <form class="inline" onSubmit=${add}>
      <label for="add-tag">Add tags (comma-separated)</label>
      <input id="add-tag" name="tag" placeholder="watch-list" />
      <button type="submit">Add</button>
    </form>
    <${ErrorBox} error=${error} />
  </section>`;
}
