// The dashboard: navigation, the API key of this tab, and the screen the URL names.
import { render } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import { apiKey, onApiKeyChange, setApiKey } from './lib/api.js';
import { interceptLinks, match, useRoute } from './lib/router.js';
import { html } from './lib/ui.js';
import { RulesScreen } from './screens/alert-rules.js';
import { AlertsScreen } from './screens/alerts.js';
import { ChannelsScreen } from './screens/channels.js';
import { ArticleScreen } from './screens/article.js';
import { ArticlesScreen } from './screens/articles.js';
import { EventsScreen } from './screens/events.js';
import { JobScreen, JobsScreen } from './screens/jobs.js';
import { LogScreen, LogsScreen } from './screens/logs.js';
import { ProductScreen } from './screens/product.js';
import { ProductsScreen } from './screens/products.js';
import { SchedulesScreen } from './screens/schedules.js';
import { SiteRulesScreen } from './screens/site-rules.js';
import { ScrapeScreen } from './screens/scrape.js';
import { TagsScreen } from './screens/tags.js';

const SCREENS = [
  { pattern: '/', screen: ProductsScreen, nav: 'products' },
  { pattern: '/products', screen: ProductsScreen, nav: 'products' },
  { pattern: '/products/:id', screen: ProductScreen, nav: 'products' },
  { pattern: '/articles', screen: ArticlesScreen, nav: 'articles' },
  { pattern: '/articles/:id', screen: ArticleScreen, nav: 'articles' },
  { pattern: '/scrape', screen: ScrapeScreen, nav: 'scrape' },
  { pattern: '/jobs', screen: JobsScreen, nav: 'jobs' },
  { pattern: '/jobs/:id', screen: JobScreen, nav: 'jobs' },
  { pattern: '/schedules', screen: SchedulesScreen, nav: 'schedules' },
  { pattern: '/events', screen: EventsScreen, nav: 'events' },
  { pattern: '/logs', screen: LogsScreen, nav: 'logs' },
  { pattern: '/logs/:id', screen: LogScreen, nav: 'logs' },
  { pattern: '/alerts', screen: AlertsScreen, nav: 'alerts' },
  { pattern: '/rules', screen: RulesScreen, nav: 'alerts' },
  { pattern: '/channels', screen: ChannelsScreen, nav: 'alerts' },
  { pattern: '/tags', screen: TagsScreen, nav: 'tags' },
  { pattern: '/site-rules', screen: SiteRulesScreen, nav: 'site-rules' },
];

const NAV = [
  ['products', '/ui/products', 'Products'],
  ['articles', '/ui/articles', 'Articles'],
  ['scrape', '/ui/scrape', 'Scrape'],
  ['jobs', '/ui/jobs', 'Jobs'],
  ['schedules', '/ui/schedules', 'Schedules'],
  ['events', '/ui/events', 'Events'],
  ['logs', '/ui/logs', 'Logs'],
  ['tags', '/ui/tags', 'Tags'],
  ['site-rules', '/ui/site-rules', 'Site rules'],
  ['alerts', '/ui/alerts', 'Alerts'],
];

function KeyControl() {
  const [key, setKey] = useState(apiKey());
  const [open, setOpen] = useState(false);
  const input = useRef(null);
  useEffect(() => onApiKeyChange(setKey), []);
  useEffect(() => {
    if (open) input.current?.focus();
  }, [open]);
  const save = (event) => {
    event.preventDefault();
    setApiKey(new FormData(event.currentTarget).get('key').trim());
    setOpen(false);
  };
  return html`<div class="key">
    <button type="button" aria-expanded=${open} aria-controls="key-form" onClick=${() => setOpen(!open)}>
      API key${key ? ' ✓' : ''}
    </button>
    ${
      open &&
      html`<form id="key-form" class="key-form" onSubmit=${save}>
      <label for="api-key">API key (kept for this tab only)</label>
      <input id="api-key" name="key" type="password" autocomplete="off" value=${key} ref=${input} />
      <button type="submit">Save</button>
      ${
        key &&
        html`<button
          type="button"
          onClick=${() => {
            setApiKey('');
            setOpen(false);
          }}
        >
          Forget
        </button>`
      }
    </form>`
    }
  </div>`;
}

function App() {
  const route = useRoute();
  // A new key reloads the screen: what it could not read before may now answer.
  const [keyRound, setKeyRound] = useState(0);
  useEffect(() => onApiKeyChange(() => setKeyRound((n) => n + 1)), []);
  const found = SCREENS.map((s) => ({ ...s, params: match(s.pattern, route.path) })).find((s) => s.params !== null);
  const main = useRef(null);
  // A new screen moves focus to its content, so keyboard and screen-reader users land on it.
  useEffect(() => {
    main.current?.focus({ preventScroll: true });
  }, [route.path]);
  return html`
    <a class="skip" href="#main">Skip to content</a>
    <header class="top">
      <a class="brand" href="/ui/products">Data aggregator</a>
      <nav aria-label="Screens">
        <ul>
          ${NAV.map(([id, href, label]) => html`<li><a href=${href} aria-current=${found?.nav === id ? 'page' : undefined}>${label}</a></li>`)}
        </ul>
      </nav>
      <${KeyControl} />
    </header>
    <main id="main" tabindex="-1" ref=${main}>
      ${
        found
          ? html`<${found.screen} params=${found.params} query=${route.params} key=${`${route.path} ${keyRound}`} />`
          : html`<h1>Not found</h1><p>There is no screen at this address. <a href="/ui/products">Go to the products</a>.</p>`
      }
    </main>
    <footer class="bottom"><a href="/docs">API docs</a> · <a href="/health">Health</a></footer>
  `;
}

const root = document.getElementById('app');
root.textContent = '';
interceptLinks(document.body);
render(html`<${App} />`, root);
