// Runs every test/**/*.test.ts (or those whose path contains an argument; --fast leaves out the slow suites) with Node's own test runner.
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';

const args = process.argv.slice(2);
// --fast: the inner loop: no browser, no several-process or lifecycle suites, no whole-site crawls.
const fast = args.includes('--fast');
const filter = args.filter((arg) => arg !== '--fast');
const SLOW = [
  'test/ui/',
  'test/scraping/browser/',
  'test/jobs/workers.test.ts',
  'test/jobs/alert-workers.test.ts',
  'test/main/lifecycle.test.ts',
  'test/start.test.ts',
  'test/db/postgres-faults.test.ts',
  'test/jobs/crawl-pages.test.ts',
  'test/jobs/crawl-reach.test.ts',
];
const SLOW_FIRST = [
  'test/jobs/workers.test.ts',
  'test/jobs/alert-workers.test.ts',
  'test/ui/dashboard.test.ts',
  'test/ui/alerts-screens.test.ts',
  'test/ui/articles-screens.test.ts',
  'test/tracking/',
  'test/main/lifecycle.test.ts',
  'test/ui/',
  'test/jobs/',
  'test/db/',
  'test/start.test.ts',
];
const files = readdirSync('test', { recursive: true, encoding: 'utf8' })
  .filter((f) => f.endsWith('.test.ts'))
  .map((f) => join('test', f))
  .filter((f) => filter.length === 0 || filter.some((part) => f.includes(part)))
  .filter((f) => !fast || !SLOW.some((part) => f.includes(part)))
  .sort()
  // The files that take longest (several processes, calendars that tick once a minute, Chromium) start
  // first: the runner takes files in order, and one started last would leave the run waiting on it alone.
  .sort((a, b) => rank(a) - rank(b));

function rank(file) {
  const index = SLOW_FIRST.findIndex((part) => file.includes(part));
  return index === -1 ? SLOW_FIRST.length : index;
}

if (files.length === 0) {
  console.error('no test files matched');
  process.exit(1);
}
const result = spawnSync(process.execPath, ['--import', 'tsx', '--test', '--test-concurrency=3', '--test-reporter=spec', ...files], { stdio: 'inherit' });
process.exit(result.status ?? 1);
