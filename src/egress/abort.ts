// Waiting on a promise that an AbortSignal may cut short.

/**
 * `promise`, unless `signal` aborts first: then it rejects with `reasonOf(signal)` (by default the
 * signal's own reason). Stops listening once settled.
 */
export function raceAbort<T>(promise: Promise<T>, signal: AbortSignal, reasonOf: (signal: AbortSignal) => unknown = (s) => s.reason): Promise<T> {
  if (signal.aborted) return Promise.reject(reasonOf(signal));
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => reject(reasonOf(signal));
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(error);
      },
    );
  });
}
