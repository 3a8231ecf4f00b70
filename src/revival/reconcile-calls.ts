import { validateInput } from '../loop/run-tool-call.ts';
import type { ReconcileAnswer, ToolDefinition } from '../loop/types.ts';
import type {
  ForeignRecord,
  JsonValue,
  ReconcileVerdict,
  TranscriptRecord,
} from '../transcript/records.ts';
import type { TailState } from '../transcript/tail-state.ts';
import { isKnownRecord } from '../transcript/validate-record.ts';

/**
 * One call left in flight that a tool's reconcile can be asked about: dispatched with a key,
 * with no result, not a join, its turn (and so its input) still in the transcript.
 *
 * @example
 * const request: ReconcileRequest = {
 *   callId: 'call_1', toolName: 'charge', idempotencyKey: 'ik-0123', input: { cents: 1200 },
 * };
 */
export interface ReconcileRequest {
  callId: string;
  toolName: string;
  idempotencyKey: string;
  input: JsonValue;
}

/**
 * What a tool's reconcile answered about one call, checked: `completed` carries the output,
 * `unknown` why (the tool's own words, a throw, a timeout, an answer that is not one). Hand these
 * to a revive (`reconciled`), which settles each call by them — never by running it.
 *
 * @example
 * const reconciliation: Reconciliation = {
 *   callId: 'call_1', toolName: 'charge', idempotencyKey: 'ik-0123', answer: 'completed',
 *   output: { chargeId: 'ch_1' }, isError: false,
 * };
 */
export interface Reconciliation {
  callId: string;
  toolName: string;
  /** The key asked about: a revive uses the answer only for the dispatch with this key. */
  idempotencyKey: string;
  answer: ReconcileVerdict;
  /** For `completed`: the output the call produced, and whether it was an error result. */
  output?: JsonValue;
  isError?: boolean;
  /** For `unknown`: why, in one line. */
  detail?: string;
}

/**
 * How long reconciles may take, and with which tools.
 *
 * @example
 * const options: ReconcileOptions = { tools, timeoutMs: 5_000 };
 */
export interface ReconcileOptions {
  /** The run's tools; a call whose tool has no `reconcile` is not asked about. */
  tools: readonly ToolDefinition<unknown>[] | ReadonlyMap<string, ToolDefinition<unknown>>;
  /** How long each reconcile may take, in milliseconds (default 10 000). */
  timeoutMs?: number;
  /**
   * An epoch-millisecond time no reconcile may outlast, whatever `timeoutMs` says — a fleet
   * worker's lease expiry, say.
   */
  deadline?: number;
  /** Aborts every reconcile (they then count as unknown). */
  signal?: AbortSignal;
  /** The clock, in epoch milliseconds (default `Date.now`). */
  now?: () => number;
}

/**
 * How long a reconcile may take when nobody says, in milliseconds.
 *
 * @example
 * const deadline = Date.now() + DEFAULT_RECONCILE_TIMEOUT_MS;
 */
export const DEFAULT_RECONCILE_TIMEOUT_MS = 10_000;

const MAX_DETAIL = 300;

/**
 * The calls of a transcript a reconcile can be asked about, from its records (all of them, or
 * any suffix holding the last assistant turn) and its folded state. Pure.
 *
 * @example
 * const requests = callsToReconcile(read.records, writer.state);
 */
export function callsToReconcile(
  records: Iterable<TranscriptRecord | ForeignRecord>,
  state: TailState,
): ReconcileRequest[] {
  const wanted = new Map(
    state.open
      .filter(
        (open) =>
          open.idempotencyKey !== undefined &&
          open.resultSeq === undefined &&
          open.joins === undefined &&
          open.turnCompacted !== true &&
          open.possiblyDispatched !== true &&
          open.turnSeq !== null,
      )
      .map((open) => [open.callId, open]),
  );
  const requests: ReconcileRequest[] = [];
  if (wanted.size === 0) return requests;
  for (const record of records) {
    if (!isKnownRecord(record) || record.type !== 'message' || record.role !== 'assistant') {
      continue;
    }
    for (const part of record.content) {
      const open = part.type === 'tool-call' ? wanted.get(part.callId) : undefined;
      if (part.type !== 'tool-call' || open === undefined || open.turnSeq !== record.seq) continue;
      requests.push({
        callId: part.callId,
        toolName: open.toolName,
        idempotencyKey: open.idempotencyKey as string,
        input: part.input,
      });
    }
  }
  return requests;
}

/**
 * Ask each call's tool what became of it, all at once, each bounded by the timeout and the
 * deadline: a reconcile that has not answered by then is abandoned (its signal aborted) and
 * counts as unknown — so a hanging reconcile can never hold a revival, or a worker's lease,
 * past its deadline. Never throws. Calls whose tool has no `reconcile` are left out.
 *
 * @example
 * const reconciled = await reconcileCalls(callsToReconcile(records, state), { tools });
 */
export async function reconcileCalls(
  requests: readonly ReconcileRequest[],
  options: ReconcileOptions,
): Promise<Reconciliation[]> {
  const tools =
    options.tools instanceof Map
      ? (options.tools as ReadonlyMap<string, ToolDefinition<unknown>>)
      : new Map((options.tools as readonly ToolDefinition<unknown>[]).map((t) => [t.name, t]));
  const asked = requests.filter((request) => tools.get(request.toolName)?.reconcile !== undefined);
  const now = options.now ?? Date.now;
  const timeout = options.timeoutMs ?? DEFAULT_RECONCILE_TIMEOUT_MS;
  const deadline = Math.min(now() + timeout, options.deadline ?? Number.POSITIVE_INFINITY);
  return Promise.all(
    asked.map((request) =>
      askOne(request, tools.get(request.toolName) as ToolDefinition<unknown>, deadline, options),
    ),
  );
}

async function askOne(
  request: ReconcileRequest,
  tool: ToolDefinition<unknown>,
  deadline: number,
  options: ReconcileOptions,
): Promise<Reconciliation> {
  const base = {
    callId: request.callId,
    toolName: request.toolName,
    idempotencyKey: request.idempotencyKey,
  };
  const unknown = (detail: string): Reconciliation => ({
    ...base,
    answer: 'unknown',
    detail: oneLine(detail),
  });
  const checked = await validateInput(tool, request.input);
  if (!checked.ok) return unknown(`not asked: the call's input no longer fits the tool's schema`);
  const now = options.now ?? Date.now;
  const wait = Math.max(0, deadline - now());
  const controller = new AbortController();
  const signals = [controller.signal];
  if (options.signal !== undefined) signals.push(options.signal);
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timedOut = new Promise<'timeout'>((resolve) => {
    timer = setTimeout(() => resolve('timeout'), wait);
  });
  const stopped = new Promise<'aborted'>((resolve) => {
    if (options.signal?.aborted === true) resolve('aborted');
    options.signal?.addEventListener('abort', () => resolve('aborted'), { once: true });
  });
  try {
    const answer = await Promise.race([
      Promise.resolve().then(() =>
        (tool.reconcile as NonNullable<ToolDefinition<unknown>['reconcile']>)(
          checked.value as never,
          {
            callId: request.callId,
            idempotencyKey: request.idempotencyKey,
            signal: AbortSignal.any(signals),
            deadline,
          },
        ),
      ),
      timedOut,
      stopped,
    ]);
    if (answer === 'timeout') return unknown(`reconcile gave no answer within ${wait} ms`);
    if (answer === 'aborted') return unknown('reconcile was abandoned: the revival was stopped');
    return { ...base, ...parseAnswer(answer) };
  } catch (error) {
    return unknown(`reconcile threw: ${error instanceof Error ? error.message : String(error)}`);
  } finally {
    clearTimeout(timer);
    controller.abort(new Error('the reconcile is no longer waited for'));
  }
}

/**
 * A reconcile's answer checked as untrusted data: anything that is not one of the three answers,
 * or a `completed` whose output JSON cannot hold, is unknown. Pure.
 *
 * @example
 * parseAnswer({ outcome: 'completed' }); // { answer: 'unknown', detail: 'reconcile answered …' }
 */
export function parseAnswer(
  value: unknown,
): Pick<Reconciliation, 'answer' | 'output' | 'isError' | 'detail'> {
  const bad = {
    answer: 'unknown' as const,
    detail: oneLine(`reconcile answered something that is not an answer: ${preview(value)}`),
  };
  if (typeof value !== 'object' || value === null) return bad;
  const answer = value as Partial<ReconcileAnswer> & Record<string, unknown>;
  switch (answer.outcome) {
    case 'completed': {
      if (!('output' in answer) || answer.output === undefined) return bad;
      if (answer.isError !== undefined && typeof answer.isError !== 'boolean') return bad;
      const output = jsonOf(answer.output);
      if (output === undefined) return bad;
      return { answer: 'completed', output, isError: answer.isError === true };
    }
    case 'did-not-happen':
      return { answer: 'did-not-happen' };
    case 'unknown':
      return {
        answer: 'unknown',
        detail: oneLine(
          typeof answer.detail === 'string' && answer.detail.trim() !== ''
            ? `reconcile: ${answer.detail}`
            : 'reconcile could not tell',
        ),
      };
    default:
      return bad;
  }
}

function jsonOf(value: unknown): JsonValue | undefined {
  try {
    const text = JSON.stringify(value);
    return text === undefined ? undefined : (JSON.parse(text) as JsonValue);
  } catch {
    return undefined;
  }
}

function preview(value: unknown): string {
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}

function oneLine(text: string): string {
  const line = text.replace(/\s+/g, ' ').trim();
  return line.length > MAX_DETAIL ? `${line.slice(0, MAX_DETAIL - 1)}…` : line;
}
