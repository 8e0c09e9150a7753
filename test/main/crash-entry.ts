// Test entry point: the real main service, which crashes (an uncaught exception) right after it logs the request line of the request whose id is CRASH_AFTER_REQUEST_ID.
import { stdoutLogDestination } from '../../src/http/logging.js';

const crashAfter = process.env.CRASH_AFTER_REQUEST_ID;
if (crashAfter !== undefined && crashAfter !== '') {
  // The same destination the service's logger writes to (one per process). The error is thrown on
  // the next tick, long before the batch is due, so the request's line is still held in the buffer
  // when the process starts dying: only the crash handler's flush can get it out.
  const destination = stdoutLogDestination();
  const write = destination.write.bind(destination);
  destination.write = (line: string) => {
    write(line);
    if (line.includes(`"request_id":"${crashAfter}"`) && line.includes('"msg":"request"')) {
      process.nextTick(() => {
        throw new Error('boom: the crash the test asked for');
      });
    }
  };
}

await import('../../src/main/server.js');
