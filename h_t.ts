import { createPgliteDatabase } from './src/db/database.js';
import { migrate } from './src/db/migrate.js';
import { startFixtureSite } from './test/fixtures/site.js';
import { mainServiceOn } from './test/helpers.js';
const site = await startFixtureSite();
const db = await createPgliteDatabase(); await migrate(db);
const afters: any[] = [];
const { app } = await mainServiceOn(db, { after: (f) => afters.push(f) }, { SCRAPE_ALLOW_PRIVATE_NETWORKS: 'true', SCRAPE_OBEY_ROBOTS: 'false' });
for (const p of ['news-front-page.html', 'news-story.html', 'blog-post-jsonld.html', 'news-story.html']) {
  const r = await app.inject({ method: 'POST', url: '/scrape', payload: { url: `${site.url}pages/${p}` } });
  const j = r.json(); console.log(p, r.statusCode, j.page_type, j.count, j.articles?.length, j.articles_created, j.articles_updated, j.articles?.map((a: any) => [a.id, a.title, a.url, a.body?.length]).slice(0, 3), r.statusCode !== 200 ? j : '');
}
let r = await app.inject({ url: '/articles?limit=5' }); console.log(r.headers['x-total-count'], r.headers.link, r.json().map((a: any) => [a.id, a.title, a.published_at, a.language]));
r = await app.inject({ url: '/articles?q=harbour&limit=5' }); console.log('q', r.statusCode, r.headers['x-total-count'], r.json().map?.((a: any) => [a.id, a.title]) ?? r.body);
r = await app.inject({ url: '/articles/1' }); console.log(JSON.stringify(r.json()).slice(0, 400));
r = await app.inject({ url: '/events' }); console.log(r.json().map((e: any) => [e.id, e.type, e.product_id, e.article_id, JSON.stringify(e.data).slice(0,100)]));
r = await app.inject({ url: '/articles/2/revisions' }); console.log(r.statusCode, JSON.stringify(r.json()).slice(0, 300));
for (const f of ['xml','rss','json']) { r = await app.inject({ url: `/articles/feed.${f}?limit=2` }); console.log(r.statusCode, r.headers['content-type'], r.body.slice(0, 300)); }
r = await app.inject({ url: '/articles?limit=2', headers: { accept: 'text/csv' } }); console.log(r.statusCode, r.body.slice(0, 300));
r = await app.inject({ url: '/scrape-logs?limit=1' }); const l = r.json()[0]; console.log(l.article_count, l.articles_created, l.articles?.length);
for (const f of afters) await f(); await db.close(); await site.close();
