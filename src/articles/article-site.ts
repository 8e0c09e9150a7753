// Which site an article belongs to, as keys the `site` filter matches: the host and each parent domain.

/** A host as the site filter compares it: lower-cased, without a leading "www.". */
function bareHost(host: string): string {
  return host
    .toLowerCase()
    .replace(/^www\./, '')
    .replace(/\.$/, '');
}

/**
 * The keys of an article at `url`: its host and every parent domain but the last label
 * ("news.example.co.uk" -> news.example.co.uk, example.co.uk, co.uk), so that `site=example.co.uk`
 * finds its subdomains too. Empty for what is not an absolute URL.
 */
export function siteKeys(url: string): string[] {
  let host: string;
  try {
    host = bareHost(new URL(url).hostname);
  } catch {
    return [];
  }
  if (host === '') return [];
  const labels = host.split('.');
  if (labels.length === 1) return [host];
  return labels.slice(0, -1).map((_, i) => labels.slice(i).join('.'));
}

/** What `site=` names, as a key: the host of a URL, or the text itself as a host. */
export function siteFilterKey(site: string): string {
  const text = site.trim();
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(text)) {
    try {
      return bareHost(new URL(text).hostname);
    } catch {
      return text.toLowerCase();
    }
  }
  return bareHost(text.split('/')[0] ?? text);
}
