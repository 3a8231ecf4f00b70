import assert from 'node:assert/strict';
import { test } from 'node:test';
import { idempotencyOfMcpTool } from '../../src/loop/mcp-idempotency.ts';

/* MCP's annotations map to a declared idempotency, conservatively; nothing is ever re-run. */

test('MCP annotations map to our idempotency, the worst case when in doubt', () => {
  const cases: [Parameters<typeof idempotencyOfMcpTool>[0], string][] = [
    [undefined, 'side-effect'],
    [{}, 'side-effect'],
    [{ readOnlyHint: true }, 'read-only'],
    [{ readOnlyHint: true, destructiveHint: true }, 'read-only'],
    [{ idempotentHint: true }, 'side-effect'], // destructiveHint defaults to true in MCP
    [{ idempotentHint: true, destructiveHint: true }, 'side-effect'],
    [{ idempotentHint: true, destructiveHint: false }, 'idempotent'],
    [{ readOnlyHint: false, idempotentHint: false, destructiveHint: false }, 'side-effect'],
  ];
  for (const [annotations, expected] of cases) {
    assert.equal(idempotencyOfMcpTool(annotations), expected, JSON.stringify(annotations));
  }
});
