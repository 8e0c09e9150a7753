// Fails when a source file under src/ passes the size the house keeps (STYLE.md: ~400 lines asks to be split).
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';

const LIMIT = 400;

function* files(dir) {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) yield* files(path);
    else if (name.endsWith('.ts')) yield path;
  }
}

const over = [...files('src')]
  .map((path) => ({ path, lines: readFileSync(path, 'utf8').split('\n').length - 1 }))
  .filter((file) => file.lines > LIMIT)
  .sort((a, b) => b.lines - a.lines);
for (const file of over) console.error(`${file.path}: ${file.lines} lines (more than ${LIMIT}: split it by concept)`);
if (over.length > 0) process.exit(1);
console.log(`file sizes: every file under src/ has at most ${LIMIT} lines`);
