import { readdir, readFile, stat } from 'node:fs/promises';

/**
 * A process that has a file open.
 *
 * @example
 * const holder: OpenHolder = { pid: 4242, command: 'claude' };
 */
export interface OpenHolder {
  pid: number;
  command: string;
}

/** Beyond this many processes the scan stops: it is a courtesy check, bounded in time. */
const MAX_PROCESSES = 4096;

/**
 * The other processes that have the file at `path` open, found in `/proc` by the file's device
 * and inode (so a second name or a relative path does not hide it). Empty where there is no
 * `/proc`, and for processes whose descriptors this user may not read. Never throws.
 *
 * @example
 * const holders = await openElsewhere('session.jsonl');
 * if (holders.length > 0) console.log(`open in pid ${holders[0]?.pid}`);
 */
export async function openElsewhere(path: string): Promise<OpenHolder[]> {
  let target: { dev: number; ino: number };
  let pids: string[];
  try {
    target = await stat(path);
    pids = (await readdir('/proc')).filter((name) => /^\d+$/.test(name));
  } catch {
    return [];
  }
  const holders: OpenHolder[] = [];
  for (const pid of pids.slice(0, MAX_PROCESSES)) {
    if (Number(pid) === process.pid) continue;
    let fds: string[];
    try {
      fds = await readdir(`/proc/${pid}/fd`);
    } catch {
      continue;
    }
    for (const fd of fds) {
      try {
        const opened = await stat(`/proc/${pid}/fd/${fd}`);
        if (opened.dev === target.dev && opened.ino === target.ino) {
          const command = (await readFile(`/proc/${pid}/comm`, 'utf8').catch(() => '?')).trim();
          holders.push({ pid: Number(pid), command });
          break;
        }
      } catch {
        // Closed meanwhile, or not ours to read.
      }
    }
  }
  return holders;
}
