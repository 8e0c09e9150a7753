// The main content of the WCXB dev pages (../shared/corpus/wcxb-dev) as extraction gives it, scored in-process by
// the benchmark's rules (word F1 per page, means per page type), per half of the sites (corpus-halves.ts), with the
// page types, titles, authors and dates beside the labels, and the time per page (median and p95).
//
// Run: node --import tsx bench/corpus-wcxb.ts [--half A|B] [--only ID,ID] [--worst N] [--corpus DIR]
// `evaluate.py` in that folder is the reference scorer; tokenising here is its `\w+` of the lowercased text.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { extract } from '../src/scraping/extract/index.js';
import { halfOf, siteOf, type Half } from './corpus-halves.js';
import { num, table } from './report.js';

const argv = process.argv.slice(2);
const opt = (name: string): string | undefined => {
  const i = argv.indexOf(name);
  return i >= 0 ? argv[i + 1] : undefined;
};
const root = opt('--corpus') ?? '../shared/corpus/wcxb-dev/dev';
const onlyHalf = opt('--half') as Half | undefined;
const only = opt('--only')?.split(',');
const worst = Number(opt('--worst') ?? 0);

/** The published per-type F1 of rs-trafilatura on the dev split, the floor each type aims at. */
const FLOOR: Record<string, number> = { article: 0.932, documentation: 0.932, service: 0.844, forum: 0.808, collection: 0.716, listing: 0.707, product: 0.641 };
/** WCXB's type names against the service's page types. */
const TYPE_OF: Record<string, string> = {
  article: 'article',
  documentation: 'documentation',
  service: 'service',
  forum: 'forum',
  collection: 'listing',
  listing: 'article-list',
  product: 'product',
};

const WORD = /[\p{L}\p{N}_]+/gu;
function tokens(text: string): Map<string, number> {
  const counts = new Map<string, number>();
  for (const m of text.toLowerCase().matchAll(WORD)) counts.set(m[0], (counts.get(m[0]) ?? 0) + 1);
  return counts;
}
function score(returned: string, expected: string): { p: number; r: number; f: number } {
  const a = tokens(returned);
  const b = tokens(expected);
  let na = 0;
  let nb = 0;
  let overlap = 0;
  for (const n of a.values()) na += n;
  for (const [t, n] of b) {
    nb += n;
    overlap += Math.min(n, a.get(t) ?? 0);
  }
  if (nb === 0) return na === 0 ? { p: 1, r: 1, f: 1 } : { p: 0, r: 0, f: 0 };
  if (na === 0 || overlap === 0) return { p: 0, r: 0, f: 0 };
  const p = overlap / na;
  const r = overlap / nb;
  return { p, r, f: (2 * p * r) / (p + r) };
}

interface Row {
  id: string;
  type: string;
  half: Half;
  f: number;
  p: number;
  r: number;
  ms: number;
  typeRight: boolean;
  got: string;
  title: boolean | null;
  author: boolean | null;
  date: boolean | null;
}

const norm = (s: string | null | undefined) => (s ?? '').toLowerCase().replace(/\s+/g, ' ').trim();
const rows: Row[] = [];
for (const name of readdirSync(join(root, 'ground-truth')).sort()) {
  const id = name.replace(/\.json$/, '');
  if (only !== undefined && !only.includes(id)) continue;
  const truth = JSON.parse(readFileSync(join(root, 'ground-truth', name), 'utf8'));
  const half = halfOf(siteOf(truth.url, id));
  if (onlyHalf !== undefined && half !== onlyHalf) continue;
  const html = gunzipSync(readFileSync(join(root, 'html', `${id}.html.gz`))).toString('utf8');
  const started = performance.now();
  const result = extract(html, truth.url || `https://wcxb.test/${id}`);
  const ms = performance.now() - started;
  const gt = truth.ground_truth;
  const type: string = truth._internal.page_type.primary;
  const article = result.articles[0];
  // Before pages had their own main content, the scorer's fallbacks: the article's body, else the first product's description.
  const s = score(result.content ?? article?.body ?? result.items[0]?.description ?? '', gt.main_content ?? '');
  rows.push({
    id,
    type,
    half,
    ...s,
    ms,
    typeRight: TYPE_OF[type] === result.page_type,
    got: result.page_type,
    title: gt.title ? norm(article?.title ?? result.items[0]?.title) === norm(gt.title) : null,
    author: gt.author
      ? (() => {
          const got = norm((article?.authors ?? []).join(', '));
          const want = norm(gt.author);
          return got !== '' && (got.includes(want) || want.includes(got));
        })()
      : null,
    date: gt.publish_date ? (article?.published_at ?? '').slice(0, 10) === String(gt.publish_date).slice(0, 10) : null,
  });
}

const mean = (xs: number[]) => (xs.length === 0 ? Number.NaN : xs.reduce((a, b) => a + b, 0) / xs.length);
const share = (xs: Array<boolean | null>) => {
  const known = xs.filter((x): x is boolean => x !== null);
  return known.length === 0 ? '-' : `${num((100 * known.filter(Boolean).length) / known.length, 0)} % of ${known.length}`;
};
const quantile = (xs: number[], q: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(q * xs.length))] ?? Number.NaN;
for (const half of ['A', 'B'] as const) {
  const mine = rows.filter((r) => r.half === half);
  if (mine.length === 0) continue;
  const lines = Object.keys(FLOOR).map((type) => {
    const of = mine.filter((r) => r.type === type);
    const f = mean(of.map((r) => r.f));
    return [
      type,
      String(of.length),
      num(f, 3),
      num(mean(of.map((r) => r.p)), 3),
      num(mean(of.map((r) => r.r)), 3),
      `${num(FLOOR[type], 3)} ${f >= FLOOR[type]! ? '✓' : '✗'}`,
      share(of.map((r) => r.typeRight)),
    ];
  });
  lines.push([
    'all',
    String(mine.length),
    num(mean(mine.map((r) => r.f)), 3),
    num(mean(mine.map((r) => r.p)), 3),
    num(mean(mine.map((r) => r.r)), 3),
    '0.900',
    share(mine.map((r) => r.typeRight)),
  ]);
  console.log(`\nhalf ${half}: ${mine.length} pages of ${new Set(mine.map((r) => r.id)).size}`);
  console.log(table(['type', 'pages', 'F1', 'precision', 'recall', 'floor', 'type right'], lines));
  console.log(
    `title ${share(mine.map((r) => r.title))}, author ${share(mine.map((r) => r.author))}, date ${share(mine.map((r) => r.date))}; ms per page median ${num(
      quantile(
        mine.map((r) => r.ms),
        0.5,
      ),
    )}, p95 ${num(
      quantile(
        mine.map((r) => r.ms),
        0.95,
      ),
    )}`,
  );
  const confusion = new Map<string, number>();
  for (const r of mine) if (!r.typeRight) confusion.set(`${r.type} -> ${r.got}`, (confusion.get(`${r.type} -> ${r.got}`) ?? 0) + 1);
  console.log(
    `types taken for others: ${[...confusion]
      .sort((a, b) => b[1] - a[1])
      .map(([k, n]) => `${k} ${n}`)
      .join(', ')}`,
  );
}
if (worst > 0)
  for (const r of [...rows].sort((a, b) => a.f - b.f).slice(0, worst)) console.log(`${r.id} ${r.half} ${r.type} -> ${r.got}: F1 ${num(r.f, 2)} P ${num(r.p, 2)} R ${num(r.r, 2)}`);
