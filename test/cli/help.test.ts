import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { hasStackTrace, REPO, runCli } from './support/cli-fixtures.ts';

describe('llm-agent --help and --version', () => {
  test('--version prints the package version', async () => {
    const { version } = JSON.parse(await readFile(join(REPO, 'package.json'), 'utf8')) as {
      version: string;
    };
    const result = await runCli(['--version'], { cwd: REPO });
    assert.equal(result.code, 0);
    assert.equal(result.stdout, `${version}\n`);
  });

  test('--help lists every command and the exit codes; every command has its own --help', async () => {
    const commands = ['status', 'revive', 'show', 'run', 'demo'];
    const [top, ...each] = await Promise.all([
      runCli(['--help'], { cwd: REPO }),
      ...commands.map((command) => runCli([command, '--help'], { cwd: REPO })),
    ]);
    assert.equal(top?.code, 0);
    for (const command of commands) assert.match(top?.stdout ?? '', new RegExp(`\\n  ${command} `));
    assert.match(top?.stdout ?? '', /3 revivable runs exist/);
    each.forEach((result, index) => {
      assert.equal(result.code, 0, result.stderr);
      assert.match(result.stdout, new RegExp(`^Usage: llm-agent ${commands[index]} `));
      assert.match(result.stdout, /Exit codes/);
    });
  });

  test('an unknown command is one line and exit 2', async () => {
    const result = await runCli(['frobnicate'], { cwd: REPO });
    assert.equal(result.code, 2);
    assert.equal(
      result.stderr,
      'llm-agent: unknown command "frobnicate" (commands: status, revive, show, ui, run, worker, export, import, db, repair, demo; see llm-agent --help)\n',
    );
    assert.equal(hasStackTrace(result.stderr), false);
  });
});
