// A readable diff between two versions of a text: paragraphs first, then the words of the paragraphs that changed; bounded in time on any input, and by a deadline several diffs share.
import { diffArrays, diffWordsWithSpace } from 'diff';

export interface DiffPart {
  op: 'equal' | 'insert' | 'delete';
  text: string;
}

/** Edits past which two texts are "rewritten" rather than diffed: bounds the work on hostile or unrelated input. */
const MAX_PARAGRAPH_EDITS = 2000;
const MAX_WORD_EDITS = 1000;
/** And a wall-clock bound on each diff, whatever the input. */
const TIMEOUT_MS = 50;
/** All the word diffs of one body together. */
const BUDGET_MS = 100;

/**
 * A moment (performance.now()) past which no more fine work is done: the diffs that share it (a page
 * of revisions) show what they have not diffed yet as removed and added, whole. Default: no limit.
 */
export type DiffDeadline = number;

/** Milliseconds one diff may take: its own bound, or what is left before the shared deadline. */
const allowance = (own: number, deadline: DiffDeadline): number => Math.min(own, deadline - performance.now());

const paragraphs = (text: string): string[] => text.split(/\n[ \t]*\n+/).filter((p) => p.trim() !== '');

/** Adjacent parts of one kind become one. */
function push(parts: DiffPart[], op: DiffPart['op'], text: string): void {
  if (text === '') return;
  const last = parts[parts.length - 1];
  if (last !== undefined && last.op === op) last.text += text;
  else parts.push({ op, text });
}

/** Words of one short text against another (a title, or the paragraphs of one changed run). */
export function diffText(before: string, after: string, deadline: DiffDeadline = Number.POSITIVE_INFINITY, maxEdits = MAX_WORD_EDITS): DiffPart[] {
  const timeout = allowance(TIMEOUT_MS, deadline);
  const changes = timeout <= 0 ? undefined : diffWordsWithSpace(before, after, { maxEditLength: maxEdits, timeout });
  const parts: DiffPart[] = [];
  if (changes === undefined) {
    push(parts, 'delete', before);
    push(parts, 'insert', after);
    return parts;
  }
  for (const change of changes) push(parts, change.added ? 'insert' : change.removed ? 'delete' : 'equal', change.value);
  return parts;
}

/**
 * A body against the next version of it: paragraphs that stayed are `equal`, a run of changed
 * paragraphs is diffed word by word. Paragraphs are joined by a blank line, as bodies are written.
 */
export function diffBody(before: string | null, after: string | null, deadline: DiffDeadline = Number.POSITIVE_INFINITY): DiffPart[] {
  const parts: DiffPart[] = [];
  if (before === null || after === null) {
    if (before !== null) push(parts, 'delete', before);
    if (after !== null) push(parts, 'insert', after);
    return parts;
  }
  const timeout = allowance(TIMEOUT_MS, deadline);
  const changes = timeout <= 0 ? undefined : diffArrays(paragraphs(before), paragraphs(after), { maxEditLength: MAX_PARAGRAPH_EDITS, timeout });
  if (changes === undefined)
    return [
      { op: 'delete', text: before },
      { op: 'insert', text: after },
    ];
  // Word diffs of the changed runs share one budget: past it, a run is shown as removed and added.
  const started = performance.now();
  let removed: string[] = [];
  let added: string[] = [];
  // Paragraphs each side has had so far: a blank line goes before every later one, on that side only.
  let olds = 0;
  let news = 0;
  /** The blank line before the next paragraph of either side, as the part(s) that say which sides have it. */
  const separate = (old: boolean, next: boolean) => {
    const before = old && olds > 0;
    const after = next && news > 0;
    if (before && after) push(parts, 'equal', '\n\n');
    else if (before) push(parts, 'delete', '\n\n');
    else if (after) push(parts, 'insert', '\n\n');
  };
  const flush = () => {
    if (removed.length === 0 && added.length === 0) return;
    separate(removed.length > 0, added.length > 0);
    if (removed.length > 0 && added.length > 0 && performance.now() - started < BUDGET_MS) {
      for (const part of diffText(removed.join('\n\n'), added.join('\n\n'), deadline)) push(parts, part.op, part.text);
    } else {
      if (removed.length > 0) push(parts, 'delete', removed.join('\n\n'));
      if (added.length > 0) push(parts, 'insert', added.join('\n\n'));
    }
    olds += removed.length;
    news += added.length;
    removed = [];
    added = [];
  };
  for (const change of changes) {
    if (change.removed) removed = removed.concat(change.value);
    else if (change.added) added = added.concat(change.value);
    else {
      flush();
      for (const paragraph of change.value) {
        separate(true, true);
        push(parts, 'equal', paragraph);
        olds += 1;
        news += 1;
      }
    }
  }
  flush();
  return parts;
}
