/**
 * A reader that stops reading (`llm-agent show run.jsonl | head`) is no failure of the
 * command: no stack trace for the EPIPE, and the exit code the command would have had.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { rm } from 'node:fs/promises';
import { hasStackTrace, REPO, temporaryFolder, writeFixtureTree } from './support/cli-fixtures.ts';

/** Runs the CLI with its stdout closed by the reader before the command writes a byte. */
function runIntoClosedPipe(
  args: string[],
  cwd: string,
): Promise<{ code: number | null; stderr: string }> {
  return new Promise((done, fail) => {
    const child = spawn(
      join(REPO, 'node_modules/.bin/node'),
      [join(REPO, 'src/cli/main.ts'), ...args],
      { cwd, env: { ...process.env, NO_COLOR: '1' }, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    child.stdout.destroy();
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      stderr += chunk;
    });
    child.on('error', fail);
    child.on('close', (code) => done({ code, stderr }));
  });
}

describe('output into a pipe its reader has closed', () => {
  let folder = '';
  before(async () => {
    folder = await temporaryFolder();
    await writeFixtureTree(folder);
  });
  after(async () => {
    await rm(folder, { recursive: true, force: true });
  });

  for (const args of [['status', 'runs'], ['show', 'runs/main.jsonl', '--envelopes'], ['--help']]) {
    test(`${args.join(' ')}: no stack trace, the command's own exit code`, async () => {
      const result = await runIntoClosedPipe(args, folder);
      assert.equal(hasStackTrace(result.stderr), false, result.stderr);
      assert.doesNotMatch(result.stderr, /EPIPE/);
      // status exits 3: the fixture's runs/ holds revivable runs.
      assert.equal(result.code, args[0] === 'status' ? 3 : 0, result.stderr);
    });
  }
});
