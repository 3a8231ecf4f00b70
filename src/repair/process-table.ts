import { readdir, readFile, readlink, stat } from 'node:fs/promises';

/**
 * One open descriptor of a process: what it points to, by name and by device and inode (a
 * second name or a relative path does not hide the file).
 *
 * @example
 * const descriptor: OpenDescriptor = { target: '/home/me/s.jsonl', dev: 2049, ino: 131 };
 */
export interface OpenDescriptor {
  target: string;
  dev: number;
  ino: number;
}

/**
 * What `/proc` says of one process: the facts liveness matches a session against.
 *
 * @example
 * const entry: ProcessEntry = { pid: 42, command: 'node', executable: '/usr/bin/node',
 *   argv: ['node', '/usr/lib/node_modules/@mariozechner/pi-coding-agent/dist/cli.js'],
 *   cwd: '/work/app', descriptors: [] };
 */
export interface ProcessEntry {
  pid: number;
  /** The kernel's short name (`/proc/PID/comm`). */
  command: string;
  /** The executable (`/proc/PID/exe`), or null when this user may not see it. */
  executable: string | null;
  /** The command line (`/proc/PID/cmdline`), empty when unreadable. */
  argv: string[];
  /** The working folder (`/proc/PID/cwd`), or null when this user may not see it. */
  cwd: string | null;
  /** Its open descriptors (empty when this user may not read them). */
  descriptors: OpenDescriptor[];
}

/**
 * The processes of the machine as `/proc` showed them, and whether every one was looked at
 * (reading is bounded in time; what it did not reach may be a session's client).
 *
 * @example
 * const table: ProcessTable = { processes: [], complete: true };
 */
export interface ProcessTable {
  processes: ProcessEntry[];
  complete: boolean;
}

/**
 * Read the process table from `/proc`: every process but this one, newest first (a client still
 * running is more likely recent than a system daemon), for at most `budgetMs` (default 10 s) — a
 * read cut short says so (`complete: false`). Where there is no `/proc`, an empty complete table
 * (nothing more can be known). What this user may not read of a process is left out. Never
 * throws. This is the thin shell; the decisions are pure (`sessionOwners`).
 *
 * @example
 * const table = await readProcessTable();
 * console.log(table.processes.length, table.complete);
 */
export async function readProcessTable(
  options: { budgetMs?: number; now?: () => number; root?: string } = {},
): Promise<ProcessTable> {
  const now = options.now ?? Date.now;
  const root = options.root ?? '/proc';
  const deadline = now() + (options.budgetMs ?? 10_000);
  let pids: number[];
  try {
    pids = (await readdir(root))
      .filter((name) => /^\d+$/.test(name))
      .map(Number)
      .sort((left, right) => right - left);
  } catch {
    return { processes: [], complete: true };
  }
  const processes: ProcessEntry[] = [];
  const others = pids.filter((pid) => pid !== process.pid);
  // A few processes at a time: the reads are many small ones, and a busy machine is slow.
  for (let index = 0; index < others.length; index += BATCH) {
    if (now() >= deadline) return { processes, complete: false };
    const batch = others.slice(index, index + BATCH);
    const read = await Promise.all(batch.map((pid) => readProcess(`${root}/${pid}`, pid)));
    for (const entry of read) if (entry !== null) processes.push(entry);
  }
  return { processes, complete: true };
}

/** How many processes are read at once. */
const BATCH = 16;

/** One process, or null when it is gone. */
async function readProcess(folder: string, pid: number): Promise<ProcessEntry | null> {
  const [comm, cmdline, executable, cwd, descriptors] = await Promise.all([
    readFile(`${folder}/comm`, 'utf8').catch(() => null),
    readFile(`${folder}/cmdline`, 'utf8').catch(() => ''),
    readlink(`${folder}/exe`).catch(() => null),
    readlink(`${folder}/cwd`).catch(() => null),
    readDescriptors(`${folder}/fd`),
  ]);
  if (comm === null) return null;
  return {
    pid,
    command: comm.trim(),
    executable,
    argv: cmdline.split('\0').filter((part, index, all) => part !== '' || index < all.length - 1),
    cwd,
    descriptors,
  };
}

async function readDescriptors(folder: string): Promise<OpenDescriptor[]> {
  let names: string[];
  try {
    names = await readdir(folder);
  } catch {
    return [];
  }
  const read = await Promise.all(
    names.map(async (name): Promise<OpenDescriptor | null> => {
      try {
        const target = await readlink(`${folder}/${name}`);
        if (!target.startsWith('/')) return null; // a pipe, socket or anonymous inode
        const opened = await stat(`${folder}/${name}`);
        return { target, dev: opened.dev, ino: opened.ino };
      } catch {
        return null; // closed meanwhile, or not ours to read
      }
    }),
  );
  return read.filter((descriptor) => descriptor !== null);
}
