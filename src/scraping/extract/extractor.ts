// A source of evidence, as index.ts runs it: a pure function from the parsed page to what it found there.
import type { Page } from './page.js';
import type { ArticleCandidate, Candidate, Selectors, Source } from './types.js';

/** One source of evidence: a pure function from the parsed page to what it found there. */
export interface Extractor {
  source: Source;
  extract(page: Page, selectors?: Selectors): Candidate[];
}

/** An article source of evidence: a pure function from the parsed page to the articles (or entries) it found there. */
export interface ArticleExtractor {
  source: Source;
  extract(page: Page): ArticleCandidate[];
}
