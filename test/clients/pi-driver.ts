/*
 * Driving the real pi coding agent (`@mariozechner/pi-coding-agent`, the pinned devDependency)
 * offline, for test/clients/pi.test.ts and the fixture recorder of test/fixtures/foreign/pi/:
 * a throwaway HOME whose `.pi/agent/models.json` names one custom provider on 127.0.0.1 (a
 * scripted OpenAI Chat Completions server), pi started detached in print mode, and a kill that
 * reaches every descendant. pi's bash tool starts each command in a process group of its own,
 * so killing pi's group is not enough: the whole tree is frozen (SIGSTOP, so nothing forks or
 * is re-parented meanwhile), then killed.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, realpathSync } from 'node:fs';
import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const PACKAGE = fileURLToPath(
  new URL('../../node_modules/@mariozechner/pi-coding-agent/', import.meta.url),
);

/** The pi CLI script the pinned package installs (run with this Node). */
export const PI_CLI = realpathSync(join(PACKAGE, 'dist/cli.js'));

/** The installed pi version. */
export const PI_VERSION = (
  JSON.parse(readFileSync(join(PACKAGE, 'package.json'), 'utf8')) as { version: string }
).version;

/** The model the fake provider offers. */
export const PI_MODEL = 'fake-model';

/** A throwaway HOME for pi, and the folder it works in. */
export interface PiHome {
  root: string;
  home: string;
  work: string;
  env: NodeJS.ProcessEnv;
}

/** A fresh HOME for pi (its model server is named by {@link serveModelsFrom}). */
export async function makePiHome(name = 'pi-client-'): Promise<PiHome> {
  const root = await mkdtemp(join(tmpdir(), name));
  const home = join(root, 'home');
  const work = join(root, 'work');
  await mkdir(join(home, '.pi', 'agent'), { recursive: true });
  await mkdir(work, { recursive: true });
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    HOME: home,
    PI_OFFLINE: '1',
    LANG: 'C.UTF-8',
    TERM: 'dumb',
  };
  return { root, home, work, env };
}

/** Make pi's only provider, `fake`, the OpenAI Chat Completions server at `baseUrl` (…/v1). */
export async function serveModelsFrom(home: PiHome, baseUrl: string): Promise<void> {
  const models = {
    providers: {
      fake: {
        baseUrl,
        api: 'openai-completions',
        apiKey: 'test-key',
        compat: { supportsDeveloperRole: false, supportsReasoningEffort: false },
        models: [
          {
            id: PI_MODEL,
            name: 'Scripted model',
            reasoning: false,
            input: ['text'],
            contextWindow: 128000,
            maxTokens: 4096,
          },
        ],
      },
    },
  };
  await writeFile(join(home.home, '.pi', 'agent', 'models.json'), JSON.stringify(models, null, 2));
}

/** The arguments of one print-mode run against the fake provider. */
export function piArgs(prompt: string, ...extra: string[]): string[] {
  return ['--offline', '--provider', 'fake', '--model', PI_MODEL, ...extra, '-p', prompt];
}

/** A pi process started detached (its own process group), stdin closed, output collected. */
export interface RunningPi {
  child: ChildProcess;
  output: () => string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** Start pi in `home.work` with `args`. */
export function startPi(home: PiHome, args: readonly string[]): RunningPi {
  const child = spawn(process.execPath, [PI_CLI, ...args], {
    cwd: home.work,
    env: home.env,
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    output += chunk.toString('utf8');
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    output += chunk.toString('utf8');
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.on('exit', (code, signal) => resolve({ code, signal }));
  });
  return { child, output: () => output, exited };
}

/** Run pi to its end, killed (with its tree) if it takes longer than `timeoutMs`. */
export async function runPi(
  home: PiHome,
  args: readonly string[],
  timeoutMs: number,
): Promise<{ code: number | null; signal: NodeJS.Signals | null; output: string }> {
  const running = startPi(home, args);
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<'timeout'>((resolve) => {
    timer = setTimeout(() => resolve('timeout'), timeoutMs);
  });
  const result = await Promise.race([running.exited, timeout]);
  clearTimeout(timer);
  if (result === 'timeout') {
    killTree(running.child.pid as number);
    await running.exited;
    throw new Error(`pi did not finish within ${timeoutMs} ms; output:\n${running.output()}`);
  }
  return { ...result, output: running.output() };
}

/** Poll `check` every 50 ms until it holds; throw, naming `what`, after `timeoutMs`. */
export async function waitFor(
  check: () => boolean,
  timeoutMs: number,
  what: string,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline)
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** Parent of every live process, from /proc (Linux). */
function parents(): Map<number, number> {
  const parentOf = new Map<number, number>();
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${name}/stat`, 'utf8');
    } catch {
      continue; // gone meanwhile
    }
    // pid (comm) state ppid …: comm may hold spaces and parentheses, so split after the last ')'.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    parentOf.set(Number(name), Number(fields[1]));
  }
  return parentOf;
}

/** `root` and every process descended from it. */
export function processTree(root: number): number[] {
  const parentOf = parents();
  const tree = [root];
  for (let index = 0; index < tree.length; index += 1) {
    for (const [pid, parent] of parentOf) if (parent === tree[index]) tree.push(pid);
  }
  return tree;
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

function signal(pid: number, name: NodeJS.Signals): void {
  try {
    process.kill(pid, name);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ESRCH') throw error;
  }
}

/** Pids of live processes (zombies excluded) whose command line contains `text`. */
export function processesMentioning(text: string): number[] {
  const found: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name) || Number(name) === process.pid) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      if (stat.slice(stat.lastIndexOf(')') + 2).startsWith('Z')) continue;
      const command = readFileSync(`/proc/${name}/cmdline`, 'utf8');
      if (command.includes(text)) found.push(Number(name));
    } catch {
      // gone meanwhile
    }
  }
  return found;
}

/** The session files pi wrote below `home`. */
export function sessionFiles(home: PiHome): string[] {
  const root = join(home.home, '.pi', 'agent', 'sessions');
  if (!existsSync(root)) return [];
  const files: string[] = [];
  for (const folder of readdirSync(root)) {
    for (const file of readdirSync(join(root, folder))) {
      if (file.endsWith('.jsonl')) files.push(join(root, folder, file));
    }
  }
  return files.sort();
}
