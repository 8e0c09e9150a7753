// RFC 8288 `Link` headers for offset/limit paging.

/**
 * rel="next"/"prev" links for a page of `limit` items at `offset` out of `total`, keeping every
 * other query parameter of `requestUrl` (a path with query string). Undefined when there is neither.
 */
export function pageLinks(requestUrl: string, offset: number, limit: number, total: number): string | undefined {
  const url = new URL(requestUrl, 'http://placeholder');
  const at = (newOffset: number) => {
    url.searchParams.set('limit', String(limit));
    url.searchParams.set('offset', String(newOffset));
    return `${url.pathname}?${url.searchParams.toString()}`;
  };
  const links: string[] = [];
  if (offset + limit < total) links.push(`<${at(offset + limit)}>; rel="next"`);
  if (offset > 0) links.push(`<${at(Math.max(0, offset - limit))}>; rel="prev"`);
  return links.length > 0 ? links.join(', ') : undefined;
}
