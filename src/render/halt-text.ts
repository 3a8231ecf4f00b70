/**
 * How the CLI words a run that failed or was stopped: the cause, the last error, and whether a
 * person is likely needed before a revival can succeed. Pure; the text from a transcript is
 * returned as it is (callers make it terminal-safe where they print it).
 *
 * @module
 */
import type { FailureCause } from '../transcript/records.ts';
import { needsPerson, type RunHalt } from '../transcript/run-halt.ts';

const CAUSE_PHRASES: Record<FailureCause, string> = {
  outage: 'provider unavailable',
  'rate-limited': 'rate limited',
  auth: 'credentials refused',
  refused: 'request refused',
};

/**
 * A few words for the WHY column: what stopped the run, and the last error or the reason.
 *
 * @example
 * haltWhy({ state: 'failed', cause: 'auth', detail: 'HTTP 401: bad key', seq: 3, at });
 * // 'credentials refused (HTTP 401: bad key)'
 */
export function haltWhy(halt: RunHalt): string {
  if (halt.state === 'stopped') return halt.detail;
  const cause = halt.cause === undefined ? 'model error' : CAUSE_PHRASES[halt.cause];
  return `${cause} (${halt.detail})`;
}

/**
 * One sentence on what to do: whether the cause is likely to pass by itself or needs a
 * person first.
 *
 * @example
 * haltAdvice({ state: 'failed', cause: 'outage', detail: 'HTTP 503', seq: 3, at });
 * // 'likely to pass by itself: revive it once the provider answers again'
 */
export function haltAdvice(halt: RunHalt): string {
  if (halt.state === 'stopped') return 'revive it to carry on';
  if (halt.cause === 'auth') {
    return 'needs a person: fix the API key or its access, then revive it';
  }
  if (needsPerson(halt.cause)) {
    return 'needs a person: the provider refuses the request as it is (model id, options, size), so look before reviving';
  }
  const wait =
    halt.retryAfterMs === undefined
      ? ''
      : ` (it asked to wait ${Math.ceil(halt.retryAfterMs / 1000)} s)`;
  return `likely to pass by itself${wait}: revive it once the provider answers again`;
}

/**
 * The whole story of a halt in one sentence: when, on which backend, why, what to do.
 *
 * @example
 * haltSentence(halt); // 'failed at 2026-… on openai.chat:gpt-5: provider unavailable (…); likely …'
 */
export function haltSentence(halt: RunHalt): string {
  const on = halt.model === undefined ? '' : ` on ${halt.model}`;
  const what = halt.state === 'failed' ? `failed at ${halt.at}${on}` : `stopped at ${halt.at}`;
  return `${what}: ${haltWhy(halt)}; ${haltAdvice(halt)}.`;
}

/**
 * The full line `status` prints below its table for a failed or stopped run.
 *
 * @example
 * haltLine(halt, 'runs/main.jsonl'); // 'runs/main.jsonl failed at 2026-… on openai.chat:gpt-5: …'
 */
export function haltLine(halt: RunHalt, name: string): string {
  return `${name} ${haltSentence(halt)}`;
}
