// Shapes of article revisions and their diffs: validation, serialisation and the OpenAPI document.
import { Type, type Static } from 'typebox';
import { Nullable } from '../http/schemas.js';

const DiffPart = Type.Object({
  op: Type.Union([Type.Literal('equal'), Type.Literal('insert'), Type.Literal('delete')]),
  text: Type.String(),
});

const Diff = Type.Array(DiffPart, {
  description: 'The text as a sequence of kept, inserted and deleted runs: equal + delete runs read the old text, equal + insert the new',
  examples: [
    [
      { op: 'equal', text: 'Harbour wall ' },
      { op: 'delete', text: 'cracks' },
      { op: 'insert', text: 'collapses' },
    ],
  ],
});

export const Revision = Type.Object({
  number: Type.Integer({ description: '1 for the first revision, counting up' }),
  title: Type.String(),
  body: Nullable(Type.String({ description: 'Null while the article was a listing entry whose page was not read' })),
  changed: Type.Array(Type.Union([Type.Literal('title'), Type.Literal('body')]), { description: 'What changed from the revision before; empty for the first' }),
  seen_at: Type.String({ format: 'date-time', description: 'When this revision was first seen' }),
  run_id: Nullable(Type.String({ description: 'The scrape log or crawl job that saw it' })),
  diff: Nullable(
    Type.Object(
      { title: Nullable(Diff), body: Nullable(Diff) },
      { description: 'Against the revision before: the title and the body word by word (null where they did not change); null for the first' },
    ),
  ),
});
export type Revision = Static<typeof Revision>;

export const Revisions = Type.Object(
  {
    article_id: Type.Integer(),
    total: Type.Integer({ description: 'Revisions of the article in all' }),
    revisions: Type.Array(Revision, { description: 'Oldest first' }),
  },
  { $id: 'ArticleRevisions' },
);

export const RevisionQuery = Type.Object(
  {
    limit: Type.Integer({ minimum: 1, maximum: 100, default: 20 }),
    offset: Type.Integer({ minimum: 0, maximum: 2_147_483_647, default: 0 }),
  },
  { additionalProperties: false },
);
