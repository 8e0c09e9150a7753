// Where the services' log lines go: stdout, written in batches of up to 4 KiB within 10 ms rather than a write per line, flushed at exit and on a crash.
import { pino, type DestinationStream, type Logger } from 'pino';
import { redactUrlsIn } from '../redact.js';

/** An error as logged: pino's standard form, with every URL password in its message and stack masked. */
export function serializeError(error: Error): ReturnType<typeof pino.stdSerializers.err> {
  const serialized = pino.stdSerializers.err(error);
  return { ...serialized, message: redactUrlsIn(serialized.message), stack: redactUrlsIn(serialized.stack) };
}

export interface BufferedDestination extends DestinationStream {
  /** Writes every held line now, synchronously (exit, crash, shutdown). */
  flushSync(): void;
  /** pino's `logger.flush(cb)` calls this. */
  flush(cb?: (error?: Error) => void): void;
}

/**
 * A write of up to PIPE_BUF (4 KiB on Linux) bytes to a pipe is never interleaved with another
 * process's: `npm start` runs both services on one inherited stdout, so a batch never exceeds it.
 */
const BATCH_BYTES = 4096;
/** The longest a line is held before it is written. */
const HOLD_MS = 10;

/**
 * Holds log lines and hands them to `sink` together, at the latest HOLD_MS after the first of them
 * and as soon as the next would make the batch larger than BATCH_BYTES: a busy service makes one
 * write(2) per ~20 request lines instead of one per line (that write, and the wake-up of whatever
 * reads the pipe, was most of what the request line cost). The sink is synchronous and nothing is
 * written in the background, so flushSync() leaves nothing behind: what was logged before an exit
 * or a crash is in the log, in order.
 */
export function batchingDestination(sink: { write(chunk: string): unknown }): BufferedDestination {
  let held = '';
  let heldBytes = 0;
  let timer: NodeJS.Timeout | undefined;
  const flushSync = () => {
    if (timer !== undefined) {
      clearTimeout(timer);
      timer = undefined;
    }
    if (held === '') return;
    const out = held;
    held = '';
    heldBytes = 0;
    sink.write(out);
  };
  return {
    write(line: string) {
      const bytes = Buffer.byteLength(line);
      if (heldBytes + bytes > BATCH_BYTES) flushSync();
      held += line;
      heldBytes += bytes;
      timer ??= setTimeout(flushSync, HOLD_MS);
    },
    flushSync,
    flush(cb) {
      flushSync();
      cb?.();
    },
  };
}

// stdout is one per process, and so is its writer: two buffers would each hold lines and write them
// out of order. Created on first use, so importing this module has no effect.
let stdout: BufferedDestination | undefined;

/** The process's buffered stdout for log lines; written out at the latest when the process exits. */
export function stdoutLogDestination(): BufferedDestination {
  if (stdout === undefined) {
    const destination = batchingDestination(pino.destination({ dest: 1, sync: true }));
    // 'exit' runs for process.exit() (the graceful shutdown ends with it) and for a natural end.
    process.on('exit', () => destination.flushSync());
    stdout = destination;
  }
  return stdout;
}

/** Writes every held log line now. */
export function flushLogs(): void {
  stdout?.flushSync();
}

/**
 * An uncaught exception (or unhandled rejection) ends the process with exit code 1 after writing
 * the lines held so far and then one fatal line with the error, so the log shows what the process
 * did last and why it died. The process is not kept alive: its state is unknown after such an error.
 */
export function exitOnUncaughtError(log: Logger): void {
  const fatal = log.child({}, { serializers: { err: serializeError } });
  process.on('uncaughtException', (error: unknown, origin) => {
    try {
      flushLogs();
      const what = origin === 'unhandledRejection' ? 'unhandled rejection' : 'uncaught exception';
      if (error instanceof Error) fatal.fatal({ err: error, origin }, `${what}: ${redactUrlsIn(error.message)}`);
      else fatal.fatal({ thrown: redactUrlsIn(String(error)), origin }, what);
      fatal.flush();
      flushLogs();
    } finally {
      process.exit(1);
    }
  });
}
