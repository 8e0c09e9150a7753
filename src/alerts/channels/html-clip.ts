// Cutting HTML the service wrote itself (Telegram's parse_mode HTML) to a length without breaking it: never inside a tag or an entity, open elements closed.

const ELLIPSIS = '…';

/** A tag (group 1: its name), an entity, or one code point of text. */
const TOKEN = /<\/?([A-Za-z][A-Za-z0-9-]*)[^<>]*>|&(?:#[0-9]+|#[xX][0-9A-Fa-f]+|[A-Za-z][A-Za-z0-9]*);|[\s\S]/gu;

/**
 * `html` itself when it is at most `max` UTF-16 code units long (the unit Telegram counts in);
 * otherwise its longest prefix that ends between two tokens (never inside a tag, an entity or a
 * surrogate pair), then "…" and the closing tags of the elements still open, all within `max`.
 * Expects well-formed markup, tags closed in the order they opened, as the service's templates make it.
 */
export function clipHtml(html: string, max: number): string {
  if (html.length <= max) return html;
  const open: string[] = [];
  let closers = 0;
  let kept = 0;
  for (const match of html.matchAll(TOKEN)) {
    const token = match[0];
    const name = match[1]?.toLowerCase();
    const closing = name !== undefined && token.startsWith('</');
    const opening = name !== undefined && !closing && !token.endsWith('/>');
    const nextClosers = closers + (opening ? name.length + 3 : closing ? -(name.length + 3) : 0);
    const end = match.index + token.length;
    if (end + ELLIPSIS.length + nextClosers > max) break;
    if (opening) open.push(name);
    if (closing) open.pop();
    closers = nextClosers;
    kept = end;
  }
  const tail = open
    .reverse()
    .map((name) => `</${name}>`)
    .join('');
  return `${html.slice(0, kept).trimEnd()}${ELLIPSIS}${tail}`;
}
