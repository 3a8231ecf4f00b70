import assert from 'node:assert/strict';
import { execFile, execFileSync } from 'node:child_process';
import { lstatSync, mkdirSync, statSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { makeTempFolder, removeFolder } from '../support/transcripts.ts';

/*
 * Only regular files are read. A FIFO named X.jsonl (which blocks a reader until a writer
 * comes), a symlink to /dev/zero or /dev/urandom (endless bytes), a folder named X.jsonl: each
 * is "not a regular file", decided at open from fstat, before any read — never a hang, never
 * unbounded memory. Each read runs in a child process with a time limit; the test first proves
 * the thing it reads really is what it claims.
 */

const REPO = fileURLToPath(new URL('../../', import.meta.url));
const NODE = join(REPO, 'node_modules/.bin/node');
const CHILD = join(REPO, 'test/support/read-kinds-child.ts');
const CLI = join(REPO, 'src/cli/main.ts');
const LIMIT_MS = 20_000;

function run(args: string[], cwd: string): Promise<{ stdout: string; stderr: string; ms: number }> {
  const started = Date.now();
  return new Promise((resolve, reject) => {
    execFile(
      NODE,
      args,
      { cwd, timeout: LIMIT_MS * 2, killSignal: 'SIGKILL', maxBuffer: 1024 * 1024 },
      (error, stdout, stderr) => {
        const ms = Date.now() - started;
        if (error !== null && (error as { killed?: boolean }).killed === true) {
          reject(new Error(`${args.join(' ')} did not finish in ${LIMIT_MS * 2} ms (a hang)`));
          return;
        }
        resolve({ stdout, stderr, ms });
      },
    );
  });
}

interface Kind {
  name: string;
  make: (path: string) => void;
  prove: (path: string) => boolean;
  detail: RegExp;
}

const KINDS: Kind[] = [
  {
    name: 'a FIFO named X.jsonl',
    make: (path) => execFileSync('mkfifo', [path]),
    prove: (path) => lstatSync(path).isFIFO(),
    detail: /not a regular file \(a FIFO\)/,
  },
  {
    name: 'a symlink to /dev/zero',
    make: (path) => symlinkSync('/dev/zero', path),
    prove: (path) => lstatSync(path).isSymbolicLink() && statSync(path).isCharacterDevice(),
    detail: /not a regular file \(a character device\)/,
  },
  {
    name: 'a symlink to /dev/urandom',
    make: (path) => symlinkSync('/dev/urandom', path),
    prove: (path) => lstatSync(path).isSymbolicLink() && statSync(path).isCharacterDevice(),
    detail: /not a regular file \(a character device\)/,
  },
  {
    name: 'a folder named X.jsonl',
    make: (path) => mkdirSync(path),
    prove: (path) => lstatSync(path).isDirectory(),
    detail: /is a folder|not a regular file \(a folder\)/,
  },
];

for (const kind of KINDS) {
  test(`${kind.name}: peek, inspect and status answer "not a regular file" at once`, async () => {
    const folder = await makeTempFolder('llm-agent-kinds-');
    try {
      const path = join(folder, 'run.jsonl');
      kind.make(path);
      assert.ok(kind.prove(path), `${kind.name} was not made`);
      const { stdout, stderr, ms } = await run([CHILD, path], folder);
      assert.ok(ms < LIMIT_MS, `took ${ms} ms`);
      const answers = JSON.parse(stdout || '{}') as Record<
        string,
        { reason: string; detail: string }
      >;
      for (const reader of ['peek', 'inspect', 'status']) {
        const answer = answers[reader];
        assert.ok(answer !== undefined, `${reader}: no answer (${stderr})`);
        assert.match(answer.detail, kind.detail, `${reader}: ${JSON.stringify(answer)}`);
      }
      assert.equal(answers.peek?.reason, 'not-a-transcript');
      assert.equal(answers.inspect?.reason, 'unreadable');
      assert.ok(kind.prove(path), `${kind.name} is still there`);
      // The command a person runs: `llm-agent status PATH` ends in time and finds no run to
      // revive there (a folder is searched for transcripts; anything else is refused).
      const status = await run([CLI, 'status', path, '--json'], folder);
      assert.ok(status.ms < LIMIT_MS, `status took ${status.ms} ms`);
      assert.match(
        status.stdout + status.stderr,
        /not a regular file|not a file or a folder|"revivable":0/,
      );
    } finally {
      await removeFolder(folder);
    }
  });
}
