// GET /external/posts: the placeholder posts API, relayed through the in-memory cache with its cache state in headers.
import { Type, type Static } from 'typebox';
import type { App } from '../http/base-app.js';
import { problemResponses } from '../http/schemas.js';
import type { PostsClient } from './posts-client.js';

// The upstream owns the shape of a post, so fields are documented but not typed: a post whose `id`
// is suddenly a string must still be relayed, not turned into a serialization error.
export const Post = Type.Object(
  {
    userId: Type.Optional(Type.Unknown({ description: 'Author id (an integer at JSONPlaceholder)' })),
    id: Type.Optional(Type.Unknown({ description: 'Post id (an integer at JSONPlaceholder)' })),
    title: Type.Optional(Type.Unknown({ description: 'Title (a string)' })),
    body: Type.Optional(Type.Unknown({ description: 'Text (a string)' })),
  },
  {
    additionalProperties: true,
    description: 'A post as the upstream sends it; any further fields pass through.',
    examples: [{ userId: 1, id: 1, title: 'sunt aut facere repellat', body: 'quia et suscipit\nsuscipit recusandae' }],
  },
);

export const PostList = Type.Array(Post);

const count = (description: string) => Type.Integer({ minimum: 0, maximum: 2_147_483_647, description });

export const PostsQuery = Type.Object(
  {
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, description: 'At most this many posts (sent upstream as `_limit`; wins over `_limit`)' })),
    userId: Type.Optional(Type.Integer({ minimum: 1, maximum: 2_147_483_647, description: "Only this author's posts" })),
    _limit: Type.Optional(count('JSONPlaceholder paging: page size')),
    _page: Type.Optional(count('JSONPlaceholder paging: page number (with `_limit`)')),
    _start: Type.Optional(count('JSONPlaceholder slicing: first index')),
    _end: Type.Optional(count('JSONPlaceholder slicing: index after the last')),
  },
  { additionalProperties: false },
);
export type PostsQuery = Static<typeof PostsQuery>;

export interface PostsRoutesDeps {
  posts: PostsClient;
  /** Clock for the `Age` header; must match the posts client's clock. */
  now?: () => number;
}

/** The upstream query for `query`: `limit` becomes `_limit`, the rest passes as given. */
export function upstreamQuery(query: PostsQuery): Record<string, string> {
  const upstream: Record<string, string> = {};
  for (const [name, value] of Object.entries(query)) {
    if (value !== undefined && name !== 'limit') upstream[name] = String(value);
  }
  if (query.limit !== undefined) upstream._limit = String(query.limit);
  return upstream;
}

export function postsRoutes(app: App, deps: PostsRoutesDeps): void {
  const { posts } = deps;
  const now = deps.now ?? Date.now;
  app.get(
    '/external/posts',
    {
      schema: {
        tags: ['external'],
        summary: 'Posts from the placeholder posts API (cached)',
        description:
          "The upstream JSON array, filtered by `userId` and cut to `limit`; JSONPlaceholder's own `_page`, " +
          '`_limit`, `_start`, `_end` pass through, and so do its `X-Total-Count` and `Link` headers. Answers ' +
          'are cached in memory for a short time: `X-Cache` says HIT, MISS or STALE. When the upstream fails ' +
          'and an earlier copy exists, that copy is served with `X-Cache: STALE`, `Age` and a ' +
          '`Warning: 110` header. Without a copy: 502 when the upstream fails or sends garbage, 504 when it is slow.',
        querystring: PostsQuery,
        response: { 200: PostList, ...problemResponses(502, 504) },
      },
    },
    async (request, reply) => {
      const answer = await posts.get(upstreamQuery(request.query));
      const { 'x-total-count': total, link } = answer.headers;
      if (total !== undefined) reply.header('x-total-count', total);
      if (link !== undefined) reply.header('link', link);
      reply.header('x-cache', answer.cache.toUpperCase());
      if (answer.cache !== 'miss') {
        reply.header('age', Math.max(0, Math.floor((now() - answer.fetchedAt) / 1000)));
      }
      if (answer.cache === 'stale') reply.header('warning', '110 - "Response is stale"');
      return answer.posts as Array<Static<typeof Post>>;
    },
  );
}
