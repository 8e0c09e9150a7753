// Start-up of several builds of the main service in one run, alternating, so that a busy machine weighs on each alike.
//
// Each argument is `label=dir`: a checkout built with `npm run build` (a worktree of another commit, say:
// `git worktree add /tmp/at-ded52fe ded52fe`, its own node_modules with its own `.cache`, then its build).
// Run: `node --import tsx bench/startup-compare.ts ded52fe=/tmp/at-ded52fe HEAD=. [--rounds 5]`.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { measureStart, type StartupRun } from './startup.js';
import { num, table } from './report.js';

const args = process.argv.slice(2);
const roundsAt = args.indexOf('--rounds');
const rounds = roundsAt === -1 ? 5 : Number(args[roundsAt + 1]);
const builds = args
  .filter((a, i) => a.includes('=') && i !== roundsAt + 1)
  .map((a) => {
    const [label = '', dir = ''] = a.split('=');
    return { label, root: resolve(dir) };
  });
if (builds.length === 0 || !Number.isInteger(rounds) || rounds < 1) {
  console.error('usage: bench/startup-compare.ts label=dir [label=dir ...] [--rounds N]');
  process.exit(2);
}

const IDLE_AFTER_MS = 3_000;
const runs = new Map<string, { fresh: StartupRun[]; warm: StartupRun[] }>(builds.map((b) => [b.label, { fresh: [], warm: [] }]));
for (let round = 0; round < rounds; round++) {
  // Rotate the order each round: no build always goes first on a machine that has just been idle.
  const order = builds.map((_, i) => builds[(i + round) % builds.length]!);
  for (const build of order) {
    const dir = mkdtempSync(join(tmpdir(), 'startup-compare-'));
    try {
      const env = { DATABASE_URL: '', DATA_DIR: join(dir, 'data') };
      const mine = runs.get(build.label)!;
      mine.fresh.push(await measureStart(`${build.label} fresh`, env, IDLE_AFTER_MS, [], build.root));
      mine.warm.push(await measureStart(`${build.label} warm`, env, IDLE_AFTER_MS, [], build.root));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }
}

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 === 1 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
};
const span = (xs: number[], digits = 0): string => `${num(Math.min(...xs), digits)}-${num(Math.max(...xs), digits)} (median ${num(median(xs), digits)})`;
const rows: string[][] = [];
for (const [label, { fresh, warm }] of runs) {
  for (const [kind, list] of [
    ['empty DATA_DIR', fresh],
    ['warm restart', warm],
  ] as const) {
    rows.push([label, kind, `${span(list.map((r) => r.healthyMs))} ms`, `${span(list.map((r) => r.cpuToHealthyMs))} ms`, `${span(list.map((r) => r.idleRssMb))} MB`]);
  }
}
console.log(`${rounds} rounds, alternating; idle RSS ${IDLE_AFTER_MS / 1000} s after healthy\n`);
console.log(table(['build', 'start', 'to healthy', 'CPU to healthy', 'idle RSS'], rows));
