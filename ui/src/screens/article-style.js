// The article screens' stylesheet, added to the page once when either screen is first shown.
let added = false;

export function useArticleStyles() {
  if (added) return;
  added = true;
  const link = document.createElement('link');
  link.rel = 'stylesheet';
  link.href = '/ui/assets/screens/articles.css';
  document.head.append(link);
}
