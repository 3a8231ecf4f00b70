/*
 * The process table of this (Linux) machine, read from /proc, for the end-to-end tests of
 * test/clients/ and the fixture recorders that share their drivers: a process's tree, whether a
 * process lives, and a kill that reaches every descendant. The clients start each tool command
 * in a process group or session of its own, so killing a client's group is not enough: the
 * whole tree is frozen (SIGSTOP, so nothing forks or is re-parented meanwhile), then killed.
 */
import { readdirSync, readFileSync } from 'node:fs';

/** One process, as /proc tells it. */
export interface ProcessEntry {
  /** The parent's pid. */
  parent: number;
  /** The state letter: `R`, `S`, `T`, … and `Z` for a zombie. */
  state: string;
  /** The command line, its arguments joined by spaces ('' when it cannot be read). */
  command: string;
}

/** Every process of the machine, from /proc; one that ends while the table is read is left out. */
export function processTable(): Map<number, ProcessEntry> {
  const table = new Map<number, ProcessEntry>();
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${name}/stat`, 'utf8');
    } catch {
      continue; // gone meanwhile
    }
    let command = '';
    try {
      command = readFileSync(`/proc/${name}/cmdline`, 'utf8').replaceAll('\0', ' ');
    } catch {
      // gone meanwhile, or not ours to read: still a node of the tree
    }
    // pid (comm) state ppid …: comm may hold spaces and parentheses, so split after the last ')'.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    table.set(Number(name), { parent: Number(fields[1]), state: fields[0] ?? '?', command });
  }
  return table;
}

/** `root` and every process descended from it (`root` first, then breadth first). */
export function processTree(root: number): number[] {
  const table = processTable();
  const tree = [root];
  for (let index = 0; index < tree.length; index += 1) {
    for (const [pid, entry] of table) if (entry.parent === tree[index]) tree.push(pid);
  }
  return tree;
}

/** Live (not zombie) processes, this one aside, whose command line contains `text`. */
export function processesMentioning(text: string): number[] {
  const found: number[] = [];
  for (const [pid, entry] of processTable()) {
    if (pid !== process.pid && entry.state !== 'Z' && entry.command.includes(text)) found.push(pid);
  }
  return found;
}

/** True while `pid` exists and is not a zombie. */
export function alive(pid: number): boolean {
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return false;
  }
  return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[0] !== 'Z';
}

/** Send `name` to `pid` (a negative pid: its process group); one already gone is no error. */
export function signal(pid: number, name: NodeJS.Signals): void {
  try {
    process.kill(pid, name);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ESRCH') throw error;
  }
}

/**
 * SIGKILL `root`, its process group and every descendant (whatever group it is in): the tree is
 * frozen first, round by round until no new process appears, so that none escapes by forking or
 * being re-parented. Returns the pids killed.
 */
export function killTree(root: number): number[] {
  const frozen = new Set<number>();
  for (let round = 0; round < 20; round += 1) {
    const fresh = processTree(root).filter((pid) => !frozen.has(pid));
    if (fresh.length === 0) break;
    for (const pid of fresh) {
      signal(pid, 'SIGSTOP');
      frozen.add(pid);
    }
  }
  signal(-root, 'SIGKILL');
  for (const pid of frozen) signal(pid, 'SIGKILL');
  return [...frozen];
}
