// Articles: full-text search, filters, sort and paging, all in the URL; each opens its article; the same selection as feeds.
import { query } from '../lib/api.js';
import { navigate } from '../lib/router.js';
import { Empty, ErrorBox, Field, html, Loading, Pager, usePaged, time, useTitle } from '../lib/ui.js';
import { useArticleStyles } from './article-style.js';

const LIMIT = 20;
const FILTERS = ['q', 'site', 'author', 'language', 'tag', 'published_since', 'published_before', 'has_body'];
const SORTS = [
  ['-published_at', 'Newest first'],
  ['published_at', 'Oldest first'],
  ['-id', 'Latest stored first'],
  ['id', 'First stored first'],
];

/** `date` inputs give a day; the API takes an instant: the start of that day, UTC. */
const toIso = (day) => (day ? `${day}T00:00:00Z` : '');
const toDay = (iso) => (iso ? iso.slice(0, 10) : '');

function ArticleItem({ article: a }) {
  const meta = [
    a.site_name,
    a.authors.length > 0 ? `by ${a.authors.join(', ')}` : null,
    a.language,
    a.body === null ? 'listing entry, not read yet' : `${a.word_count?.toLocaleString() ?? '?'} words`,
  ].filter(Boolean);
  return html`<li>
    <h2><a href=${`/ui/articles/${a.id}`}>${a.title}</a></h2>
    <p class="article-meta">${a.published_at ? html`${time(a.published_at)} · ` : ''}${meta.join(' · ')}</p>
    ${a.description ? html`<p>${a.description}</p>` : ''}
  </li>`;
}

export function ArticlesScreen({ query: params }) {
  useTitle('Articles');
  useArticleStyles();

  const sort = params.get('sort') ?? '';
  const filters = Object.fromEntries(FILTERS.map((name) => [name, params.get(name) ?? '']));
  const { data, error, loading, offset, total } = usePaged('/articles', params, { ...filters, sort }, LIMIT);
  const filtered = FILTERS.some((name) => filters[name]);
  const feedQuery = query(filters);

  const go = (changes) => {
    const next = { ...filters, sort, offset: 0, ...changes };
    if (!next.offset) delete next.offset;
    navigate(`/articles${query(next)}`);
  };
  const apply = (event) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    const values = Object.fromEntries(FILTERS.map((name) => [name, String(form.get(name) ?? '').trim()]));
    values.published_since = toIso(values.published_since);
    values.published_before = toIso(values.published_before);
    go({ ...values, sort: String(form.get('sort') ?? '') });
  };

  // The filter form is uncontrolled, started from the URL (keyed by it), like the products screen.
  return html`
    <h1>Articles</h1>
    <form class="filters" onSubmit=${apply} aria-label="Search and filters" key=${params.toString()}>
      <${Field} label="Search" id="q" hint=${'Words of the title or text, read in each article\'s language; "a phrase", -excluded'}>
        <input id="q" name="q" type="search" defaultValue=${filters.q} aria-describedby="q-hint" />
      <//>
      <${Field} label="Site" id="site" hint="A host (its subdomains too) or the site's name"><input id="site" name="site" defaultValue=${filters.site} aria-describedby="site-hint" /><//>
      <${Field} label="Author" id="author"><input id="author" name="author" defaultValue=${filters.author} /><//>
      <${Field} label="Language" id="language" hint="en, de, pt-BR…">
        <input id="language" name="language" defaultValue=${filters.language} pattern="[A-Za-z]{2,3}(-[A-Za-z0-9]{1,8})*" aria-describedby="language-hint" />
      <//>
      <${Field} label="Tag" id="tag" hint="A watch list"><input id="tag" name="tag" defaultValue=${filters.tag} aria-describedby="tag-hint" /><//>
      <${Field} label="Published from" id="published_since"><input id="published_since" name="published_since" type="date" defaultValue=${toDay(filters.published_since)} /><//>
      <${Field} label="Published before" id="published_before"><input id="published_before" name="published_before" type="date" defaultValue=${toDay(filters.published_before)} /><//>
      <${Field} label="Text" id="has_body">
        <select id="has_body" name="has_body">
          <option value="">Any</option>
          <option value="true" selected=${filters.has_body === 'true'}>Read</option>
          <option value="false" selected=${filters.has_body === 'false'}>Listing entries not read yet</option>
        </select>
      <//>
      <${Field} label="Sort" id="sort">
        <select id="sort" name="sort">
          <option value="">Best match / newest first</option>
          ${SORTS.map(([value, label]) => html`<option value=${value} selected=${value === sort}>${label}</option>`)}
        </select>
      <//>
      <div class="actions">
        <button type="submit" class="primary">Apply</button>
        ${filtered && html`<button type="button" onClick=${() => navigate('/articles', { replace: true })}>Clear filters</button>`}
      </div>
    </form>
    <p class="feeds">
      Follow ${filtered ? 'this selection' : 'every article'} in a feed reader:
      <a href=${`/articles/feed.xml${feedQuery}`}>Atom</a> · <a href=${`/articles/feed.rss${feedQuery}`}>RSS</a> · <a href=${`/articles/feed.json${feedQuery}`}>JSON Feed</a>
    </p>
    <${ErrorBox} error=${error} />
    ${loading && !data ? html`<${Loading} what="Loading articles" />` : ''}
    ${
      data && data.length === 0
        ? html`<${Empty}>
          ${
            filtered
              ? html`<p>No article matches these filters.</p>`
              : html`<p>No articles yet. <a href="/ui/scrape">Scrape</a> a news story or a blog's front page to collect some.</p>`
          }
        <//>`
        : ''
    }
    ${
      data &&
      data.length > 0 &&
      html`<p class="muted" aria-live="polite">${total?.toLocaleString()} article${total === 1 ? '' : 's'}</p>
      <ol class="article-list">
        ${data.map((a) => html`<${ArticleItem} key=${a.id} article=${a} />`)}
      </ol>
      <${Pager} offset=${offset} limit=${LIMIT} total=${total} onPage=${(at) => go({ offset: at })} />`
    }
  `;
}
