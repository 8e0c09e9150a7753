// Start-up that waits for its dependencies without dying: each step is retried with backoff until it succeeds.

export interface Readiness {
  /** Every step has succeeded. */
  ready(): boolean;
  /** What is still being waited for, and why (the last error), for 503 answers and /health. */
  detail(): string;
}

export interface PreparationStep {
  name: string;
  run(): Promise<unknown>;
}

export interface Preparation extends Readiness {
  /** Settles when every step succeeded, or when stopped. */
  readonly done: Promise<void>;
  /** Stops retrying (shutdown). */
  stop(): void;
}

interface Logger {
  info(details: object, message: string): void;
  warn(details: object, message: string): void;
}

/**
 * Runs `steps` in order in the background. A failing step is retried after 0.5 s, doubling to at
 * most `maxDelayMs`: a database that comes up later is simply found, no restart needed.
 */
export function prepareInBackground(steps: readonly PreparationStep[], log: Logger, maxDelayMs = 10_000): Preparation {
  let current = steps[0]?.name ?? '';
  let lastError = '';
  let ready = steps.length === 0;
  let stopped = false;
  let wake: (() => void) | undefined;

  const done = (async () => {
    for (const step of steps) {
      current = step.name;
      for (let attempt = 1, delay = 500; !stopped; attempt += 1, delay = Math.min(maxDelayMs, delay * 2)) {
        try {
          await step.run();
          if (attempt > 1) log.info({ step: step.name, attempts: attempt }, `${step.name}: ready after ${attempt} attempts`);
          lastError = '';
          break;
        } catch (error) {
          lastError = error instanceof Error ? error.message : String(error);
          log.warn({ step: step.name, attempt, retryInMs: delay, error: lastError }, `${step.name} failed; retrying`);
          // Not unref'd: a process with nothing else to do yet (a worker) must stay up and keep trying.
          await new Promise<void>((resolve) => {
            const timer = setTimeout(resolve, delay);
            wake = () => {
              clearTimeout(timer);
              resolve();
            };
          });
        }
      }
      if (stopped) return;
    }
    ready = true;
  })();

  return {
    done,
    ready: () => ready,
    detail: () => (ready ? 'ready' : `waiting for ${current}${lastError === '' ? '' : `: ${lastError}`}`),
    stop() {
      stopped = true;
      wake?.();
    },
  };
}
