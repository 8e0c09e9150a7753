// A full garbage collection in another Node process, through its inspector, so memory readings compare live data rather than GC timing.
import { WebSocket, request } from 'undici';

/** Asks the process listening for the inspector on `port` to collect garbage; false when it could not. */
export async function collectGarbage(port: number, timeoutMs = 10_000): Promise<boolean> {
  try {
    const res = await request(`http://127.0.0.1:${port}/json/list`, { headersTimeout: timeoutMs, bodyTimeout: timeoutMs });
    const targets = (await res.body.json()) as Array<{ webSocketDebuggerUrl?: string }>;
    const wsUrl = targets[0]?.webSocketDebuggerUrl;
    if (wsUrl === undefined) return false;
    return await new Promise<boolean>((resolve) => {
      const ws = new WebSocket(wsUrl);
      const timer = setTimeout(() => {
        ws.close();
        resolve(false);
      }, timeoutMs);
      ws.addEventListener('open', () => ws.send(JSON.stringify({ id: 1, method: 'HeapProfiler.collectGarbage' })));
      ws.addEventListener('message', (event) => {
        const message = JSON.parse(String(event.data)) as { id?: number; error?: unknown };
        if (message.id !== 1) return;
        clearTimeout(timer);
        ws.close();
        resolve(message.error === undefined);
      });
      ws.addEventListener('error', () => {
        clearTimeout(timer);
        resolve(false);
      });
    });
  } catch {
    return false;
  }
}
