// Server-Sent Events over fetch: like EventSource (reconnects, resumes with Last-Event-ID), but it can send the API key.
import { apiKey } from './api.js';

/**
 * Follows `url` until `close()` is called. `onEvent(type, data, id)` gets each event with its data
 * parsed as JSON; `onStatus('live' | 'reconnecting' | 'closed', error?)` says how the connection is.
 * After a dropped connection it reconnects with the last event id, so nothing is missed; a 4xx
 * answer (e.g. 401 without the key) ends it.
 */
export function openStream(url, { onEvent, onStatus }) {
  const controller = new AbortController();
  let lastId = null;
  let retryMs = 2000;

  const connect = async () => {
    while (!controller.signal.aborted) {
      try {
        const headers = { accept: 'text/event-stream' };
        const key = apiKey();
        if (key) headers['x-api-key'] = key;
        if (lastId !== null) headers['last-event-id'] = lastId;
        const response = await fetch(url, { headers, signal: controller.signal });
        if (response.status >= 400 && response.status < 500) {
          const problem = await response.json().catch(() => ({}));
          onStatus?.('closed', { status: response.status, ...problem });
          return;
        }
        if (!response.ok || !response.body) throw new Error(`HTTP ${response.status}`);
        onStatus?.('live');
        await read(response.body);
        if (controller.signal.aborted) return;
      } catch {
        if (controller.signal.aborted) return;
      }
      onStatus?.('reconnecting');
      await new Promise((resolve) => setTimeout(resolve, retryMs));
    }
  };

  const read = async (body) => {
    const reader = body.pipeThrough(new TextDecoderStream()).getReader();
    let buffer = '';
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      buffer += value;
      let end;
      while ((end = buffer.indexOf('\n\n')) !== -1) {
        const block = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        let type = 'message';
        let id = null;
        const data = [];
        for (const line of block.split('\n')) {
          if (line.startsWith(':')) continue;
          const at = line.indexOf(':');
          const field = at === -1 ? line : line.slice(0, at);
          const text = at === -1 ? '' : line.slice(at + 1).replace(/^ /, '');
          if (field === 'event') type = text;
          else if (field === 'data') data.push(text);
          else if (field === 'id') id = text;
          else if (field === 'retry' && /^\d+$/.test(text)) retryMs = Number(text);
        }
        if (id !== null) lastId = id;
        if (data.length > 0) onEvent(type, JSON.parse(data.join('\n')), id);
      }
    }
  };

  void connect();
  return () => controller.abort();
}
