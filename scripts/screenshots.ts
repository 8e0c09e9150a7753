// `npm run screenshots`: the dashboard's main screens as PNGs in docs/screenshots/, from a service with sample data, in Debian's Chromium.
import { mkdirSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import { findChromium } from '../src/scraping/browser/index.js';
import { startNewsSite, storyText } from '../test/articles/news-site.js';
import { startFixtureSite } from '../test/fixtures/site.js';
import { backends, mainServiceOn } from '../test/helpers.js';

const OUT = fileURLToPath(new URL('../docs/screenshots/', import.meta.url));
const executablePath = findChromium(process.env.CHROMIUM_PATH, process.env.PATH ?? '');
if (executablePath === undefined) throw new Error('No Chromium found: install chromium or set CHROMIUM_PATH.');

const closers: Array<() => Promise<void>> = [];
try {
  const site = await startFixtureSite({ catalogue: { pages: 3, perPage: 8 } });
  closers.push(() => site.close());
  const news = await startNewsSite([
    {
      slug: 'harbour-wall',
      title: 'The harbour wall will be rebuilt before the winter storms',
      paragraphs: storyText('the harbour wall', 6),
      summary: 'The council approved the works on Tuesday; the quay stays open meanwhile.',
      authors: ['Ana Ribeiro'],
      published: '2026-11-24T08:30:00Z',
      language: 'en',
      section: 'Town',
      tags: ['harbour', 'council'],
    },
    {
      slug: 'ferry-timetable',
      title: 'Winter ferry timetable: two crossings fewer on Sundays',
      paragraphs: storyText('the ferry timetable', 4),
      summary: 'From December the last Sunday crossing leaves at 18:10.',
      authors: ['Tom Hale'],
      published: '2026-11-26T16:00:00Z',
      language: 'en',
      section: 'Transport',
      tags: ['ferry'],
    },
  ]);
  closers.push(() => news.close());
  const db = await backends()[0]!.open(); // PGlite in memory
  closers.push(() => db.close());
  const { app } = await mainServiceOn(
    db,
    { after: (fn) => closers.unshift(fn) },
    { SCRAPE_ALLOW_PRIVATE_NETWORKS: 'true', SCRAPE_OBEY_ROBOTS: 'false', DEMO_SITE_URL: `${site.url}books/` },
    { work: true },
  );
  await app.listen({ port: 0, host: '127.0.0.1' });
  const origin = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;

  // Sample data: a scrape of the local catalogue, a price history with a sale and a stock-out, a schedule.
  const call = async (method: string, url: string, payload?: object) => (await app.inject({ method: method as 'GET', url, ...(payload ? { payload } : {}) })).json();
  const job = await call('POST', '/jobs', { url: `${site.url}books/`, max_pages: 3 });
  while (!['succeeded', 'failed'].includes((await call('GET', `/jobs/${job.id}`)).status)) await new Promise((r) => setTimeout(r, 200));
  // An alert rule with its channel, before the price changes that fire it.
  const channel = await call('POST', '/channels', { name: 'Phone', config: { kind: 'ntfy', server_url: `${site.url}`, topic: 'price-drops' } });
  await call('POST', '/alert-rules', {
    name: 'Any book under 45',
    scope: { type: 'all' },
    condition: { type: 'price_at_or_below', target: 45 },
    cooldown_minutes: 60,
    digest: 'immediate',
    channel_ids: [channel.id],
    enabled: true,
  });
  for (const change of [{ price: 48.5 }, { price: 45, list_price: 51.77 }, { availability: 'out_of_stock' }, { availability: 'in_stock', price: 42.99 }]) {
    await new Promise((r) => setTimeout(r, 1200));
    await call('PATCH', '/products/1', change);
  }
  // An article read twice, the second time revised; a site rule.
  await call('POST', '/scrape', { url: news.storyUrl('harbour-wall') });
  await call('POST', '/scrape', { url: news.storyUrl('ferry-timetable') });
  const story = news.stories.get('harbour-wall')!;
  news.stories.set('harbour-wall', { ...story, paragraphs: [...story.paragraphs.slice(0, -1), 'Update: the works start on 1 December.'], modified: '2026-11-27T10:00:00Z' });
  const article = await call('POST', '/scrape', { url: news.storyUrl('harbour-wall') });
  await call('POST', '/site-rules', { host_pattern: 'shop.example', fields: { sku: { selector: '.product-code' } }, note: 'Their JSON-LD lists the parent model' });
  await call('POST', '/schedules', { name: 'Catalogue every morning', cron: '0 7 * * *', timezone: 'Europe/London', job: { url: `${site.url}books/`, max_pages: 3 } });

  const browser = await chromium.launch({ executablePath, args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'] });
  closers.unshift(() => browser.close());
  mkdirSync(OUT, { recursive: true });
  const shots: Array<[string, string, { width: number; height: number }]> = [
    ['products', '/ui/products', { width: 1280, height: 800 }],
    ['product', '/ui/products/1', { width: 1280, height: 1000 }],
    ['scrape', '/ui/scrape', { width: 1280, height: 800 }],
    ['events', '/ui/events', { width: 1280, height: 800 }],
    ['schedules', '/ui/schedules', { width: 1280, height: 800 }],
    ['articles', '/ui/articles', { width: 1280, height: 800 }],
    ['article', `/ui/articles/${article.articles[0].id}`, { width: 1280, height: 1000 }],
    ['alerts', '/ui/alerts', { width: 1280, height: 800 }],
    ['alert-rules', '/ui/rules', { width: 1280, height: 800 }],
    ['site-rules', '/ui/site-rules', { width: 1280, height: 800 }],
    ['product-phone', '/ui/products/1', { width: 390, height: 844 }],
  ];
  for (const [name, path, viewport] of shots) {
    const page = await browser.newPage({ viewport });
    await page.goto(`${origin}${path}`);
    await page.locator('main h1').first().waitFor();
    // Live streams stay open, so not "network idle": nothing left loading, and the chart drawn.
    await page.waitForFunction(() => (globalThis as unknown as { document: { querySelector(s: string): unknown } }).document.querySelector('.loading') === null);
    await page.waitForTimeout(300);
    await page.screenshot({ path: `${OUT}${name}.png` });
    await page.close();
    console.log(`docs/screenshots/${name}.png`);
  }
} finally {
  for (const close of closers) await close();
}
process.exit(0);
