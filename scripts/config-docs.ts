// `npm run docs:config`: writes the settings reference into docs/configuration.md and .env.example (`--check`: fails when they are stale).
import { readFileSync, writeFileSync } from 'node:fs';
import { envExample, withReference } from '../src/config/settings-docs.js';

const check = process.argv.includes('--check');
const targets: Array<[string, (current: string) => string]> = [
  ['docs/configuration.md', withReference],
  ['.env.example', () => envExample()],
];
let stale = 0;
for (const [path, render] of targets) {
  const current = readFileSync(path, 'utf8');
  const wanted = render(current);
  if (current === wanted) continue;
  if (check) {
    console.error(`${path} is out of date: run npm run docs:config`);
    stale++;
  } else {
    writeFileSync(path, wanted);
    console.log(`${path} written`);
  }
}
process.exit(stale > 0 ? 1 : 0);
