import type { NotRevivableReason } from './inspection.ts';

/**
 * A revive that did not happen, as every revive path answers it: the same shape as the
 * public `ReviveRefused` (`revive.ts`), kept here so the pipeline's files do not import the
 * public entry they serve.
 *
 * @example
 * const answer: RunRefused = refused('running', 'runs/a.jsonl: another writer holds it');
 */
export interface RunRefused {
  ok: false;
  reason: NotRevivableReason | 'io-error';
  detail: string;
}

/**
 * A refusal with its one line for a human.
 *
 * @example
 * return refused('unreadable', `${path}: no such file`);
 */
export function refused(reason: RunRefused['reason'], detail: string): RunRefused {
  return { ok: false, reason, detail };
}
