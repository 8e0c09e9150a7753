// Small helpers the browser's parts share: waiting with a limit, aborts, and the shape of Playwright's errors.
import { UpstreamFailed } from '../../problems.js';
import { raceAbort } from '../../egress/abort.js';

/** True when `promise` settled within `ms`; never rejects. */
export async function settlesWithin(promise: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), ms);
  });
  try {
    return await Promise.race([
      promise.then(
        () => true,
        () => true,
      ),
      expired,
    ]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * What a render stopped by `signal` fails with: the signal's own reason when it is an error (a
 * cancelled run, a render halted at the size cap), as safe-fetch does for a fetch.
 */
export function abortReason(signal: AbortSignal, label: string): Error {
  const reason: unknown = signal.reason;
  if (reason instanceof Error) return reason;
  return new UpstreamFailed(`Rendering ${label} was aborted.`, { cause: reason });
}

/** `promise`, unless `signal` aborts first: then its abortReason. Stops listening once settled. */
export function unlessAborted<T>(promise: Promise<T>, signal: AbortSignal | undefined, label: string): Promise<T> {
  return signal === undefined ? promise : raceAbort(promise, signal, (aborted) => abortReason(aborted, label));
}

/** Playwright errors carry a call log after the first line; the first line is the reason. */
export function firstLine(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  return (message.split('\n')[0] ?? message).trim();
}

/** Playwright's TimeoutError, recognised without loading playwright-core up front. */
export function isPlaywrightTimeout(error: unknown): boolean {
  return error instanceof Error && error.name === 'TimeoutError';
}

/** A navigation swapped the document while we were reading it. */
export function isNavigationRace(error: unknown): boolean {
  return /execution context was destroyed|navigat/i.test(firstLine(error));
}

export function originOf(url: string): string | undefined {
  try {
    return new URL(url).origin;
  } catch {
    return undefined;
  }
}
