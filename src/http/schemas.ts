// Schemas shared by routes of both services: the problem body and common headers.
import { Type, type Static, type TSchema } from 'typebox';

/**
 * `T | null` as one JSON Schema type list rather than anyOf: one clear validation message and a
 * faster serializer. Keywords such as pattern or format apply to the non-null values only.
 */
export function Nullable<T extends TSchema>(schema: T) {
  const { type, ...rest } = schema as unknown as { type: string };
  return Type.Unsafe<Static<T> | null>({ ...rest, type: [type, 'null'] });
}

/**
 * PostgreSQL text and JSONB cannot hold U+0000, and JSONB no unpaired surrogate (a JSON body may spell
 * one, `"\\ud800"`), so text that reaches the database must not carry either: with this pattern such
 * input is a 422 naming the field instead of a failed query (500). Ajv reads patterns as Unicode, so a
 * surrogate pair (an emoji) is one character outside the class and passes.
 */
export const NO_NUL = '^[^\\u0000\\ud800-\\udfff]*$';

/**
 * The largest id or cursor of a bigint column a request may name: past it a JSON number loses digits and
 * PostgreSQL's bigint overflows, and Ajv takes "Infinity" and 1e400 for integers; both were failed queries (500).
 */
export const MAX_BIGINT_ID = Number.MAX_SAFE_INTEGER;

/** A UUID as PostgreSQL's uuid type reads it (format "uuid" also takes "urn:uuid:…", which it refuses). */
export const UUID_PATTERN = '^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$';

/** A wall the site answered with instead of the page (problem type `blocked`; a job's and a log's error carry it too). */
export const BlockedSchema = Type.Object(
  {
    kind: Type.Union([Type.Literal('captcha'), Type.Literal('challenge'), Type.Literal('login'), Type.Literal('rate-limit'), Type.Literal('access-denied')], {
      description:
        "captcha: a CAPTCHA form or widget; challenge: a bot-protection service's browser check; login: a login form or 401; rate-limit: 429 or a page saying so; access-denied: a block page",
    }),
    signal: Type.String({ description: 'What decided, e.g. "header cf-mitigated: challenge (Cloudflare)", "a CAPTCHA form is the content of the page"' }),
    status: Type.Integer({ description: 'The HTTP status of the answer' }),
    retry_after_ms: Type.Optional(Type.Integer({ description: "The site's Retry-After, ms" })),
  },
  { description: 'The site answered with a wall instead of the page: nothing was stored and the run counts as no sighting' },
);

export const Problem = Type.Object(
  {
    type: Type.String({ examples: ['urn:data-aggregator:problem:not-found'] }),
    title: Type.String({ examples: ['Not Found'] }),
    status: Type.Integer({ examples: [404] }),
    detail: Type.String({ examples: ['Product 42 does not exist.'] }),
    instance: Type.Optional(Type.String()),
    errors: Type.Optional(
      Type.Array(Type.Object({ path: Type.String(), message: Type.String() }), {
        description: 'The fields at fault (at most the first 20; `errors_total` counts them all when there are more)',
        examples: [[{ path: '/body/price', message: 'must be >= 0' }]],
      }),
    ),
    errors_total: Type.Optional(Type.Integer({ description: 'How many fields were at fault, when more than `errors` lists' })),
    blocked: Type.Optional(BlockedSchema),
  },
  { $id: 'Problem', description: 'RFC 9457 problem details (application/problem+json).' },
);

/** Response schemas for the errors a route may answer with, for the OpenAPI document. */
export function problemResponses(...statuses: number[]): Record<number, typeof Problem> {
  return Object.fromEntries(statuses.map((status) => [status, Problem]));
}

/**
 * The problems every route's schema implies, so that no route has to list them: a body may be
 * malformed (400), too large (413), of another type (415) or invalid (422); path parameters may name
 * nothing (404) or be invalid (422); a query string may be invalid (422); and every route may find a
 * store or the browser unavailable (503). A route lists only the others (409, 502, 504...).
 */
export function impliedProblems(schema: { body?: unknown; params?: unknown; querystring?: unknown }): number[] {
  const statuses = new Set([503]);
  if (schema.body !== undefined) for (const status of [400, 413, 415, 422]) statuses.add(status);
  if (schema.params !== undefined) for (const status of [404, 422]) statuses.add(status);
  if (schema.querystring !== undefined) statuses.add(422);
  return [...statuses].sort((a, b) => a - b);
}
