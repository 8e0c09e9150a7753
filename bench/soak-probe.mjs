// Loaded into a service process by the soak (`node --import bench/soak-probe.mjs …`): each interval it appends
// the process's memory, event-loop delay and utilisation to SOAK_PROBE_FILE, one JSON line, touching nothing else.
import { appendFileSync } from 'node:fs';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';

const file = process.env.SOAK_PROBE_FILE;
if (file) {
  const delay = monitorEventLoopDelay({ resolution: 10 });
  delay.enable();
  let since = performance.eventLoopUtilization();
  setInterval(
    () => {
      const utilisation = performance.eventLoopUtilization(since);
      since = performance.eventLoopUtilization();
      const memory = process.memoryUsage();
      const line = {
        at: Date.now(),
        pid: process.pid,
        name: process.env.SOAK_PROBE_NAME ?? '',
        rss_mb: memory.rss / 1e6,
        heap_mb: memory.heapUsed / 1e6,
        delay_p50_ms: delay.percentile(50) / 1e6,
        delay_p99_ms: delay.percentile(99) / 1e6,
        delay_max_ms: delay.max / 1e6,
        utilisation: utilisation.utilization,
      };
      delay.reset();
      appendFileSync(file, `${JSON.stringify(line)}\n`);
    },
    Number(process.env.SOAK_PROBE_MS ?? 60_000),
  ).unref();
}
