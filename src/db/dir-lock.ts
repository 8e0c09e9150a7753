// A pid lock file, so two processes never open the same embedded database directory.
import { closeSync, openSync, readFileSync, rmSync, writeSync } from 'node:fs';

export class DirectoryLocked extends Error {
  override name = 'DirectoryLocked';
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: the process exists but belongs to someone else.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Creates `path` exclusively with our pid. A lock left by a dead process (SIGKILL) is taken over;
 * one held by a live process throws DirectoryLocked. Returns the release function.
 */
export function acquireDirLock(path: string): () => void {
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const fd = openSync(path, 'wx');
      writeSync(fd, String(process.pid));
      closeSync(fd);
      let released = false;
      return () => {
        if (released) return;
        released = true;
        rmSync(path, { force: true });
      };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      const holder = Number.parseInt(readFileSync(path, 'utf8'), 10);
      if (Number.isInteger(holder) && holder !== process.pid && isAlive(holder)) {
        throw new DirectoryLocked(
          `The embedded database at ${path.replace(/\/pglite\.lock$/, '')} is in use by process ${holder}; ` +
            'stop it, or set DATA_DIR to another directory or DATABASE_URL to a PostgreSQL server.',
        );
      }
      if (holder === process.pid) {
        throw new DirectoryLocked(`The embedded database at ${path} is already open in this process.`);
      }
      rmSync(path, { force: true }); // stale: its owner is gone
    }
  }
  throw new DirectoryLocked(`Could not lock ${path}.`);
}
