// Resident memory of a process (VmRSS) and of the processes it started (the headless browser), read from /proc.
import { readdirSync, readFileSync } from 'node:fs';

const MB = 1024 * 1024;

function kbField(text: string, field: string): number | undefined {
  const match = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(text);
  return match === null ? undefined : Number(match[1]) * 1024;
}

/** VmRSS of `pid` in MB; NaN when the process is gone. */
export function rssMb(pid: number): number {
  try {
    return (kbField(readFileSync(`/proc/${pid}/status`, 'utf8'), 'VmRSS') ?? Number.NaN) / MB;
  } catch {
    return Number.NaN;
  }
}

const CLOCK_TICKS_PER_SECOND = 100; // USER_HZ: 100 on every Linux this runs on (getconf CLK_TCK)

/** CPU time (user + system) `pid` has used so far, ms; NaN when the process is gone. */
export function cpuMs(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLOCK_TICKS_PER_SECOND;
  } catch {
    return Number.NaN;
  }
}

/** Every live descendant of `pid` (children, their children…). */
export function descendants(pid: number): number[] {
  const parentOf = new Map<number, number>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      // The command name may hold spaces and parentheses: fields start after the last ')'.
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      parentOf.set(Number(entry), Number(fields[1]));
    } catch {
      // exited while we looked
    }
  }
  const found: number[] = [];
  const queue = [pid];
  while (queue.length > 0) {
    const parent = queue.shift()!;
    for (const [child, ppid] of parentOf) {
      if (ppid === parent) {
        found.push(child);
        queue.push(child);
      }
    }
  }
  return found;
}

export interface TreeMemory {
  processes: number;
  /** Sum of VmRSS: counts pages shared between the processes once per process. */
  rssMb: number;
  /** Sum of Pss (shared pages divided among their sharers): closer to what the tree really costs. */
  pssMb: number;
}

/** Memory of everything `pid` started (for the main service: the browser and its helpers). */
export function childTreeMemory(pid: number): TreeMemory {
  let rss = 0;
  let pss = 0;
  let processes = 0;
  for (const child of descendants(pid)) {
    try {
      const status = readFileSync(`/proc/${child}/status`, 'utf8');
      rss += kbField(status, 'VmRSS') ?? 0;
      processes += 1;
      pss += kbField(readFileSync(`/proc/${child}/smaps_rollup`, 'utf8'), 'Pss') ?? 0;
    } catch {
      // exited while we looked
    }
  }
  return { processes, rssMb: rss / MB, pssMb: pss / MB };
}

/** Samples `pid`'s RSS every `everyMs` while `work` runs; returns the work's result and the peak. */
export async function peakRssDuring<T>(pid: number, work: () => Promise<T>, everyMs = 5): Promise<{ result: T; beforeMb: number; peakMb: number; afterMb: number }> {
  const beforeMb = rssMb(pid);
  let peakMb = beforeMb;
  const timer = setInterval(() => {
    peakMb = Math.max(peakMb, rssMb(pid));
  }, everyMs);
  try {
    const result = await work();
    const afterMb = rssMb(pid);
    peakMb = Math.max(peakMb, afterMb);
    return { result, beforeMb, peakMb, afterMb };
  } finally {
    clearInterval(timer);
  }
}

/** Lets a service finish what it was doing (closing contexts, freeing buffers) before a reading. */
export function settle(ms = 1_000): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
