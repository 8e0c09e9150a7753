// /articles/{id}/revisions: an article's title and body as they changed, each with a diff against the one before.
import type { App } from '../http/base-app.js';
import { pageLinks } from '../http/paging.js';
import { NotFound } from '../problems.js';
import { diffBody, diffText } from '../text/text-diff.js';
import type { ArticleRevisions, StoredRevision } from './article-revisions.js';
import { type Revision, RevisionQuery, Revisions } from './revision-schema.js';
import { Type } from 'typebox';

const ArticleId = Type.Object({ id: Type.Integer({ minimum: 1, maximum: 2_147_483_647, description: 'Positive integer' }) });

/**
 * The diff work one page of revisions may do, all its diffs together: past it, the rest show a changed
 * body removed and added whole. Each diff is bounded too, and the page lets other requests in between.
 */
const PAGE_DIFF_BUDGET_MS = 300;

function withDiff(revision: StoredRevision, before: StoredRevision | null, deadline: number): Revision {
  const { id: _id, ...shown } = revision;
  const changed = revision.changed.filter((c): c is 'title' | 'body' => c === 'title' || c === 'body');
  return {
    ...shown,
    changed,
    diff:
      before === null
        ? null
        : {
            title: before.title === revision.title ? null : diffText(before.title, revision.title, deadline),
            body: before.body === revision.body ? null : diffBody(before.body, revision.body, deadline),
          },
  };
}

export interface RevisionRoutesDeps {
  revisions: Pick<ArticleRevisions, 'list'>;
}

export function revisionRoutes(app: App, deps: RevisionRoutesDeps): void {
  const { revisions } = deps;
  app.get(
    '/articles/:id/revisions',
    {
      schema: {
        tags: ['articles'],
        summary: "An article's revisions, with a text diff between consecutive ones",
        description:
          'A revision per change of the title or the body, not per sighting: a run that sees the article as it was adds nothing. ' +
          'The first is the article as first stored (a listing entry has no body until its page is read). Each later one carries ' +
          'a diff against the one before it (paragraphs, then words). Oldest first; `X-Total-Count` and `Link` as for lists.',
        params: ArticleId,
        querystring: RevisionQuery,
        response: { 200: Revisions },
      },
    },
    async (request, reply) => {
      const { id } = request.params;
      const { limit, offset } = request.query;
      const page = await revisions.list(id, { limit, offset });
      if (page === undefined) throw new NotFound(`Article ${id} does not exist.`);
      reply.header('x-total-count', page.total);
      const link = pageLinks(`/articles/${id}/revisions`, request.url, offset, limit, page.total);
      if (link) reply.header('link', link);
      const deadline = performance.now() + PAGE_DIFF_BUDGET_MS;
      let before = page.before;
      const shown: Revision[] = [];
      for (const revision of page.revisions) {
        // Between two diffs the event loop is let go: a page of hard diffs never holds other requests.
        if (shown.length > 0) await new Promise((resolve) => setImmediate(resolve));
        shown.push(withDiff(revision, before, deadline));
        before = revision;
      }
      return { article_id: id, total: page.total, revisions: shown };
    },
  );
}
