import { type ChildProcess, spawn } from 'node:child_process';
import { linkSync, renameSync, rmSync } from 'node:fs';

/*
 * A path that keeps changing what it names, as fast as the kernel renames: a same-user attacker
 * swapping a file a command checked for something else before the command reads it again.
 * The flipping runs in a process of its own (a loop of atomic renames), so it goes on
 * while the command under attack runs, whatever that command blocks on.
 */

/** What replaces the good file at the path, half of the time. */
export type FlipTo =
  /** A symbolic link to `target` (e.g. /dev/zero), made anew at each flip. */
  | { kind: 'symlink'; target: string }
  /** Another name of `source` (a hard link: e.g. of a FIFO kept beside it). */
  | { kind: 'hardlink'; source: string };

/** A running flipper. */
export interface PathFlipper {
  /** How many times the path changed so far (as last reported, every 256 flips). */
  flips(): number;
  /** Stop flipping; the path is left holding the good file. */
  stop(): Promise<void>;
}

const FLIPPER = `
const fs = require('node:fs');
const [path, good, kind, other] = process.argv.slice(1);
const spare = path + '.flip';
const pause = new Int32Array(new SharedArrayBuffer(4));
let count = 0;
for (;;) {
  fs.rmSync(spare, { force: true });
  fs.linkSync(good, spare);
  fs.renameSync(spare, path);
  fs.rmSync(spare, { force: true });
  if (kind === 'symlink') fs.symlinkSync(other, spare);
  else fs.linkSync(other, spare);
  fs.renameSync(spare, path);
  count += 2;
  // A breath every few swaps: fast enough to land inside any check-then-read window, slow
  // enough to leave the machine's cores to the command under attack.
  if (count % 16 === 0) Atomics.wait(pause, 0, 0, 1);
  if (count % 256 === 0) process.stdout.write(count + '\\n');
}
`;

/**
 * Start swapping `path` between another name of `good` and `to`. Resolves once the first flips
 * are reported.
 *
 * @example
 * const flipper = await startPathFlipper(path, keep, { kind: 'symlink', target: '/dev/zero' });
 * await flipper.stop();
 */
export async function startPathFlipper(
  path: string,
  good: string,
  to: FlipTo,
): Promise<PathFlipper> {
  const other = to.kind === 'symlink' ? to.target : to.source;
  const child: ChildProcess = spawn(process.execPath, ['-e', FLIPPER, path, good, to.kind, other], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let count = 0;
  await new Promise<void>((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', (code) => reject(new Error(`the path flipper exited (${code})`)));
    child.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
      const last = chunk.trim().split('\n').at(-1);
      if (last !== undefined && last !== '') count = Number(last);
      if (count > 0) resolve();
    });
  });
  return {
    flips: () => count,
    async stop() {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGKILL');
      await exited;
      rmSync(`${path}.flip`, { force: true });
      linkSync(good, `${path}.flip`);
      renameSync(`${path}.flip`, path);
    },
  };
}
