import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { parseCommandLine } from '../../src/cli/command.ts';
import { UserError } from '../../src/cli/user-error.ts';

describe('parseCommandLine: a mistaken option is one line that says how to fix it', () => {
  test('a negative number after an option keeps parseArgs advice (--name=-N), on one line', () => {
    assert.throws(
      () =>
        parseCommandLine('status', ['--max-revivals', '-1'], {
          'max-revivals': { type: 'string' },
        }),
      (error: unknown) => {
        assert.ok(error instanceof UserError);
        assert.doesNotMatch(error.message, /\n/);
        assert.match(error.message, /^status: Option '--max-revivals' argument is ambiguous\./);
        assert.match(error.message, /'--max-revivals=-XYZ'/);
        return true;
      },
    );
  });
});
