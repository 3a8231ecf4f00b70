import { createHash } from 'node:crypto';

/**
 * The run a key is derived for: its agent id and when its transcript was started (the
 * `session-meta` record's `at`), which together tell one run from another of the same agent id.
 *
 * @example
 * const run: KeyedRun = { agentId: 'main', createdAt: '2026-01-01T09:00:00.000Z' };
 */
export interface KeyedRun {
  agentId: string;
  createdAt?: string;
}

/**
 * The idempotency key of one call of one run: `ik-` and 32 hex digits of the SHA-256 of the run's
 * agent id, its start time and the call id. The Loop writes it into the call's `tool-dispatched`
 * record before the tool starts and hands the tool that recorded key, so the same call has the
 * same key whichever process or worker runs, revives or reconciles it; a new call has a new one.
 * Keys are read from the record, never derived again: the record is the truth.
 *
 * @example
 * idempotencyKeyOf({ agentId: 'main', createdAt: '2026-01-01T09:00:00.000Z' }, 'call_1');
 * // 'ik-' + 32 hex digits
 */
export function idempotencyKeyOf(run: KeyedRun, callId: string): string {
  const text = JSON.stringify([run.agentId, run.createdAt ?? null, callId]);
  return `ik-${createHash('sha256').update(text).digest('hex').slice(0, 32)}`;
}
