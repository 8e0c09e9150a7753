// Waiting for an event instead of for a time: poll a condition until it holds, with a generous hang guard.

export interface UntilOptions {
  /** The hang guard: past it the wait fails with `what` and the last value seen. Not a figure under test. */
  withinMs?: number;
  /** How often the condition is looked at. */
  everyMs?: number;
}

/**
 * Resolves with the first value of `probe` that is neither undefined, null nor false. A probe that
 * throws is looked at again (a service still starting refuses connections); its last error is
 * reported if the guard runs out.
 */
export async function until<T>(what: string, probe: () => T | undefined | null | false | Promise<T | undefined | null | false>, options: UntilOptions = {}): Promise<T> {
  const withinMs = options.withinMs ?? 60_000;
  const everyMs = options.everyMs ?? 50;
  const deadline = Date.now() + withinMs;
  let last: unknown;
  for (;;) {
    try {
      const value = await probe();
      if (value !== undefined && value !== null && value !== false) return value;
      last = value;
    } catch (error) {
      last = error;
    }
    if (Date.now() > deadline) {
      const seen = last instanceof Error ? last.message : JSON.stringify(last);
      throw new Error(`gave up waiting for ${what} (hang guard ${withinMs} ms); last seen: ${seen}`);
    }
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
}

/** Waits until a child's collected output matches `pattern`; the match is returned. */
export function untilOutput(what: string, output: () => string, pattern: RegExp, options: UntilOptions = {}): Promise<RegExpMatchArray> {
  return until(what, () => output().match(pattern), options);
}
