// A crawl's include/exclude globs, matched in time linear in the URL: compiled to a small automaton and run without backtracking.
//
// A regular expression made from a glob backtracks: `**/*a*a*a*a*a*a*a*b` against a 54-character path
// took tens of seconds, on the event loop. Here a pattern becomes a Thompson automaton (states and
// epsilon splits) simulated over the text one character at a time, every active state at once: at
// most (text length) x (pattern states) steps, whatever the pattern.
//
// Syntax (as picomatch reads it with `dot: true`): `*` any run without `/`, `?` one character but `/`,
// `[abc]`, `[a-z]`, `[!a]` a class, `{a,b}` alternatives, and `**` as a whole path segment any number
// of segments (`/books/**` also matches `/books`); elsewhere `**` (and `***`) is `*`.

/** Patterns longer than this are refused by the request schema; alternatives beyond it by `compileGlob`. */
export const MAX_ALTERNATIVES = 64;

type CharTest = (c: string) => boolean;
type State = { kind: 'char'; test: CharTest; next: number } | { kind: 'split'; a: number; b: number } | { kind: 'match' };

const ANY: CharTest = () => true;
const NOT_SLASH: CharTest = (c) => c !== '/';

/** Expands `{a,b}` alternatives (nested ones too); throws past MAX_ALTERNATIVES. */
export function expandBraces(pattern: string): string[] {
  const open = findOpenBrace(pattern);
  if (open === -1) return [pattern];
  let depth = 0;
  const commas: number[] = [];
  let close = -1;
  for (let i = open; i < pattern.length; i++) {
    const c = pattern[i];
    if (c === '\\') i++;
    else if (c === '{') depth++;
    else if (c === '}' && --depth === 0) {
      close = i;
      break;
    } else if (c === ',' && depth === 1) commas.push(i);
  }
  // An unclosed or comma-less brace is a literal, as in picomatch.
  if (close === -1 || commas.length === 0) return [pattern];
  const head = pattern.slice(0, open);
  const tail = pattern.slice(close + 1);
  const bounds = [open, ...commas, close];
  const out: string[] = [];
  for (let k = 0; k + 1 < bounds.length; k++) {
    for (const inner of expandBraces(pattern.slice(bounds[k]! + 1, bounds[k + 1]!))) {
      for (const rest of expandBraces(tail)) {
        out.push(head + inner + rest);
        if (out.length > MAX_ALTERNATIVES) throw new RangeError(`the glob expands to more than ${MAX_ALTERNATIVES} alternatives`);
      }
    }
  }
  return out;
}

function findOpenBrace(pattern: string): number {
  for (let i = 0; i < pattern.length; i++) {
    if (pattern[i] === '\\') i++;
    else if (pattern[i] === '{') return i;
  }
  return -1;
}

/** One alternative (no braces) as an automaton: its states, the start at 0. */
function build(pattern: string): State[] {
  const states: State[] = [];
  // Each step appends states and leaves `pending` (indexes whose `next`/`b` still point nowhere) to the next step.
  let pending: Array<{ state: number; field: 'next' | 'b' }> = [];
  const patch = (to: number) => {
    for (const { state, field } of pending) (states[state] as Record<string, unknown>)[field] = to;
    pending = [];
  };
  const char = (test: CharTest): void => {
    patch(states.length);
    states.push({ kind: 'char', test, next: -1 });
    pending.push({ state: states.length - 1, field: 'next' });
  };
  /** `test*`: a loop that may be left before or after any character. */
  const loop = (test: CharTest): void => {
    patch(states.length);
    const split = states.length;
    states.push({ kind: 'split', a: split + 1, b: -1 });
    states.push({ kind: 'char', test, next: split });
    pending.push({ state: split, field: 'b' });
  };
  // Nothing, or anything that ends with a slash: what a leading or middle "**" segment matches.
  const segmentsThenSlash = (): void => {
    patch(states.length);
    const skip = states.length;
    states.push({ kind: 'split', a: skip + 1, b: -1 });
    const inner = states.length;
    states.push({ kind: 'split', a: inner + 1, b: inner + 2 });
    states.push({ kind: 'char', test: ANY, next: inner });
    states.push({ kind: 'char', test: (c) => c === '/', next: -1 });
    pending.push({ state: skip, field: 'b' }, { state: inner + 2, field: 'next' });
  };
  // Nothing, or a slash and anything: what a trailing "/**" matches.
  const slashThenSegments = (): void => {
    patch(states.length);
    const skip = states.length;
    states.push({ kind: 'split', a: skip + 1, b: -1 });
    states.push({ kind: 'char', test: (c) => c === '/', next: skip + 2 });
    const inner = states.length;
    states.push({ kind: 'split', a: inner + 1, b: -1 });
    states.push({ kind: 'char', test: ANY, next: inner });
    pending.push({ state: skip, field: 'b' }, { state: inner, field: 'b' });
  };

  let i = 0;
  const at = (k: number) => pattern[k];
  while (i < pattern.length) {
    const c = pattern[i]!;
    // "x/**" at the end (or "x/**/**"): x, then nothing or a slash and anything (so "/books/**" matches "/books" too).
    if (c === '/' && /^(?:\*\*\/)*\*\*$/.test(pattern.slice(i + 1))) {
      slashThenSegments();
      i = pattern.length;
      continue;
    }
    if (c === '*' && at(i + 1) === '*') {
      let end = i;
      while (at(end) === '*') end++;
      // Only exactly two stars make a globstar; "***" is a star.
      const segmentStart = (i === 0 || at(i - 1) === '/') && end - i === 2;
      if (segmentStart && end === pattern.length) {
        loop(ANY); // "**" as the whole pattern: anything
        i = end;
        continue;
      }
      if (segmentStart && at(end) === '/') {
        segmentsThenSlash(); // "**/" at the start or after a slash: any number of whole segments
        i = end + 1;
        continue;
      }
      // "**" inside a segment (or "***") is "*"; alone in its segment, at least one character.
      if ((i === 0 || at(i - 1) === '/') && (end === pattern.length || at(end) === '/')) char(NOT_SLASH);
      loop(NOT_SLASH);
      i = end;
      continue;
    }
    if (c === '*') {
      // A segment of stars alone is at least one character: "/*" does not match "/" (as in picomatch).
      let end = i;
      while (at(end) === '*') end++;
      if ((i === 0 || at(i - 1) === '/') && (end === pattern.length || at(end) === '/')) char(NOT_SLASH);
      loop(NOT_SLASH);
      i = end;
    } else if (c === '?') {
      char(NOT_SLASH);
      i++;
    } else if (c === '[') {
      const parsed = parseClass(pattern, i);
      if (parsed === null) {
        char((x) => x === '[');
        i++;
      } else {
        char(parsed.test);
        i = parsed.end;
      }
    } else if (c === '\\' && i + 1 < pattern.length) {
      const literal = pattern[i + 1]!;
      char((x) => x === literal);
      i += 2;
    } else {
      char((x) => x === c);
      i++;
    }
  }
  patch(states.length);
  states.push({ kind: 'match' });
  return states;
}

/** `[...]` from `start`: its test and the index after it, or null when it is not a class. */
function parseClass(pattern: string, start: number): { test: CharTest; end: number } | null {
  let i = start + 1;
  const negated = pattern[i] === '!' || pattern[i] === '^';
  if (negated) i++;
  const ranges: Array<[string, string]> = [];
  let first = true;
  while (i < pattern.length && (pattern[i] !== ']' || first)) {
    first = false;
    let low = pattern[i]!;
    if (low === '\\' && i + 1 < pattern.length) low = pattern[++i]!;
    let high = low;
    if (pattern[i + 1] === '-' && i + 2 < pattern.length && pattern[i + 2] !== ']') {
      high = pattern[i + 2]!;
      i += 2;
    }
    ranges.push([low, high]);
    i++;
  }
  if (i >= pattern.length) return null;
  const inClass = (c: string) => ranges.some(([low, high]) => c >= low && c <= high);
  return { test: (c) => c !== '/' && inClass(c) !== negated, end: i + 1 };
}

/**
 * Runs an automaton over `text`: every active state at once, so each character costs at most one step
 * per state. Only the states active at a character are visited (a list, not a scan of the whole
 * automaton), and a set is emptied by moving to the next generation of marks, not by clearing it.
 */
function run(states: readonly State[], text: string): boolean {
  let current = new Int32Array(states.length);
  let next = new Int32Array(states.length);
  let currentCount = 0;
  let nextCount = 0;
  // A state is in the set being built when its mark is this generation.
  const marks = new Uint32Array(states.length);
  let generation = 1;
  const stack: number[] = [];
  /** Adds `start` to `next` with every state its splits reach; only states that read a character or match are listed. */
  const add = (start: number) => {
    stack.push(start);
    while (stack.length > 0) {
      const s = stack.pop()!;
      if (marks[s] === generation) continue;
      marks[s] = generation;
      const state = states[s]!;
      if (state.kind === 'split') stack.push(state.b, state.a);
      else next[nextCount++] = s;
    }
  };
  add(0);
  for (const c of text) {
    [current, next] = [next, current];
    currentCount = nextCount;
    nextCount = 0;
    generation++;
    for (let i = 0; i < currentCount; i++) {
      const state = states[current[i]!]!;
      if (state.kind === 'char' && state.test(c)) add(state.next);
    }
    if (nextCount === 0) return false;
  }
  for (let i = 0; i < nextCount; i++) if (states[next[i]!]!.kind === 'match') return true;
  return false;
}

/** A glob as a matcher; throws a RangeError for one that expands to too many alternatives. */
export function compileGlob(pattern: string): (text: string) => boolean {
  const automata = expandBraces(pattern).map(build);
  return (text) => automata.some((states) => run(states, text));
}

/** Matchers for several globs: true when any matches; null for none given. */
export function compileGlobs(patterns: readonly string[] | undefined): ((text: string) => boolean) | null {
  if (patterns === undefined || patterns.length === 0) return null;
  const matchers = patterns.map(compileGlob);
  return (text) => matchers.some((match) => match(text));
}
