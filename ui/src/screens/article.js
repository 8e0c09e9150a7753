// One article: a reader view of its sanitized text, its fields with where each came from, its revisions with their diffs, its events.
import { query } from '../lib/api.js';
import { Badge, Empty, ErrorBox, html, Loading, time, useApi, useTitle } from '../lib/ui.js';
import { Reader } from './article-reader.js';
import { useArticleStyles } from './article-style.js';
import { WatchTags } from './watch-tags.js';

const FIELDS = ['title', 'url', 'description', 'authors', 'published_at', 'modified_at', 'language', 'site_name', 'section', 'tags', 'image_url', 'word_count', 'source_url'];
/** A long unchanged run of a diff shows its ends; the change is what matters. */
const KEEP_CHARS = 160;

function value(v) {
  if (v === null || v === undefined || (Array.isArray(v) && v.length === 0)) return html`<span class="muted">—</span>`;
  return Array.isArray(v) ? v.join(', ') : String(v);
}

function shorten(text) {
  return text.length <= KEEP_CHARS * 2 + 20 ? text : `${text.slice(0, KEEP_CHARS)} … ${text.slice(-KEEP_CHARS)}`;
}

/** A diff as text with insertions and deletions marked (ins/del: read out as such by screen readers). */
function Diff({ parts, label }) {
  return html`<div class="diff" aria-label=${label}>
    ${parts.map((p, i) =>
      p.op === 'insert' ? html`<ins key=${i}>${p.text}</ins>` : p.op === 'delete' ? html`<del key=${i}>${p.text}</del>` : html`<span key=${i}>${shorten(p.text)}</span>`,
    )}
  </div>`;
}

function Revision({ revision: r }) {
  return html`<li>
    <p>
      <strong>Revision ${r.number}</strong> · ${time(r.seen_at)}
      ${r.number === 1 ? ' · first stored' : ` · ${r.changed.join(' and ')} changed`}
      ${r.run_id ? html` · <a href=${`/ui/logs/${r.run_id}`}>the run that saw it</a>` : ''}
    </p>
    ${r.diff?.title ? html`<p>Title:</p><${Diff} parts=${r.diff.title} label=${`Title, revision ${r.number}`} />` : ''}
    ${r.diff?.body ? html`<p>Text:</p><${Diff} parts=${r.diff.body} label=${`Text, revision ${r.number}`} />` : ''}
    ${r.number === 1 ? html`<p class="muted">${r.body === null ? 'A listing entry: its text was not read yet.' : `${r.body.split(/\s+/).length.toLocaleString()} words.`}</p>` : ''}
  </li>`;
}

function describe(event) {
  const d = event.data;
  if (event.type === 'article.created') return d.has_body ? 'first stored, with its text' : 'first stored, as a listing entry';
  if (d.body_filled) return 'its text was read';
  return `${(d.changed ?? []).join(' and ')} changed${d.old_title ? ` (was “${d.old_title}”)` : ''}`;
}

export function ArticleScreen({ params }) {
  useArticleStyles();
  const { id } = params;
  const article = useApi(`/articles/${encodeURIComponent(id)}`);
  const revisions = useApi(`/articles/${encodeURIComponent(id)}/revisions${query({ limit: 100 })}`);
  const events = useApi(`/events${query({ article_id: id, order: 'desc', limit: 100 })}`);
  const a = article.data;
  useTitle(a ? a.title : 'Article');

  if (article.error) return html`<h1>Article ${id}</h1><${ErrorBox} error=${article.error} />`;
  if (!a) return html`<${Loading} what="Loading the article" />`;
  const fields = a.provenance?.fields ?? {};
  const shownRevisions = [...(revisions.data?.revisions ?? [])].reverse();

  return html`
    <p><a href="/ui/articles">← Articles</a></p>
    <h1>${a.title}</h1>
    <p class="article-meta">
      ${[a.site_name, a.authors.length > 0 ? `by ${a.authors.join(', ')}` : null].filter(Boolean).join(' · ')}
      ${a.published_at ? html` · ${time(a.published_at)}` : ''}
      · <a href=${a.url} rel="noopener noreferrer nofollow" target="_blank">Open the original ↗</a>
    </p>

    <section aria-labelledby="text-h">
      <h2 id="text-h">Text</h2>
      ${a.body === null ? html`<${Empty}><p>Only a listing's entry so far: a crawl that follows it, or a scrape of <a href=${a.url} rel="noopener noreferrer nofollow" target="_blank">its page</a>, reads the text.</p><//>` : html`<${Reader} bodyHtml=${a.body_html} body=${a.body} />`}
    </section>

    <section aria-labelledby="fields-h">
      <h2 id="fields-h">Fields and where they came from</h2>
      ${a.provenance ? html`<p class="muted">Read from <a href=${a.provenance.page_url} rel="noopener noreferrer nofollow" target="_blank">${a.provenance.page_url}</a>, a page classified as <em>${a.provenance.page_type}</em>. Last seen ${time(a.last_seen_at)}.</p>` : ''}
      <div class="table-wrap">
        <table class="fields">
          <thead><tr><th scope="col">Field</th><th scope="col">Value</th><th scope="col">Source</th><th scope="col">Where on the page</th></tr></thead>
          <tbody>
            ${FIELDS.map(
              (name) => html`<tr key=${name}>
                <th scope="row">${name === 'tags' ? "the page's keywords" : name.replace(/_/g, ' ')}</th>
                <td class="value">${value(a[name])}</td>
                <td>${fields[name]?.source ?? ''}</td>
                <td><code>${fields[name]?.locator ?? ''}</code></td>
              </tr>`,
            )}
            <tr><th scope="row">text</th><td class="value">${a.word_count === null ? value(null) : `${a.word_count.toLocaleString()} words`}</td><td>${fields.body?.source ?? ''}</td><td><code>${fields.body?.locator ?? ''}</code></td></tr>
          </tbody>
        </table>
      </div>
    </section>

    <${WatchTags} kind="articles" id=${a.id} />

    <section aria-labelledby="revisions-h">
      <h2 id="revisions-h">Revisions</h2>
      <${ErrorBox} error=${revisions.error} />
      ${revisions.loading && !revisions.data ? html`<${Loading} what="Loading the revisions" />` : ''}
      ${revisions.data && html`<p class="muted">${revisions.data.total} revision${revisions.data.total === 1 ? '' : 's'}, newest first: a new one each time the title or the text changed.</p>`}
      <ol class="revisions" reversed>${shownRevisions.map((r) => html`<${Revision} key=${r.number} revision=${r} />`)}</ol>
    </section>

    <section aria-labelledby="events-h">
      <h2 id="events-h">Events</h2>
      <${ErrorBox} error=${events.error} />
      ${events.data && events.data.length === 0 ? html`<${Empty}><p>No events for this article.</p><//>` : ''}
      ${
        events.data &&
        events.data.length > 0 &&
        html`<ol class="events" aria-label="Events, newest first">
          ${events.data.map((e) => html`<li key=${e.id}><${Badge} value=${e.type} /> <span>${describe(e)}</span><span class="muted"> · ${time(e.created_at)}</span></li>`)}
        </ol>`
      }
    </section>
  `;
}
