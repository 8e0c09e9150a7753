// Screens by URL: the History API, so every screen has its own address and reload and back work.
import { useEffect, useState } from 'preact/hooks';

export const BASE = '/ui';

/** The current location: `path` below /ui (e.g. "/products/4") and the query parameters. */
function current() {
  const path = location.pathname.startsWith(BASE) ? location.pathname.slice(BASE.length) || '/' : '/';
  return { path, params: new URLSearchParams(location.search) };
}

const listeners = new Set();
window.addEventListener('popstate', () => {
  for (const listener of listeners) listener(current());
});

/** Goes to `to` (a path below /ui, with its query); `replace` keeps the history entry (filters, paging). */
export function navigate(to, { replace = false } = {}) {
  const url = `${BASE}${to}`;
  if (url === location.pathname + location.search) return;
  if (replace) history.replaceState(null, '', url);
  else history.pushState(null, '', url);
  for (const listener of listeners) listener(current());
  if (!replace) window.scrollTo(0, 0);
}

export function useRoute() {
  const [route, setRoute] = useState(current);
  useEffect(() => {
    listeners.add(setRoute);
    return () => listeners.delete(setRoute);
  }, []);
  return route;
}

/** Clicks on in-app links (a[href^="/ui"]) navigate without a reload; modified clicks open tabs as usual. */
export function interceptLinks(root) {
  root.addEventListener('click', (event) => {
    if (event.defaultPrevented || event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
    const link = event.target.closest('a[href]');
    if (!link || link.target || link.hasAttribute('download')) return;
    const href = link.getAttribute('href');
    if (!href.startsWith(`${BASE}/`) && href !== BASE) return;
    event.preventDefault();
    navigate(href.slice(BASE.length) || '/');
  });
}

/** Matches `path` against patterns such as "/products/:id"; answers the params or null. */
export function match(pattern, path) {
  const names = [];
  const regex = new RegExp(
    `^${pattern.replace(/:(\w+)/g, (_, name) => {
      names.push(name);
      return '([^/]+)';
    })}/?$`,
  );
  const found = regex.exec(path);
  if (!found) return null;
  return Object.fromEntries(names.map((name, i) => [name, decodeURIComponent(found[i + 1])]));
}
