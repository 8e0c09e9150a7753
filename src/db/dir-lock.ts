// A lock file, so two processes never open the same embedded database directory.
import { closeSync, openSync, readFileSync, rmSync, writeSync } from 'node:fs';

export class DirectoryLocked extends Error {
  override name = 'DirectoryLocked';
}

/** Locks this process holds: a lock file naming our pid that is not in here was left by an earlier process. */
const held = new Set<string>();

/**
 * When a process started, in clock ticks since boot (Linux /proc), so a pid reused by another
 * process (a container restart gives the new process the old one's pid) is told apart. Undefined
 * where /proc is not there; the pid alone is then the identity.
 */
function startTime(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) may hold spaces and parentheses: count fields after its last ')'.
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19];
  } catch {
    return undefined;
  }
}

/** Whether the process that wrote `content` ("pid" or "pid starttime") still runs. */
function holderAlive(content: string): { pid: number; alive: boolean } {
  const [pidText, started] = content.trim().split(/\s+/);
  const pid = Number.parseInt(pidText ?? '', 10);
  if (!Number.isInteger(pid) || pid <= 0) return { pid, alive: false };
  try {
    process.kill(pid, 0);
  } catch (error) {
    // EPERM: the process exists but belongs to someone else.
    if ((error as NodeJS.ErrnoException).code !== 'EPERM') return { pid, alive: false };
  }
  // The pid runs: the same process only if it started when the lock says.
  const now = startTime(pid);
  return { pid, alive: started === undefined || now === undefined || now === started };
}

/**
 * Creates `path` exclusively with our pid and start time. A lock left by a process that is gone
 * (SIGKILL, a container restart, even one that gave us its pid) is taken over; one held by a live
 * process, or already by this one, throws DirectoryLocked. Returns the release function.
 */
export function acquireDirLock(path: string): () => void {
  if (held.has(path)) throw new DirectoryLocked(`The embedded database at ${path.replace(/\/pglite\.lock$/, '')} is already open in this process.`);
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const fd = openSync(path, 'wx');
      writeSync(fd, `${process.pid} ${startTime(process.pid) ?? ''}`.trim());
      closeSync(fd);
      held.add(path);
      let released = false;
      return () => {
        if (released) return;
        released = true;
        held.delete(path);
        rmSync(path, { force: true });
      };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      const holder = holderAlive(readFileSync(path, 'utf8'));
      // Our own pid in a lock we do not hold is an earlier process's, whatever its start time says.
      if (holder.alive && holder.pid !== process.pid) {
        throw new DirectoryLocked(
          `The embedded database at ${path.replace(/\/pglite\.lock$/, '')} is in use by process ${holder.pid}; ` +
            'stop it, or set DATA_DIR to another directory or DATABASE_URL to a PostgreSQL server.',
        );
      }
      rmSync(path, { force: true }); // stale: its owner is gone
    }
  }
  throw new DirectoryLocked(`Could not lock ${path}.`);
}
