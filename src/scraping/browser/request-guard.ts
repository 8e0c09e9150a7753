// One render's answers from the address guard, asked once per URL whether the route hook or the proxy asks.
import { HttpProblem } from '../../problems.js';
import type { BrowserLogger } from './launcher.js';
import { originOf } from './support.js';

export interface RequestGuard {
  /** With `rethrow`, an HttpProblem thrown by the guard propagates instead of meaning "blocked". */
  check(url: string, options?: { rethrow?: boolean }): Promise<boolean>;
  /** The origin a trusted render may always use, if this render is trusted. */
  readonly trustedOrigin: string | undefined;
}

export function createRequestGuard(guardRequest: (url: string) => Promise<boolean>, trustedOrigin: string | undefined, logger: BrowserLogger | undefined): RequestGuard {
  const answers = new Map<string, Promise<boolean>>();
  return {
    trustedOrigin,
    async check(url, options = {}) {
      // An operator-configured page (the demo site) may live on a private address, and so may its assets.
      if (trustedOrigin !== undefined && originOf(url) === trustedOrigin) return true;
      let answer = answers.get(url);
      if (answer === undefined) {
        answer = Promise.resolve().then(() => guardRequest(url));
        answers.set(url, answer);
      }
      try {
        return await answer;
      } catch (error) {
        if (options.rethrow === true && error instanceof HttpProblem) throw error;
        if (!(error instanceof HttpProblem)) logger?.warn({ url, err: error }, 'request guard failed; request blocked');
        return false;
      }
    },
  };
}
