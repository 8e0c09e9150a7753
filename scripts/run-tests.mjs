// Runs every test/**/*.test.ts (or those whose path contains an argument) with Node's own test runner.
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';

const filter = process.argv.slice(2);
const files = readdirSync('test', { recursive: true, encoding: 'utf8' })
  .filter((f) => f.endsWith('.test.ts'))
  .map((f) => join('test', f))
  .filter((f) => filter.length === 0 || filter.some((part) => f.includes(part)))
  .sort();

if (files.length === 0) {
  console.error('no test files matched');
  process.exit(1);
}
const result = spawnSync(process.execPath, ['--import', 'tsx', '--test', '--test-concurrency=2', '--test-reporter=spec', ...files], { stdio: 'inherit' });
process.exit(result.status ?? 1);
