/*
 * Running processes for the end-to-end tests of test/clients/ and the fixture recorders that
 * share their drivers: a client started detached with its output kept, a run bounded in time,
 * `llm-agent repair` as a user runs it, polling until something holds, and a read that does not
 * throw.
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { killTree } from './process-tree.ts';

/** The repository's root folder (with a trailing slash). */
export const ROOT = fileURLToPath(new URL('../../../', import.meta.url));

/** The `llm-agent` CLI, from source. */
export const CLI = join(ROOT, 'src', 'cli', 'main.ts');

/**
 * Poll `check` every 50 ms until it gives a value (neither null nor false) and return that
 * value; throw, naming `what`, after `timeoutMs`.
 */
export async function waitFor<T>(
  check: () => T | null | false | Promise<T | null | false>,
  timeoutMs: number,
  what: string,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== null && value !== false) return value;
    if (Date.now() > deadline)
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** A child's output so far: its stdout, its stderr, and both as they came. */
export interface Collected {
  stdout: () => string;
  stderr: () => string;
  output: () => string;
}

/** Keep a child's output. */
export function collect(child: ChildProcess): Collected {
  let stdout = '';
  let stderr = '';
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    const text = chunk.toString('utf8');
    stdout += text;
    output += text;
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    const text = chunk.toString('utf8');
    stderr += text;
    output += text;
  });
  return { stdout: () => stdout, stderr: () => stderr, output: () => output };
}

/** How a child ended (both null when it could not be started). */
export interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

/** A process started detached (its own process group), stdin closed, output collected. */
export interface RunningChild extends Collected {
  child: ChildProcess;
  exited: Promise<Exit>;
}

/** Start `file` with `args` in `cwd`, detached, stdin at /dev/null. */
export function startDetached(
  file: string,
  args: readonly string[],
  options: { cwd: string; env: NodeJS.ProcessEnv },
): RunningChild {
  const child = spawn(file, args, {
    cwd: options.cwd,
    env: options.env,
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  const output = collect(child);
  const exited = new Promise<Exit>((resolve) => {
    child.on('exit', (code, signal) => resolve({ code, signal }));
    child.on('error', () => resolve({ code: null, signal: null }));
  });
  return { child, ...output, exited };
}

/**
 * Wait for `running` to end; if it takes longer than `timeoutMs`, kill it with its whole tree
 * and throw, naming it `name`, with its output.
 */
export async function finishWithin(
  running: RunningChild,
  timeoutMs: number,
  name: string,
): Promise<Exit & { output: string }> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<'timeout'>((resolve) => {
    timer = setTimeout(() => resolve('timeout'), timeoutMs);
  });
  const result = await Promise.race([running.exited, timeout]);
  clearTimeout(timer);
  if (result === 'timeout') {
    if (running.child.pid !== undefined) killTree(running.child.pid);
    await running.exited;
    throw new Error(`${name} did not finish within ${timeoutMs} ms; output:\n${running.output()}`);
  }
  return { ...result, output: running.output() };
}

/** Run to completion with stdin at /dev/null, in `cwd` (the repository by default), bounded in time. */
export function run(
  file: string,
  args: readonly string[],
  options: { cwd?: string; env: Record<string, string>; timeoutMs: number },
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = execFile(
      file,
      args,
      {
        cwd: options.cwd ?? ROOT,
        env: options.env,
        timeout: options.timeoutMs,
        killSignal: 'SIGKILL',
        maxBuffer: 64 * 1024 * 1024,
      },
      (error, stdout, stderr) => {
        const code = error === null ? 0 : typeof error.code === 'number' ? error.code : null;
        resolve({ code, stdout, stderr });
      },
    );
    child.stdin?.end();
  });
}

/**
 * `llm-agent repair …` as a user runs it (from source, in the repository, with only PATH and
 * HOME set: HOME is `home`, the repository by default), killed after `timeoutMs`.
 */
export function repairCli(
  args: readonly string[],
  options: { home?: string; timeoutMs?: number } = {},
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return run(process.execPath, [CLI, 'repair', ...args], {
    env: { PATH: process.env.PATH ?? '', HOME: options.home ?? ROOT },
    timeoutMs: options.timeoutMs ?? 60_000,
  });
}

/** The text of the file at `path`, or null when it cannot be read (not there yet, gone). */
export function readFileSafe(path: string): string | null {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return null;
  }
}
