// Text diffs of article revisions: words of a title, paragraphs then words of a body, bounded on unrelated or huge input.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
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
});
