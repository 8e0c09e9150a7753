// Scrape: a URL, a mode, selectors, crawl options; Explain shows what the extractor would decide, Run starts a job and follows it live.
import { useEffect, useState } from 'preact/hooks';
import { api } from '../lib/api.js';
import { Badge, Empty, ErrorBox, Field, html, money, useTitle } from '../lib/ui.js';
import { JobProgress } from './jobs.js';
import { PinRule } from './pin-rule.js';

const lines = (text) =>
  String(text ?? '')
    .split(/[\n,]/)
    .map((s) => s.trim())
    .filter(Boolean);

/** The POST /jobs (or /scrape/explain) body the form describes; empty fields are left out. */
function requestFrom(form) {
  const get = (name) => String(form.get(name) ?? '').trim();
  const body = {};
  if (get('url')) body.url = get('url');
  if (get('mode') === 'dynamic') body.use_selenium = true;
  if (get('max_pages')) body.max_pages = Number(get('max_pages'));
  if (get('wait_for')) body.wait_for = get('wait_for');
  if (get('timeout_ms')) body.timeout_ms = Number(get('timeout_ms'));
  const selectors = Object.fromEntries(['item', 'title', 'price', 'description', 'link'].map((k) => [k, get(`sel_${k}`)]).filter(([, v]) => v));
  if (Object.keys(selectors).length > 0) body.selectors = selectors;
  if (form.get('crawl') === 'on') {
    body.crawl = { strategy: get('strategy') || 'same-host', sitemap: form.get('sitemap') === 'on' };
    if (get('crawl_max_pages')) body.crawl.max_pages = Number(get('crawl_max_pages'));
    if (get('max_depth')) body.crawl.max_depth = Number(get('max_depth'));
    if (lines(get('include')).length) body.crawl.include = lines(get('include'));
    if (lines(get('exclude')).length) body.crawl.exclude = lines(get('exclude'));
  }
  return body;
}

function Explanation({ answer }) {
  return html`<section aria-labelledby="explain-h" class="card">
    <h2 id="explain-h">What a scrape would do</h2>
    <p>
      ${answer.pages.length} page${answer.pages.length === 1 ? '' : 's'} read with the ${answer.renderer === 'browser' ? 'browser' : 'HTTP client'};
      <strong> ${answer.count} product${answer.count === 1 ? '' : 's'}</strong> would be stored. Nothing was stored now.
    </p>
    ${answer.warning ? html`<p class="warning">${answer.warning}</p>` : ''}
    ${(answer.site_rule_warnings ?? []).map((w) => html`<p class="warning">${w}</p>`)}
    ${answer.pages.map(
      (page, pi) => html`<div class="explained-page">
        <h3><${Badge} value=${page.page_type.type} /> <span class="url">${page.url}</span></h3>
        <ul>${page.page_type.reasons.map((reason) => html`<li>${reason}</li>`)}</ul>
        ${page.dropped.length > 0 && html`<details><summary>${page.dropped.length} candidate${page.dropped.length === 1 ? '' : 's'} left out</summary><pre>${JSON.stringify(page.dropped, null, 2)}</pre></details>`}
        ${page.items.slice(0, 1).map((item, i) => html`<${PinRule} page=${page} item=${item} index=${`${pi}-${i}`} />`)}
      </div>`,
    )}
    ${
      answer.products.length > 0 &&
      html`<div class="table-wrap"><table>
      <thead><tr><th scope="col">Title</th><th scope="col" class="num">Price</th><th scope="col">Availability</th><th scope="col">Price from</th></tr></thead>
      <tbody>
        ${answer.products.map(
          (p) => html`<tr><td>${p.title}</td><td class="num">${money(p.price, p.currency)}</td><td><${Badge} value=${p.availability} /></td>
            <td>${p.provenance?.price ? html`${p.provenance.price.source} <code>${p.provenance.price.locator}</code>` : '—'}</td></tr>`,
        )}
      </tbody>
    </table></div>`
    }
    <details><summary>The whole answer (JSON)</summary><pre>${JSON.stringify(answer, null, 2)}</pre></details>
  </section>`;
}

/** The products a finished job's log holds. */
function FoundProducts({ job }) {
  const [log, setLog] = useState(null);
  const [error, setError] = useState(null);
  const logId = job.kind === 'crawl' ? job.id : job.log_ids[job.log_ids.length - 1];
  useEffect(() => {
    if (!logId) return;
    api(`/scrape-logs/${logId}`).then(({ data }) => setLog(data), setError);
  }, [logId]);
  if (error) return html`<${ErrorBox} error=${error} />`;
  if (!log) return null;
  if (log.products.length === 0) return html`<${Empty}><p>The run found no products on ${log.source_url}.</p><//>`;
  return html`<section aria-labelledby="found-h">
    <h2 id="found-h">${log.count} product${log.count === 1 ? '' : 's'} found</h2>
    <div class="table-wrap"><table class="found">
      <thead><tr><th scope="col">Title</th><th scope="col" class="num">Price</th><th scope="col">Availability</th></tr></thead>
      <tbody>
        ${log.products.map(
          (p) => html`<tr><td>${p.url ? html`<a href=${p.url} rel="noopener noreferrer" target="_blank">${p.title}</a>` : p.title}</td>
            <td class="num">${money(p.price, p.currency)}</td><td><${Badge} value=${p.availability ?? null} /></td></tr>`,
        )}
      </tbody>
    </table></div>
    <p><a href=${`/ui/products?source=${encodeURIComponent(job.source_url)}`}>These products in the product list</a> · <a href=${`/ui/logs/${logId}`}>the run's log</a></p>
  </section>`;
}

export function ScrapeScreen() {
  useTitle('Scrape');
  const [busy, setBusy] = useState(null);
  const [error, setError] = useState(null);
  const [explained, setExplained] = useState(null);
  const [job, setJob] = useState(null);
  const [crawl, setCrawl] = useState(false);

  const submit = async (event) => {
    event.preventDefault();
    const action = event.submitter?.value ?? 'run';
    const body = requestFrom(new FormData(event.currentTarget));
    setBusy(action);
    setError(null);
    try {
      if (action === 'explain') {
        const { crawl: _ignored, ...single } = body;
        setJob(null);
        setExplained((await api('/scrape/explain', { method: 'POST', body: single })).data);
      } else {
        setExplained(null);
        setJob((await api('/jobs', { method: 'POST', body })).data);
      }
    } catch (failure) {
      setError(failure);
    } finally {
      setBusy(null);
    }
  };

  return html`
    <h1>Scrape</h1>
    <form class="scrape" onSubmit=${submit} aria-describedby="scrape-help">
      <p id="scrape-help" class="muted">Leave the URL empty to run the demo scraper. Explain shows what a scrape would find and why, without storing anything.</p>
      <${Field} label="URL" id="url"><input id="url" name="url" type="url" placeholder="https://shop.example/catalogue/" /><//>
      <fieldset>
        <legend>Mode</legend>
        <label><input type="radio" name="mode" value="static" checked /> Static (HTTP)</label>
        <label><input type="radio" name="mode" value="dynamic" /> Dynamic (headless browser, for pages built by scripts)</label>
      </fieldset>
      <div class="row">
        <${Field} label="Pages to follow (next links)" id="max_pages"><input id="max_pages" name="max_pages" type="number" min="1" max="100" placeholder="1" /><//>
        <${Field} label="Wait for (dynamic, CSS)" id="wait_for"><input id="wait_for" name="wait_for" placeholder=".product" /><//>
        <${Field} label="Timeout per page (ms)" id="timeout_ms"><input id="timeout_ms" name="timeout_ms" type="number" min="100" max="120000" placeholder="15000" /><//>
      </div>
      <details>
        <summary>Selectors (optional: the extractor finds products by itself)</summary>
        <div class="row">
          ${['item', 'title', 'price', 'description', 'link'].map(
            (k) => html`<${Field} label=${`${k[0].toUpperCase()}${k.slice(1)} selector`} id=${`sel_${k}`}><input id=${`sel_${k}`} name=${`sel_${k}`} /><//>`,
          )}
        </div>
      </details>
      <fieldset>
        <legend>Whole site</legend>
        <label><input type="checkbox" name="crawl" checked=${crawl} onChange=${(e) => setCrawl(e.currentTarget.checked)} /> Crawl the site from this URL</label>
        ${
          crawl &&
          html`<div class="row">
          <${Field} label="Follow links" id="strategy">
            <select id="strategy" name="strategy">
              <option value="same-host">on the same host</option>
              <option value="same-domain">on the same domain</option>
              <option value="listed">none (the URL and its sitemap)</option>
            </select>
          <//>
          <${Field} label="Most pages" id="crawl_max_pages"><input id="crawl_max_pages" name="crawl_max_pages" type="number" min="1" max="100000" placeholder="100" /><//>
          <${Field} label="Most link hops" id="max_depth"><input id="max_depth" name="max_depth" type="number" min="0" max="100" placeholder="5" /><//>
          <${Field} label="Only paths matching (globs)" id="include" hint="One per line, e.g. /catalogue/**"><textarea id="include" name="include" rows="2"></textarea><//>
          <${Field} label="Skip paths matching (globs)" id="exclude"><textarea id="exclude" name="exclude" rows="2"></textarea><//>
          <label><input type="checkbox" name="sitemap" /> Also start from the sitemap</label>
        </div>`
        }
      </fieldset>
      <div class="actions">
        <button type="submit" name="action" value="explain" disabled=${busy !== null}>${busy === 'explain' ? 'Explaining…' : 'Explain'}</button>
        <button type="submit" name="action" value="run" class="primary" disabled=${busy !== null}>${busy === 'run' ? 'Starting…' : 'Run'}</button>
      </div>
    </form>
    <${ErrorBox} error=${error} />
    ${explained && html`<${Explanation} answer=${explained} />`}
    ${job && html`<${JobProgress} job=${job} onEnd=${setJob} />`}
    ${job && job.status === 'succeeded' && html`<${FoundProducts} job=${job} />`}
  `;
}
