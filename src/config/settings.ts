// Every environment variable the services read: its group, default and meaning. The source of docs/configuration.md and .env.example.

export type SettingGroup = 'http' | 'auth' | 'database' | 'scrape' | 'browser' | 'jobs' | 'tracking' | 'alerts' | 'posts' | 'auxiliary' | 'logging';

export interface Setting {
  name: string;
  group: SettingGroup;
  /** One of the settings people change; the rest are tuning, best left at their defaults. */
  everyday: boolean;
  /** The default as documented (a value, or a phrase: "unset", "auto-detect"). */
  default: string;
  meaning: string;
}

export const GROUPS: Record<SettingGroup, string> = {
  http: 'HTTP: where the services listen and what a request may be',
  auth: 'Access: API key, CORS and rate limits',
  database: 'Databases: PostgreSQL or the embedded PGlite, and the scrape log store',
  scrape: 'Scraping: targets, timeouts, limits and politeness',
  browser: 'Headless browser (dynamic mode)',
  jobs: 'Jobs and workers',
  tracking: 'Price history, events and webhooks',
  alerts: 'Alerts and notification channels',
  posts: 'The external placeholder posts API',
  auxiliary: 'The auxiliary service',
  logging: 'Logging',
};

export const SETTINGS: readonly Setting[] = [
  { name: 'HOST', group: 'http', everyday: true, default: '127.0.0.1', meaning: 'listen address of both services' },
  { name: 'PORT', group: 'http', everyday: true, default: '8000', meaning: 'main service port' },
  {
    name: 'ALLOWED_HOSTS',
    group: 'http',
    everyday: true,
    default: 'unset',
    meaning:
      'comma-separated host names the services answer to besides IP addresses, `localhost` and the names in `HOST` and `MAIN_SERVICE_URL` (421 otherwise: a guard against DNS rebinding); set it when they are reached under a name, e.g. behind a proxy; `*` turns the check off',
  },
  {
    name: 'STREAMS_PER_CLIENT',
    group: 'http',
    everyday: false,
    default: '10',
    meaning: 'live streams (`/events/stream`, `/jobs/{id}/events`) one client address may hold open at once (429 beyond)',
  },
  { name: 'STREAMS_MAX', group: 'http', everyday: false, default: '200', meaning: 'live streams open at once in all (503 beyond)' },
  {
    name: 'STREAM_STALL_MS',
    group: 'http',
    everyday: false,
    default: '30000',
    meaning: 'how long a live stream waits for a client that stopped reading before it closes the stream (the client resumes with `Last-Event-ID`)',
  },
  { name: 'REQUEST_TIMEOUT_MS', group: 'http', everyday: false, default: '120000', meaning: 'longest a client may take to send a request' },
  { name: 'BODY_LIMIT_BYTES', group: 'http', everyday: false, default: '1048576', meaning: 'largest request body (413 beyond)' },
  {
    name: 'TRUST_PROXY',
    group: 'http',
    everyday: false,
    default: 'false',
    meaning: 'whose `X-Forwarded-For` names the client (for rate limits and logs): `true`, a hop count, or comma-separated addresses/CIDRs of your proxies',
  },

  {
    name: 'API_KEY',
    group: 'auth',
    everyday: true,
    default: 'unset',
    meaning:
      'when set, every write needs `Authorization: Bearer <key>` or `X-API-Key: <key>` (401 otherwise), and so do the operational reads (scrape logs, metrics, jobs, schedules, webhooks); product reads stay open (see `API_KEY_READS`)',
  },
  {
    name: 'API_KEY_READS',
    group: 'auth',
    everyday: false,
    default: 'false',
    meaning: "with `API_KEY`: `true` makes every read need the key too, except `/`, `/health`, the docs and the dashboard's files",
  },
  { name: 'CORS_ORIGINS', group: 'auth', everyday: false, default: 'unset', meaning: 'comma-separated origins allowed by CORS, or `*`; unset: no CORS headers' },
  {
    name: 'RATE_LIMIT_SCRAPE_PER_MINUTE',
    group: 'auth',
    everyday: false,
    default: '0 (off)',
    meaning: "`POST /scrape` and `POST /scrape/explain` requests per minute per client (429 beyond); off by default, so the owner's own scripts never meet a 429",
  },
  { name: 'RATE_LIMIT_WRITES_PER_MINUTE', group: 'auth', everyday: false, default: '0 (off)', meaning: 'each other write route, per minute per client; off by default' },

  {
    name: 'DATABASE_URL',
    group: 'database',
    everyday: true,
    default: 'unset',
    meaning: '`postgres://…`: use that PostgreSQL server. Unset: embedded PostgreSQL (PGlite) in `DATA_DIR`',
  },
  { name: 'DATA_DIR', group: 'database', everyday: true, default: './data', meaning: 'embedded database files (locked: one process at a time)' },
  {
    name: 'MONGODB_URL',
    group: 'database',
    everyday: true,
    default: 'unset',
    meaning:
      "`mongodb://…` or `mongodb+srv://…` (several hosts and replica sets too, read by the driver's own parser): scrape logs go to MongoDB. Unset: a JSONB table of the relational database",
  },
  {
    name: 'PGLITE_SHARED_BUFFERS_MB',
    group: 'database',
    everyday: false,
    default: 'auto',
    meaning: "PGlite's buffer pool in MB (8-1024); `auto`: a quarter of the data directory's relation files at start, from 8 to 256",
  },
  {
    name: 'PGLITE_WASM_TIER_UP',
    group: 'database',
    everyday: false,
    default: 'auto',
    meaning:
      "`true`: V8 may compile PGlite's hot WebAssembly with its optimizing compiler; `false`: baseline compiler only; `auto`: optimizing only for a store of 256 MB of relation files or more",
  },

  {
    name: 'DEMO_SITE_URL',
    group: 'scrape',
    everyday: true,
    default: 'https://books.toscrape.com/',
    meaning: 'the practice book-listing site of the demo scraper (trusted: operator-configured)',
  },
  {
    name: 'SCRAPE_ALLOW_PRIVATE_NETWORKS',
    group: 'scrape',
    everyday: true,
    default: 'false',
    meaning: '`true` lets user-supplied scrape, crawl, webhook and alert channel URLs reach loopback/private addresses (tests, local fixtures, a home ntfy or mail relay)',
  },
  { name: 'SCRAPE_OBEY_ROBOTS', group: 'scrape', everyday: true, default: 'true', meaning: 'obey robots.txt for user-supplied URLs' },
  { name: 'SCRAPE_TIMEOUT_MS', group: 'scrape', everyday: false, default: '15000', meaning: 'per-page scrape timeout (`timeout_ms` in a request overrides it)' },
  { name: 'SCRAPE_RUN_DEADLINE_MS', group: 'scrape', everyday: false, default: '300000', meaning: 'the longest one scrape run may take, all its pages together (504 past it)' },
  {
    name: 'SCRAPE_MAX_BODY_BYTES',
    group: 'scrape',
    everyday: false,
    default: '10485760',
    meaning: 'largest page accepted, decompressed (10 MiB); a larger one fails its run with 502 `page-too-large` naming this setting (memory: docs/scraping-safety.md)',
  },
  { name: 'SCRAPE_USER_AGENT', group: 'scrape', everyday: false, default: 'DataAggregatorBot/0.1 (+https://github.com/data-aggregator)', meaning: 'User-Agent of the scraper' },
  { name: 'SCRAPE_HOST_CONCURRENCY', group: 'scrape', everyday: false, default: '8', meaning: 'concurrent page fetches per host' },
  {
    name: 'SCRAPE_CONCURRENCY',
    group: 'scrape',
    everyday: false,
    default: '4',
    meaning: 'scrapes run at once (4x as many may wait; beyond that 503 with `Retry-After`), and browser pages rendered at once',
  },
  {
    name: 'EXTRACT_THREADS',
    group: 'scrape',
    everyday: false,
    default: 'cores, at most 4',
    meaning: 'worker threads that parse and extract every page off the event loop, where a deadline can stop it; `0` extracts every page inline (no deadline can stop it there)',
  },

  {
    name: 'CHROMIUM_PATH',
    group: 'browser',
    everyday: true,
    default: 'auto-detect',
    meaning: 'headless browser for dynamic mode (`/usr/bin/chromium`, `chromium-browser`, `google-chrome`, then `PATH`)',
  },

  {
    name: 'WORKERS',
    group: 'jobs',
    everyday: true,
    default: '1',
    meaning: '`0`: the main service serves the API only and runs no jobs (run `npm run start:worker` processes instead)',
  },
  {
    name: 'WORKER_CONCURRENCY',
    group: 'jobs',
    everyday: false,
    default: '8',
    meaning: 'jobs and crawl page fetches one worker process runs at once (it claims twice as many crawl pages, so that the next fetch starts while a page is stored)',
  },
  {
    name: 'SCHEDULES_MAX',
    group: 'jobs',
    everyday: false,
    default: '1000',
    meaning: 'schedules in all, paused ones included (422 `limit-reached` beyond); each is looked at only when due, so this bounds the table, not the work',
  },
  {
    name: 'CRAWL_AUTOTHROTTLE',
    group: 'jobs',
    everyday: false,
    default: 'false',
    meaning:
      "`true`: crawls pace each host by how it answers, shared by every worker: the delay between requests follows latency / target concurrency, 429 and 503 slow a host down to at least its `Retry-After` (like Scrapy's AutoThrottle; robots.txt's Crawl-delay stays a floor). Off, a host is paced by its Crawl-delay alone, at no cost per page",
  },
  {
    name: 'CRAWL_AUTOTHROTTLE_TARGET_CONCURRENCY',
    group: 'jobs',
    everyday: false,
    default: '2',
    meaning: 'requests AutoThrottle aims to have in flight per host, all workers together (1 to 32)',
  },
  { name: 'CRAWL_AUTOTHROTTLE_MAX_DELAY_MS', group: 'jobs', everyday: false, default: '60000', meaning: 'the slowest pace AutoThrottle gives a host, ms between requests' },
  { name: 'JOBS_SCHEMA', group: 'jobs', everyday: false, default: 'pgboss', meaning: "PostgreSQL schema of the job queue's own tables" },

  {
    name: 'GONE_AFTER_RUNS',
    group: 'tracking',
    everyday: false,
    default: '3',
    meaning: 'a product that this many successful runs of its source in a row did not see is gone (one `product.gone` event); failed runs do not count',
  },
  {
    name: 'WEBHOOK_RETRY_DELAYS_MS',
    group: 'tracking',
    everyday: false,
    default: '5000,300000,1800000,7200000,18000000,36000000,36000000',
    meaning:
      'comma-separated delays (ms) before each retry of a failed webhook delivery, after the immediate first attempt; the default is the Standard Webhooks schedule (about a day); after the last the webhook is disabled',
  },
  { name: 'WEBHOOK_TIMEOUT_MS', group: 'tracking', everyday: false, default: '10000', meaning: "how long one delivery waits for the receiver's answer" },
  { name: 'WEBHOOKS_MAX', group: 'tracking', everyday: false, default: '1000', meaning: 'webhook subscriptions in all (422 `limit-reached` beyond)' },
  {
    name: 'WEBHOOKS_PER_URL',
    group: 'tracking',
    everyday: false,
    default: '10',
    meaning: 'webhook subscriptions to one target URL (422 `limit-reached` beyond); whatever their number, a target gets each event once',
  },

  {
    name: 'PUBLIC_URL',
    group: 'alerts',
    everyday: true,
    default: '$MAIN_SERVICE_URL',
    meaning: 'where people reach the dashboard: alert messages link to `/ui/products/{id}` under it (set it when the service is reached under another name)',
  },
  {
    name: 'ALERT_RETRY_DELAYS_MS',
    group: 'alerts',
    everyday: false,
    default: '30000,120000,600000,1800000,7200000',
    meaning:
      'comma-separated delays (ms) before each retry of a failed alert delivery after the first attempt (a longer Retry-After from the service wins); after the last, or after a failure that will not pass (a 4xx, a refused login or address), the channel is disabled with the reason',
  },
  {
    name: 'ALERT_TIMEOUT_MS',
    group: 'alerts',
    everyday: false,
    default: '30000',
    meaning:
      'the longest one alert delivery takes, whole (an HTTP request with its answer, or a whole SMTP conversation); the delivery queue takes a message back only a minute after that',
  },
  {
    name: 'ALERT_RULES_MAX',
    group: 'alerts',
    everyday: false,
    default: '500',
    meaning: 'alert rules in all, disabled ones included (422 `limit-reached` beyond); every write judges each change against the enabled ones',
  },
  {
    name: 'ALERT_CHANNELS_PER_TARGET',
    group: 'alerts',
    everyday: false,
    default: '10',
    meaning:
      'channels to one destination (the same URL and topic or chat, the same SMTP server and recipients; 422 `limit-reached` beyond); whatever their number, a destination gets each alert once',
  },

  {
    name: 'EXTERNAL_POSTS_URL',
    group: 'posts',
    everyday: false,
    default: 'https://jsonplaceholder.typicode.com/posts',
    meaning: 'the placeholder posts API (trusted: operator-configured)',
  },
  { name: 'EXTERNAL_POSTS_TIMEOUT_MS', group: 'posts', everyday: false, default: '10000', meaning: 'timeout of a posts upstream request' },
  { name: 'EXTERNAL_POSTS_CACHE_TTL_MS', group: 'posts', everyday: false, default: '60000', meaning: 'how long a posts answer is served from memory' },

  { name: 'AUX_PORT', group: 'auxiliary', everyday: true, default: '5000', meaning: 'auxiliary service port' },
  { name: 'MAIN_SERVICE_URL', group: 'auxiliary', everyday: true, default: 'http://127.0.0.1:$PORT', meaning: 'where the auxiliary service finds the main one' },
  { name: 'PROXY_TIMEOUT_MS', group: 'auxiliary', everyday: false, default: '10000', meaning: 'timeout of a request from the auxiliary service to the main one' },

  { name: 'LOG_LEVEL', group: 'logging', everyday: true, default: 'info', meaning: 'pino level (`fatal`, `error`, `warn`, `info`, `debug`, `trace`, `silent`)' },
];
