// Text diffs of article revisions: words of a title, paragraphs then words of a body, bounded on unrelated or huge input.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { diffBody, diffText, type DiffPart } from '../../src/text/text-diff.js';

/** What a diff says the old (equal + delete) and the new (equal + insert) text were. */
const sides = (parts: readonly DiffPart[]) => ({
  old: parts
    .filter((p) => p.op !== 'insert')
    .map((p) => p.text)
    .join(''),
  new: parts
    .filter((p) => p.op !== 'delete')
    .map((p) => p.text)
    .join(''),
});

describe('text diff', () => {
  test('a title: the changed word, the words kept around it', () => {
    assert.deepEqual(diffText('Sea wall cracks after the storm', 'Sea wall collapses after the storm'), [
      { op: 'equal', text: 'Sea wall ' },
      { op: 'delete', text: 'cracks' },
      { op: 'insert', text: 'collapses' },
      { op: 'equal', text: ' after the storm' },
    ]);
    assert.deepEqual(diffText('Same', 'Same'), [{ op: 'equal', text: 'Same' }]);
  });

  test('a body: paragraphs kept whole, a changed paragraph word by word, a new one inserted; each side reads back exactly', () => {
    const before = 'First paragraph stays.\n\nSecond one has a typo here.\n\nThird stays too.';
    const after = 'First paragraph stays.\n\nSecond one has no typo here.\n\nThird stays too.\n\nA fourth was added.';
    const parts = diffBody(before, after);
    assert.deepEqual(sides(parts), { old: before, new: after });
    assert.deepEqual(
      parts.filter((p) => p.op !== 'equal'),
      [
        { op: 'delete', text: 'a' },
        { op: 'insert', text: 'no' },
        { op: 'insert', text: '\n\nA fourth was added.' },
      ],
    );
  });

  test('a body read for the first time is all inserted; a body removed all deleted', () => {
    assert.deepEqual(diffBody(null, 'Now there is text.'), [{ op: 'insert', text: 'Now there is text.' }]);
    assert.deepEqual(diffBody('Gone.', null), [{ op: 'delete', text: 'Gone.' }]);
    assert.deepEqual(diffBody(null, null), []);
  });

  test('two unrelated long bodies are answered as replaced, within a bound, and still read back exactly', () => {
    const random = (tag: string) => Array.from({ length: 3000 }, (_, i) => `${tag} ${i} ${(i * 7919) % 10007} words`).join('\n\n');
    const [before, after] = [random('old'), random('new')];
    const parts = diffBody(before, after);
    assert.deepEqual(sides(parts), { old: before, new: after });
    assert.ok(parts.length <= 4000, `${parts.length} parts`);
  });

  test('past a shared deadline no diff work is done: a changed body and title are answered removed and added whole', () => {
    const past = performance.now() - 1;
    const before = 'First paragraph stays.\n\nSecond one has a typo here.';
    const after = 'First paragraph stays.\n\nSecond one has no typo here.';
    assert.deepEqual(diffBody(before, after, past), [
      { op: 'delete', text: before },
      { op: 'insert', text: after },
    ]);
    assert.deepEqual(diffText('Sea wall cracks', 'Sea wall collapses', past), [
      { op: 'delete', text: 'Sea wall cracks' },
      { op: 'insert', text: 'Sea wall collapses' },
    ]);
    // Before the deadline, the same diff is word by word.
    assert.ok(diffBody(before, after, performance.now() + 60_000).some((p) => p.op === 'equal'));
  });

  test('any two bodies, diffed in full, within budget or past the deadline: each side reads back exactly', () => {
    const word = fc.constantFrom('sea', 'wall', 'storm', 'road', 'closed', 'Friday', 'the', 'a', '.', ',', '—');
    const paragraph = fc.array(word, { minLength: 1, maxLength: 30 }).map((words) => words.join(' '));
    const body = fc.array(paragraph, { minLength: 1, maxLength: 12 }).map((paragraphs) => paragraphs.join('\n\n'));
    fc.assert(
      fc.property(body, body, fc.boolean(), (before, after, late) => {
        const parts = diffBody(before, after, late ? performance.now() - 1 : Number.POSITIVE_INFINITY);
        assert.deepEqual(sides(parts), { old: before, new: after });
        const title = diffText(before.slice(0, 80), after.slice(0, 80));
        assert.deepEqual(sides(title), { old: before.slice(0, 80), new: after.slice(0, 80) });
      }),
      { numRuns: 300 },
    );
  });
});
