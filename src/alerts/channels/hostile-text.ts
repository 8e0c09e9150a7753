// Scraped text in messages, pure: product titles and URLs come from arbitrary pages, so each output format gets them escaped and bidi-isolated.

// C0 and C1 controls (newlines included: a title is one line), and every bidi embedding,
// override, isolate and mark: a title must not reorder the text around it in any message.
const CONTROLS = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;

/** One line of plain text: controls and bidi formatting removed, spaces collapsed, cut to `max` characters. */
export function cleanText(text: string, max = 200): string {
  const clean = text.replace(CONTROLS, ' ').replace(/\s+/g, ' ').trim();
  const chars = [...clean];
  return chars.length <= max
    ? clean
    : `${chars
        .slice(0, max - 1)
        .join('')
        .trimEnd()}…`;
}

/**
 * Wrapped in FIRST STRONG ISOLATE ... POP DIRECTIONAL ISOLATE: a right-to-left title then stays a
 * unit inside a left-to-right sentence ("Price drop: <title> now €10") instead of swallowing it.
 */
export function isolate(text: string): string {
  return `\u2068${text}\u2069`;
}

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** HTML for an untrusted one-line text: escaped, in a <bdi> (the HTML form of an isolate). */
export function htmlIsolated(text: string): string {
  return `<bdi>${escapeHtml(text)}</bdi>`;
}

/** The URL when it is an absolute http(s) URL (javascript:, data: and the like are dropped). */
export function safeHttpUrl(url: string | null): string | null {
  if (url === null) return null;
  try {
    const parsed = new URL(url);
    return parsed.protocol === 'http:' || parsed.protocol === 'https:' ? parsed.href : null;
  } catch {
    return null;
  }
}

/** Slack mrkdwn: only &, < and > are control characters (https://api.slack.com/reference/surfaces/formatting). */
export function escapeSlack(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

/** Markdown (Discord, Teams Adaptive Cards): every character that could start formatting, a link or a mention gets a backslash. */
export function escapeMarkdown(text: string): string {
  return text.replace(/[\\`*_~|>#[\]()!<@:-]/g, '\\$&');
}
