import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { parseCommandLine } from '../../src/cli/command.ts';
import { OptionError } from '../../src/cli/option-error.ts';
import { hasStackTrace, runCli, temporaryFolder } from './support/cli-fixtures.ts';

describe('parseCommandLine: a mistaken option is one line that says how to fix it', () => {
  test('a negative number after an option says how to write one, on one line', () => {
    assert.throws(
      () =>
        parseCommandLine('status', ['--max-revivals', '-1'], {
          'max-revivals': { type: 'string' },
        }),
      (error: unknown) => {
        assert.ok(error instanceof OptionError);
        assert.doesNotMatch(error.message, /\n/);
        assert.equal(
          error.message,
          'status: --max-revivals needs a value (one that starts with - is written --max-revivals=-…)',
        );
        return true;
      },
    );
  });
});

describe('an option error is one friendly line with the usage of that command', () => {
  const cases: { argv: string[]; line: string }[] = [
    {
      argv: ['status', '--bogus'],
      line: 'llm-agent: status: unknown option --bogus. Usage: llm-agent status [PATH…]',
    },
    {
      argv: ['run', '--agents'],
      line: 'llm-agent: run: --agents needs a value. Usage: llm-agent run --agents MODULE',
    },
    {
      argv: ['status', '--json=yes'],
      line: 'llm-agent: status: --json takes no value. Usage: llm-agent status',
    },
    {
      argv: ['show', '-x'],
      line: 'llm-agent: show: unknown option -x. Usage: llm-agent show PATH',
    },
    {
      argv: ['revive', '--nope'],
      line: 'llm-agent: revive: unknown option --nope. Usage: llm-agent revive PATH…',
    },
    {
      argv: ['demo', '--fast'],
      line: 'llm-agent: demo: unknown option --fast. Usage: llm-agent demo',
    },
  ];
  for (const { argv, line } of cases) {
    test(argv.join(' '), async () => {
      const result = await runCli(argv, { cwd: await temporaryFolder() });
      assert.equal(result.code, 2);
      assert.equal(result.stdout, '');
      const lines = result.stderr.split('\n').filter((text) => text !== '');
      assert.equal(lines.length, 1, result.stderr);
      assert.ok(lines[0]?.startsWith(line), `${lines[0]}\nshould start with\n${line}`);
      // None of parseArgs' own wording (its advice about '--' and positionals).
      assert.doesNotMatch(result.stderr, /positional|To specify|Unknown option/);
      assert.ok(!hasStackTrace(result.stderr));
    });
  }
});
