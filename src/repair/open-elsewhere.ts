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

/**
 * What {@link openElsewhere} found: the holders, and whether every process was looked at
 * (the scan is bounded in time; what it did not reach may hold the file too).
 *
 * @example
 * const found: OpenHolders = { holders: [], complete: true };
 */
export interface OpenHolders {
  holders: OpenHolder[];
  complete: boolean;
}

/**
 * The other processes that have the file at `path` open, found in `/proc` by the file's device
 * and inode (so a second name or a relative path does not hide it). Newest processes first (a
 * client still writing is more likely recent than a system daemon), for at most `budgetMs`
 * (default 3 s): a scan cut short says so (`complete: false`). None where there is no `/proc`
 * (complete: nothing more can be known), and none from processes whose descriptors this user
 * may not read. Never throws.
 *
 * @example
 * const { holders, complete } = await openElsewhere('session.jsonl');
 * if (holders.length > 0) console.log(`open in pid ${holders[0]?.pid}`);
 * else if (!complete) console.log('not every process could be looked at');
 */
export async function openElsewhere(
  path: string,
  options: { budgetMs?: number; now?: () => number } = {},
): Promise<OpenHolders> {
  const now = options.now ?? Date.now;
  const deadline = now() + (options.budgetMs ?? 3000);
  let target: { dev: number; ino: number };
  let pids: number[];
  try {
    target = await stat(path);
    pids = (await readdir('/proc'))
      .filter((name) => /^\d+$/.test(name))
      .map(Number)
      .sort((left, right) => right - left);
  } catch {
    return { holders: [], complete: true };
  }
  const holders: OpenHolder[] = [];
  for (const pid of pids) {
    if (now() >= deadline) return { holders, complete: false };
    if (pid === process.pid) continue;
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
          holders.push({ pid, command });
          break;
        }
      } catch {
        // Closed meanwhile, or not ours to read.
      }
    }
  }
  return { holders, complete: true };
}
