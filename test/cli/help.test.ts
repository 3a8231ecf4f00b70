import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { isAbsolute, join } from 'node:path';
import { describe, test } from 'node:test';
import { COMMANDS, nearestCommand } from '../../src/cli/main.ts';
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
    // The docs are named where this installation has them, so the path opens as printed.
    const docs = /^Docs: (.+)$/m.exec(top?.stdout ?? '')?.[1] ?? '';
    assert.ok(isAbsolute(docs), docs);
    assert.match(await readFile(docs, 'utf8'), /^# /);
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

describe('a mistyped command', () => {
  test('is answered with the command it most likely meant, one line, exit 2', async () => {
    const result = await runCli(['staus', 'runs/'], { cwd: REPO });
    assert.equal(result.code, 2);
    assert.match(
      result.stderr,
      /^llm-agent: unknown command "staus" \(did you mean status\? commands: /,
    );
    assert.equal(result.stderr.split('\n').length, 2);
    assert.match(result.stderr, /; see llm-agent --help\)\n$/);
  });

  test('names --help the way the command was run, so that it can be pasted (npx here)', async () => {
    const result = await runCli(['staus'], { cwd: REPO, env: { npm_command: 'exec' } });
    assert.equal(result.code, 2);
    assert.match(result.stderr, /; see npx llm-agent-revival --help\)\n$/);
  });

  test('nearestCommand: typos, transpositions and prefixes; nothing for what is far from all', () => {
    assert.equal(nearestCommand('reviev'), 'revive');
    assert.equal(nearestCommand('shwo'), 'show');
    assert.equal(nearestCommand('REPAIR'), 'repair');
    assert.equal(nearestCommand('work'), 'worker');
    assert.equal(nearestCommand('exprot'), 'export');
    assert.equal(nearestCommand('frobnicate'), null);
    assert.equal(nearestCommand('x'.repeat(10_000)), null);
  });
});

describe('every command’s usage lines', () => {
  test('name every option its help lists (the line printed with a mistake is complete)', async () => {
    const missing: string[] = [];
    for (const entry of COMMANDS) {
      const help = (await entry.load()).help;
      const usage = help.slice(0, help.indexOf('\n\n'));
      const options = help.slice(help.indexOf('\nOptions:'));
      assert.ok(options.startsWith('\nOptions:'), `${entry.name} --help has no Options section`);
      for (const [, flag] of options.matchAll(/^\s+(?:-\w, )?(--[a-z-]+)/gm)) {
        if (flag !== '--help' && !usage.includes(`${flag}`)) missing.push(`${entry.name} ${flag}`);
      }
    }
    assert.deepEqual(missing, []);
  });
});
