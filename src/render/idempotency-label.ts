import type { Idempotency } from '../transcript/records.ts';

/**
 * A dispatch's idempotency as a plan shows it: `side-effect (undeclared)` when the tool
 * declared none and `side-effect` is only assumed, else the declared value.
 *
 * @example
 * idempotencyLabel({ idempotency: 'side-effect', idempotencyDeclared: false }); // 'side-effect (undeclared)'
 * idempotencyLabel({ idempotency: 'read-only' }); // 'read-only'
 */
export function idempotencyLabel(dispatch: {
  idempotency: Idempotency;
  idempotencyDeclared?: false;
}): string {
  return dispatch.idempotencyDeclared === false
    ? `${dispatch.idempotency} (undeclared)`
    : dispatch.idempotency;
}
