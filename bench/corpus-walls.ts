// Counts the pages of the shared corpora (real pages, none of them a wall) that extraction would call a wall: the false "blocked" rate of wall-page.ts.
// Run: node --import tsx bench/corpus-walls.ts [corpus folder, default ../shared/corpus]
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { extract } from '../src/scraping/extract/index.js';

const root = process.argv[2] ?? '../shared/corpus';
const folders = ['realworld/pages', 'peb-dev/pages', 'aeb-dev/pages', 'wcxb-dev/dev/html'];
let pages = 0;
let empty = 0;
const walls: string[] = [];
for (const folder of folders) {
  let names: string[];
  try {
    names = readdirSync(join(root, folder)).filter((n) => /\.html?(\.gz)?$/.test(n));
  } catch {
    continue;
  }
  for (const name of names) {
    const raw = readFileSync(join(root, folder, name));
    const html = (name.endsWith('.gz') ? gunzipSync(raw) : raw).toString('utf8');
    const result = extract(html, `https://corpus.test/${name}`);
    pages += 1;
    if (result.items.length === 0 && result.articles.length === 0) empty += 1;
    if (result.blocked !== undefined) walls.push(`${folder}/${name}: ${result.blocked.kind} (${result.blocked.signal})`);
  }
}
for (const line of walls) console.log(line);
console.log(`pages ${pages}, of them with no product and no article ${empty}, called a wall ${walls.length}`);
