// Word to this process's live streams that events were committed (other processes' events are found by polling).
import { EventEmitter } from 'node:events';

export interface LiveEvents {
  /** After commit: live event streams of this process look at once. */
  published(events: readonly unknown[]): void;
  /** Called at each publication; answers the function that stops listening. */
  onPublished(listener: () => void): () => void;
}

export function createLiveEvents(): LiveEvents {
  const emitter = new EventEmitter();
  emitter.setMaxListeners(0);
  return {
    published(events) {
      if (events.length > 0) emitter.emit('events');
    },
    onPublished(listener) {
      emitter.on('events', listener);
      return () => emitter.off('events', listener);
    },
  };
}
