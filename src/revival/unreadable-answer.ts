import type { Inspection } from './inspection.ts';

/**
 * The answer for a transcript that cannot be read (`unreadableInspection`, exported by
 * inspect.ts): not revivable, nothing open, nothing to send. In a module of its own, so that
 * `status --database` has it without loading the file readers.
 *
 * @example
 * unreadableAnswer('runs/a.jsonl', 2, 'runs/a.jsonl: line 7: checksum mismatch').reason; // 'unreadable'
 */
export function unreadableAnswer(path: string, maxRevivals: number, detail: string): Inspection {
  return {
    path,
    revivable: false,
    reason: 'unreadable',
    detail,
    revivalsUsed: 0,
    maxRevivals,
    openDispatches: [],
    neverDispatched: [],
    pendingJoins: [],
    bytes: 0,
    messages: 0,
    estimatedTokens: 0,
  };
}
