import type {
  FailureCause,
  JsonValue,
  MessageBody,
  RecordHeader,
  RunFailedBody,
} from './records.ts';

/**
 * Why a run that is not finished stopped on its own terms — a `run-failed` or `run-stopped`
 * record, or the failure turn older versions wrote — as long as nothing came after it: the
 * next message or revival clears it. A run whose process died has none.
 *
 * @example
 * const halt: RunHalt = { state: 'failed', seq: 7, at: '2026-01-01T09:00:08.000Z',
 *   detail: 'HTTP 503: Service Unavailable', cause: 'outage', model: 'openai.chat:gpt-5' };
 */
export interface RunHalt {
  state: 'failed' | 'stopped';
  /** Seq of the record that says so. */
  seq: number;
  at: string;
  /** For `failed`, the last error; for `stopped`, the reason given. */
  detail: string;
  /** For `failed`: what the errors say about the cause. */
  cause?: FailureCause;
  /** For `failed`: the backend of the last error, as `provider:modelId`. */
  model?: string;
  /** For `failed`: how long the provider asked to wait, when it said. */
  retryAfterMs?: number;
}

/**
 * The cause an HTTP status points at: 401 and 403 `auth`, 429 `rate-limited`, 408 and 5xx
 * `outage`, any other `refused`. Pure.
 *
 * @example
 * causeOfStatus(503); // 'outage'
 */
export function causeOfStatus(status: number): FailureCause {
  if (status === 401 || status === 403) return 'auth';
  if (status === 429) return 'rate-limited';
  if (status === 408 || status >= 500) return 'outage';
  return 'refused';
}

/**
 * True when a person is likely needed before a revival of a run that failed so can succeed:
 * bad credentials or a request the provider refuses repeat themselves; an outage or a rate
 * limit passes.
 *
 * @example
 * needsPerson('auth'); // true
 */
export function needsPerson(cause: FailureCause | undefined): boolean {
  return cause === 'auth' || cause === 'refused';
}

/**
 * The halt a `run-failed` record states. Pure.
 *
 * @example
 * const halt = haltOfFailure(record); // { state: 'failed', cause: record.cause, … }
 */
export function haltOfFailure(record: RecordHeader & RunFailedBody): RunHalt {
  const halt: RunHalt = {
    state: 'failed',
    seq: record.seq,
    at: record.at,
    detail: record.error,
    cause: record.cause,
    model: record.model,
  };
  if (record.retryAfterMs !== undefined) halt.retryAfterMs = record.retryAfterMs;
  return halt;
}

/**
 * The halt of the assistant turn versions before format v1's `run-failed` record wrote when
 * every backend failed (`The run failed: …`, with `extras.error.kind` `model-unavailable`), or
 * null for any other message. That turn is the system's, not the model's: readers take it for a
 * failure, never for the run's last answer, and the conversation view leaves it out. Pure.
 *
 * @example
 * const halt = legacyFailureHalt(record); // null for a turn the model wrote
 */
export function legacyFailureHalt(record: RecordHeader & MessageBody): RunHalt | null {
  if (record.role !== 'assistant') return null;
  const error = record.extras?.error;
  if (!isObject(error) || error.kind !== 'model-unavailable') return null;
  if (record.content.some((part) => part.type !== 'text')) return null;
  const detail =
    typeof error.detail === 'string'
      ? error.detail
      : record.content.map((part) => (part.type === 'text' ? part.text : '')).join('');
  return { state: 'failed', seq: record.seq, at: record.at, detail, cause: legacyCause(detail) };
}

/** What an old failure turn's detail says: the status of its last error, as far as it shows. */
function legacyCause(detail: string): FailureCause {
  const statuses = [...detail.matchAll(/HTTP (\d{3})\b/g)];
  const last = statuses.at(-1)?.[1];
  if (last !== undefined) return causeOfStatus(Number(last));
  return 'outage';
}

function isObject(value: JsonValue | undefined): value is { [key: string]: JsonValue } {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
