import type { Idempotency } from '../transcript/records.ts';

/**
 * The annotations an MCP server may declare on a tool (`tools/list`), as far as repeating a
 * call is concerned. They are hints from the server, not guarantees.
 *
 * @example
 * const hints: McpToolAnnotations = { readOnlyHint: false, idempotentHint: true };
 */
export interface McpToolAnnotations {
  readOnlyHint?: boolean;
  idempotentHint?: boolean;
  destructiveHint?: boolean;
}

/**
 * Our {@link Idempotency} for an MCP tool, from its annotations, with MCP's defaults (a tool that
 * says nothing is neither read-only nor idempotent): `readOnlyHint` → `read-only`;
 * `idempotentHint` → `idempotent` (unless `destructiveHint` is not false: a destructive tool
 * repeated may destroy again, so it stays `side-effect`); anything else → `side-effect`. The
 * result is recorded in each dispatch and shown in revive's plan; it never makes a call run
 * again — revival answers every interrupted call, whatever is declared.
 *
 * @example
 * idempotencyOfMcpTool({ readOnlyHint: true }); // 'read-only'
 * idempotencyOfMcpTool({ idempotentHint: true, destructiveHint: false }); // 'idempotent'
 * idempotencyOfMcpTool({}); // 'side-effect'
 */
export function idempotencyOfMcpTool(annotations: McpToolAnnotations | undefined): Idempotency {
  if (annotations?.readOnlyHint === true) return 'read-only';
  if (annotations?.idempotentHint === true && annotations.destructiveHint === false) {
    return 'idempotent';
  }
  return 'side-effect';
}
