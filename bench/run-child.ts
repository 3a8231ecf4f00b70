import { spawn } from 'node:child_process';

/** What a child process said: its last line of JSON, or why there was none. */
export type ChildAnswer<T> = { ok: true; value: T; ms: number } | { ok: false; reason: string };

/**
 * Run a bench script in a process of its own (the pinned Node, the same flags) and parse the
 * last line it prints as JSON. The wall time includes the process's start-up.
 *
 * @example
 * const answer = await runChild<{ ms: number }>('bench/revival-child.mjs', ['inspect', path]);
 */
export function runChild<T>(
  script: string,
  args: string[],
  timeoutMs = 30 * 60 * 1000,
  /** Called with each line the child writes to stderr, as it comes (its progress). */
  onStderrLine?: (line: string) => void,
): Promise<ChildAnswer<T>> {
  return new Promise((resolve) => {
    const started = performance.now();
    const child = spawn(process.execPath, [script, ...args], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on('data', (chunk: Buffer) => out.push(chunk));
    let partial = '';
    child.stderr.on('data', (chunk: Buffer) => {
      err.push(chunk);
      if (onStderrLine === undefined) return;
      const lines = (partial + chunk.toString('utf8')).split('\n');
      partial = lines.pop() ?? '';
      for (const line of lines) onStderrLine(line);
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      const ms = performance.now() - started;
      const lines = Buffer.concat(out).toString('utf8').trim().split('\n');
      const last = lines.at(-1) ?? '';
      try {
        resolve({ ok: true, value: JSON.parse(last) as T, ms });
      } catch {
        const stderr = Buffer.concat(err).toString('utf8').trim().split('\n').slice(-3).join(' | ');
        resolve({
          ok: false,
          reason: `${script} exited ${signal ?? code}${stderr === '' ? '' : `: ${stderr}`}`,
        });
      }
    });
  });
}

/**
 * Time a whole process (start-up included), as a user at a shell would: resolves to the wall
 * time, the exit code, how many bytes it printed, its last three lines on stderr (`stderr`)
 * and the whole of it (`stderrText`).
 *
 * @example
 * const timed = await timeProcess(['src/cli/main.ts', 'status', folder, '--json']);
 */
export function timeProcess(
  args: string[],
  env: NodeJS.ProcessEnv = process.env,
): Promise<{
  ms: number;
  exitCode: number | null;
  stdoutBytes: number;
  stderr: string;
  stderrText: string;
}> {
  return new Promise((resolve) => {
    const started = performance.now();
    const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'], env });
    let stdoutBytes = 0;
    const err: Buffer[] = [];
    child.stdout.on('data', (chunk: Buffer) => {
      stdoutBytes += chunk.length;
    });
    child.stderr.on('data', (chunk: Buffer) => err.push(chunk));
    child.on('close', (code) => {
      const ms = performance.now() - started;
      const stderrText = Buffer.concat(err).toString('utf8');
      resolve({
        ms,
        exitCode: code,
        stdoutBytes,
        stderr: stderrText.trim().split('\n').slice(-3).join(' | '),
        stderrText,
      });
    });
  });
}

/** The median of some numbers (NaN for none). */
export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  if (sorted.length === 0) return Number.NaN;
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1
    ? (sorted[middle] as number)
    : ((sorted[middle - 1] as number) + (sorted[middle] as number)) / 2;
}
