// A readable diff between two versions of a text: paragraphs first, then the words of the paragraphs that changed; bounded in time on any input.
import { diffArrays, diffWords } from 'diff';

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

const paragraphs = (text: string): string[] => text.split(/\n[ \t]*\n+/).filter((p) => p.trim() !== '');

/** Adjacent parts of one kind become one. */
function push(parts: DiffPart[], op: DiffPart['op'], text: string): void {
  if (text === '') return;
  const last = parts[parts.length - 1];
  if (last !== undefined && last.op === op) last.text += text;
  else parts.push({ op, text });
}

/** Words of one short text against another (a title, or the paragraphs of one changed run). */
export function diffText(before: string, after: string, maxEdits = MAX_WORD_EDITS): DiffPart[] {
  const changes = diffWords(before, after, { maxEditLength: maxEdits, timeout: TIMEOUT_MS });
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
export function diffBody(before: string | null, after: string | null): DiffPart[] {
  const parts: DiffPart[] = [];
  if (before === null || after === null) {
    if (before !== null) push(parts, 'delete', before);
    if (after !== null) push(parts, 'insert', after);
    return parts;
  }
  const changes = diffArrays(paragraphs(before), paragraphs(after), { maxEditLength: MAX_PARAGRAPH_EDITS, timeout: TIMEOUT_MS });
  if (changes === undefined)
    return [
      { op: 'delete', text: before },
      { op: 'insert', text: after },
    ];
  // Word diffs of the changed runs share one budget: past it, a run is shown as removed and added.
  const started = performance.now();
  let removed: string[] = [];
  let added: string[] = [];
  let first = true;
  const separator = () => (first ? '' : '\n\n');
  const flush = () => {
    if (removed.length === 0 && added.length === 0) return;
    const sep = separator();
    if (removed.length > 0 && added.length > 0 && performance.now() - started < BUDGET_MS) {
      push(parts, 'equal', sep);
      for (const part of diffText(removed.join('\n\n'), added.join('\n\n'))) push(parts, part.op, part.text);
    } else {
      if (removed.length > 0) push(parts, 'delete', sep + removed.join('\n\n'));
      if (added.length > 0) push(parts, 'insert', (removed.length > 0 ? '\n\n' : sep) + added.join('\n\n'));
    }
    first = false;
    removed = [];
    added = [];
  };
  for (const change of changes) {
    if (change.removed) removed = removed.concat(change.value);
    else if (change.added) added = added.concat(change.value);
    else {
      flush();
      for (const paragraph of change.value) {
        push(parts, 'equal', separator() + paragraph);
        first = false;
      }
    }
  }
  flush();
  return parts;
}
