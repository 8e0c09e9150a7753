// RFC 8288 `Link` headers for offset/limit paging.

/**
 * rel="next"/"prev" links for a page of `limit` items at `offset` out of `total`, on `path` with the
 * query parameters of `requestUrl` (a path with query string) kept and limit/offset set. Undefined
 * when there is neither.
 */
export function pageLinks(path: string, requestUrl: string, offset: number, limit: number, total: number): string | undefined {
  const hasNext = offset + limit < total;
  const hasPrev = offset > 0;
  if (!hasNext && !hasPrev) return undefined;
  const queryAt = requestUrl.indexOf('?');
  // URLSearchParams alone (not a whole URL, which cost ~9 us a request) re-encodes every parameter,
  // so nothing a client sent can break out of the <...> of the header.
  const params = new URLSearchParams(queryAt === -1 ? '' : requestUrl.slice(queryAt + 1));
  const at = (newOffset: number) => {
    params.set('limit', String(limit));
    params.set('offset', String(newOffset));
    return `${path}?${params.toString()}`;
  };
  const links: string[] = [];
  if (hasNext) links.push(`<${at(offset + limit)}>; rel="next"`);
  if (hasPrev) links.push(`<${at(Math.max(0, offset - limit))}>; rel="prev"`);
  return links.join(', ');
}

/** Answers one page of a list: its items, with X-Total-Count, and Link when there is a page before or after it. */
export function pagedAnswer<T>(
  reply: { header(name: string, value: unknown): unknown },
  path: string,
  request: { url: string; query: { offset: number; limit: number } },
  page: { items: T[]; total: number },
): T[] {
  reply.header('x-total-count', page.total);
  const link = pageLinks(path, request.url, request.query.offset, request.query.limit, page.total);
  if (link) reply.header('link', link);
  return page.items;
}
