import type {
  LanguageModelV4FunctionTool,
  LanguageModelV4Prompt,
  LanguageModelV4StreamPart,
  LanguageModelV4ToolChoice,
} from '@ai-sdk/provider';
import { AISDKError, APICallError, type LanguageModel, StreamProviderError } from 'ai';
import type { FailureCause, Message } from '../transcript/records.ts';
import { causeOfStatus } from '../transcript/run-halt.ts';
import { mergeSettings } from './model-call-settings.ts';
import { assistantMessageFromOutput } from './model-messages.ts';
import { resolveBackend } from './resolve-backend.ts';
import { type LoopTracer, SPAN_ERROR } from './tracer.ts';
import { TurnCollector } from './turn-collector.ts';
import type { LoopEvent, ModelCallSettings } from './types.ts';

/**
 * What one model turn needs. Sleep, backoff and events come in from the run, so a test drives
 * the failover without waiting and a display sees every attempt.
 *
 * @example
 * const request: ModelTurnRequest = { backends: [primary, fallback], prompt, tools: [], signal,
 *   rounds: 2, sleep, backoff: defaultBackoff, emit: (event) => channel.emit(event) };
 */
export interface ModelTurnRequest {
  backends: readonly LanguageModel[];
  /** The whole prompt, system message first: see `toProviderPrompt`. */
  prompt: LanguageModelV4Prompt;
  /** Names, descriptions and JSON Schemas only: the loop runs tools itself, to keep the write order. */
  tools: readonly LanguageModelV4FunctionTool[];
  /** Which tools the model may call (default `auto`). */
  toolChoice?: LanguageModelV4ToolChoice;
  signal: AbortSignal;
  /** Rounds over the whole backend list before giving up (default 2). */
  rounds: number;
  sleep: (milliseconds: number, signal?: AbortSignal) => Promise<void>;
  backoff: (attempt: number) => number;
  /**
   * The longest `retry-after` honoured (milliseconds): a backend asking for more is not asked
   * again during this turn, since waiting less would only be refused again.
   */
  maxRetryDelay: number;
  /** The clock, for a `retry-after` given as an HTTP date. */
  now: () => number;
  /** Milliseconds a backend may stay silent (before its first part, or between two). */
  idleTimeout?: number;
  emit: (event: LoopEvent) => void;
  /** Each backend's settings (the loop's with the backend's own laid over them). */
  settings?: readonly ModelCallSettings[];
  /** Settings for this one call to a backend, laid over its own. */
  prepare?: (backend: number) => ModelCallSettings | undefined;
  /** Each attempt becomes a span `ai.streamText.doStream`, as the AI SDK names its own. */
  tracer?: LoopTracer;
}

/**
 * Why a model turn failed, for the `run-failed` record: the cause the errors point at and the
 * last error, with the backend that gave it.
 *
 * @example
 * const failure: TurnFailure = { cause: 'outage', error: 'HTTP 503: busy', backend: 1,
 *   model: 'openai.chat:gpt-5' };
 */
export interface TurnFailure {
  cause: FailureCause;
  error: string;
  /** From 1, in the run's backend list. */
  backend: number;
  model: string;
  retryAfterMs?: number;
}

/**
 * The outcome of one model turn. Never a rejection: a provider outage is something the run
 * records and reports, not an exception that could skip the transcript's last write.
 *
 * @example
 * const turn = await callModel(request);
 * if (!turn.ok && turn.reason === 'failed') console.log(turn.detail, turn.attempts);
 */
export type ModelTurnResult =
  | {
      ok: true;
      message: Message;
      finishReason: string;
      usage: { inputTokens: number; outputTokens: number };
      backend: number;
    }
  | { ok: false; reason: 'aborted'; detail: string; attempts: number }
  | { ok: false; reason: 'failed'; detail: string; attempts: number; failure: TurnFailure };

/**
 * How a failed attempt is treated: try the next backend, give up now, or stop (aborted).
 *
 * @example
 * const kind: ErrorClass = classifyModelError(error, signal);
 * if (kind === 'retry') continue; // the next backend, at once
 */
export type ErrorClass = 'retry' | 'fatal' | 'aborted';

/**
 * Decide whether a model error is worth another backend: transport failures (no HTTP status, a
 * stream cut before its end), 5xx, 408 and 429 are, also when a provider sends them mid-stream;
 * any other status (a request the provider refuses, bad credentials) and
 * the AI SDK's own errors about the prompt are not, since another attempt would only repeat them.
 *
 * @example
 * import { APICallError } from 'ai';
 * import { classifyModelError } from 'llm-agent-revival/loop';
 * const url = 'https://api.openai.com/v1/responses';
 * classifyModelError(new APICallError({ message: 'busy', url, requestBodyValues: {}, statusCode: 429 }));
 * // 'retry'
 */
export function classifyModelError(error: unknown, signal?: AbortSignal): ErrorClass {
  if (signal?.aborted) return 'aborted';
  const inner = unwrapRetryError(error);
  if (APICallError.isInstance(inner)) {
    const status = inner.statusCode;
    if (status === undefined) return 'retry';
    return isRetryableStatus(status) ? 'retry' : 'fatal';
  }
  if (StreamProviderError.isInstance(inner)) {
    // An error the provider sent mid-stream, after accepting the request: its status when it
    // gave or implied one (`overloaded` is a 503), else its own word on retrying.
    const status = inner.statusCode;
    if (status !== undefined) return isRetryableStatus(status) ? 'retry' : 'fatal';
    return inner.isRetryable ? 'retry' : 'fatal';
  }
  if (AISDKError.isInstance(inner)) {
    // Stream and response parsing failures are a backend misbehaving, not our prompt.
    const name = (inner as Error).name;
    return name === 'AI_InvalidResponseDataError' ||
      name === 'AI_EmptyResponseBodyError' ||
      name === 'AI_JSONParseError' ||
      name === 'AI_NoContentGeneratedError'
      ? 'retry'
      : 'fatal';
  }
  if (inner instanceof Error && inner.name === 'AbortError') return 'aborted';
  // Anything else (fetch failed, ECONNRESET, a socket hang-up) is transport.
  return 'retry';
}

/**
 * Ask the backends, in order, for one assistant turn, streaming text deltas as events. On a
 * retryable error the next backend is tried at once; after a whole round fails the loop waits
 * `backoff(round)` — or longer, when a backend said when to come back (`retry-after-ms` or
 * `retry-after`, up to `maxRetryDelay`) — and starts over, `rounds` times in all. A backend
 * that refuses the request (a `fatal` error: 400, 401, 404 …) is not asked again during this
 * turn, since it would only refuse again, nor is one that asks to wait longer than
 * `maxRetryDelay`; the next one is: another provider or account may well take it (a key revoked
 * at one, a window too small at another, an item id only the other one stored). The turn fails
 * once no backend is left to ask or every round has failed, with the cause its errors point at
 * (an outage, a rate limit, credentials, a refused request: see {@link TurnFailure}). Never
 * throws.
 *
 * @example
 * const turn = await callModel({ backends: [model], prompt, tools: [], signal, rounds: 2,
 *   sleep, backoff: () => 0, maxRetryDelay: 60_000, now: Date.now, emit: () => {} });
 * if (turn.ok) console.log(turn.message);
 */
export async function callModel(request: ModelTurnRequest): Promise<ModelTurnResult> {
  const count = request.backends.length;
  /** Backends not asked again this turn: they refused, or asked to wait too long. */
  const benched = new Set<number>();
  let attempts = 0;
  let lastDetail = 'no backend was configured';
  let last: FailedAttempt | undefined;
  let lastTransient: FailedAttempt | undefined;
  let wait: number | undefined;
  const askable = (backend: number) => !benched.has(backend);
  for (let round = 0; round < request.rounds && benched.size < count; round += 1) {
    if (round > 0) {
      try {
        await request.sleep(Math.max(request.backoff(round), wait ?? 0), request.signal);
      } catch {
        // The only reason a sleep rejects is the run's abort.
      }
    }
    wait = undefined;
    for (let backend = 0; backend < count; backend += 1) {
      if (!askable(backend)) continue;
      if (request.signal.aborted) {
        return { ok: false, reason: 'aborted', detail: 'the run was aborted', attempts };
      }
      attempts += 1;
      const settings = mergeSettings(request.settings?.[backend], request.prepare?.(backend));
      const model = request.backends[backend] as LanguageModel;
      const span = request.tracer?.startSpan('ai.streamText.doStream', {
        attributes: spanAttributes(model, backend),
      });
      const outcome = await attempt(model, request, settings);
      if (span !== undefined) {
        if (outcome.ok) {
          span.setAttribute('ai.response.finishReason', outcome.finishReason);
          span.setAttribute('ai.usage.inputTokens', outcome.usage.inputTokens);
          span.setAttribute('ai.usage.outputTokens', outcome.usage.outputTokens);
        } else span.setStatus({ code: SPAN_ERROR, message: describeModelError(outcome.error) });
        span.end();
      }
      if (outcome.ok) return { ...outcome, backend };
      const kind = classifyModelError(outcome.error, request.signal);
      if (kind === 'aborted') {
        return { ok: false, reason: 'aborted', detail: 'the run was aborted', attempts };
      }
      const failed = failedAttempt(outcome.error, kind, backend, request);
      last = failed;
      if (kind === 'fatal') benched.add(backend);
      else {
        lastTransient = failed;
        if (failed.retryAfterMs !== undefined) {
          if (failed.retryAfterMs > request.maxRetryDelay) benched.add(backend);
          else wait = Math.max(wait ?? 0, failed.retryAfterMs);
        }
      }
      lastDetail = `backend ${backend + 1} of ${count}: ${failed.error}`;
      const laterThisRound = request.backends.some((_, other) => other > backend && askable(other));
      const laterRounds = round + 1 < request.rounds && benched.size < count;
      request.emit({
        type: 'model-error',
        backend,
        attempt: attempts,
        message: failed.error,
        willRetry: laterThisRound || laterRounds,
      });
    }
  }
  let detail: string;
  if (count === 0) detail = lastDetail;
  else if (lastTransient === undefined) {
    detail = count === 1 ? lastDetail : `every backend refused the request; last: ${lastDetail}`;
  } else detail = `every backend failed after ${attempts} attempts; last: ${lastDetail}`;
  // A cause that may pass by itself wins: one backend down and another refusing is an outage
  // to wait out, not a request to rewrite.
  const decisive = lastTransient ?? last;
  const failure: TurnFailure =
    decisive === undefined
      ? { cause: 'refused', error: lastDetail, backend: 1, model: 'none' }
      : {
          cause: decisive.cause,
          error: decisive.error,
          backend: decisive.backend + 1,
          model: decisive.model,
          ...(decisive.retryAfterMs === undefined ? {} : { retryAfterMs: decisive.retryAfterMs }),
        };
  return { ok: false, reason: 'failed', detail, attempts, failure };
}

interface FailedAttempt {
  backend: number;
  model: string;
  cause: FailureCause;
  error: string;
  retryAfterMs?: number;
}

function failedAttempt(
  error: unknown,
  kind: 'retry' | 'fatal',
  backend: number,
  request: ModelTurnRequest,
): FailedAttempt {
  const status = statusOf(error);
  const failed: FailedAttempt = {
    backend,
    model: modelName(request.backends[backend] as LanguageModel),
    cause: status !== undefined ? causeOfStatus(status) : kind === 'retry' ? 'outage' : 'refused',
    error: describeModelError(error),
  };
  // A status the loop retries but the table calls a refusal (a 409 mid-stream, say) is still
  // something to wait out.
  if (kind === 'retry' && (failed.cause === 'refused' || failed.cause === 'auth')) {
    failed.cause = 'outage';
  }
  const retryAfter = retryAfterMs(error, request.now());
  if (retryAfter !== undefined) failed.retryAfterMs = retryAfter;
  return failed;
}

/** The HTTP status of a model error, when it has one. */
function statusOf(error: unknown): number | undefined {
  const inner = unwrapRetryError(error);
  if (APICallError.isInstance(inner) || StreamProviderError.isInstance(inner)) {
    return inner.statusCode;
  }
  return undefined;
}

/**
 * How long a provider asked to wait, in milliseconds: `retry-after-ms` (OpenAI), else
 * `retry-after` in seconds or as an HTTP date; undefined when it did not say or said
 * something unreadable.
 *
 * @example
 * retryAfterMs(apiErrorWithHeaders({ 'retry-after': '2' }), Date.now()); // 2000
 */
export function retryAfterMs(error: unknown, now: number): number | undefined {
  const inner = unwrapRetryError(error);
  if (!APICallError.isInstance(inner)) return undefined;
  const headers = inner.responseHeaders;
  if (headers === undefined) return undefined;
  const header = (name: string) =>
    Object.entries(headers).find(([key]) => key.toLowerCase() === name)?.[1];
  const milliseconds = header('retry-after-ms');
  if (milliseconds !== undefined && /^\s*\d+(\.\d+)?\s*$/.test(milliseconds)) {
    return Math.ceil(Number(milliseconds));
  }
  const after = header('retry-after');
  if (after === undefined) return undefined;
  if (/^\s*\d+(\.\d+)?\s*$/.test(after)) return Math.ceil(Number(after) * 1000);
  const date = Date.parse(after);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

/** The span attributes of a call to a backend, named as the AI SDK names them. */
function spanAttributes(backend: LanguageModel, index: number): Record<string, string | number> {
  if (typeof backend === 'string') return { 'ai.model.id': backend, 'llm-agent.backend': index };
  return {
    'ai.model.provider': backend.provider,
    'ai.model.id': backend.modelId,
    'llm-agent.backend': index,
  };
}

/** A backend as `provider:modelId`, for a person reading why a run failed. */
function modelName(backend: LanguageModel): string {
  if (typeof backend === 'string') return backend;
  return `${backend.provider}:${backend.modelId}`;
}

type AttemptOutcome =
  | {
      ok: true;
      message: Message;
      finishReason: string;
      usage: { inputTokens: number; outputTokens: number };
    }
  | { ok: false; error: unknown };

/**
 * One call to one backend: the provider's own `doStream`, read part by part. The loop calls it
 * directly rather than through `streamText`, which would convert the whole conversation again
 * on every call and pipe every part through a chain of web streams: on a long run that was most
 * of the loop's own time (docs/performance.md). What `streamText` added that the loop needs is
 * here or in the prompt the run keeps (provider-prompt.ts, turn-collector.ts); model middleware
 * still applies, being part of the model (`wrapLanguageModel`).
 */
async function attempt(
  backend: LanguageModel,
  request: ModelTurnRequest,
  settings: ModelCallSettings,
): Promise<AttemptOutcome> {
  // The attempt's own signal: the run's abort, or a backend that went quiet for too long.
  const controller = new AbortController();
  const stopWithRun = () => controller.abort(request.signal.reason);
  request.signal.addEventListener('abort', stopWithRun, { once: true });
  if (request.signal.aborted) stopWithRun();
  let quiet: NodeJS.Timeout | undefined;
  let timedOut = false;
  const idle = request.idleTimeout;
  const rearm = () => {
    if (idle === undefined) return;
    clearTimeout(quiet);
    quiet = setTimeout(() => {
      timedOut = true;
      controller.abort(new ModelTimeoutError(idle));
    }, idle);
  };
  // A model that ignores its abort signal must not hold the run: the wait ends with the signal.
  let reader: ReadableStreamDefaultReader<LanguageModelV4StreamPart> | undefined;
  const stopped = new Promise<never>((_, reject) => {
    const stop = () => {
      reject(controller.signal.reason);
      reader?.cancel(controller.signal.reason).catch(() => undefined);
    };
    if (controller.signal.aborted) stop();
    else controller.signal.addEventListener('abort', stop, { once: true });
  });
  stopped.catch(() => undefined);
  try {
    rearm();
    const model = resolveBackend(backend);
    const streaming = model.doStream({
      // The settings first: nothing in them may replace the prompt, tools or signal.
      ...settings,
      prompt: request.prompt,
      ...(request.tools.length === 0 ? {} : { tools: [...request.tools] }),
      toolChoice: request.toolChoice ?? { type: 'auto' },
      abortSignal: controller.signal,
      includeRawChunks: false,
    });
    // A stream that arrives after the attempt gave up on it is cancelled, not left open.
    stopped.catch(() =>
      streaming.then(
        (late) => late.stream.cancel(controller.signal.reason).catch(() => undefined),
        () => undefined,
      ),
    );
    const { stream } = await Promise.race([streaming, stopped]);
    reader = stream.getReader();
    // Cancels here are not awaited: a source whose cancel never settles must not hold the run
    // (a cancelled stream's pending and later reads end at once, whatever its source does).
    if (controller.signal.aborted) reader.cancel(controller.signal.reason).catch(() => undefined);
    const collector = new TurnCollector();
    while (true) {
      const next = await reader.read();
      if (next.done || controller.signal.aborted) break;
      rearm();
      const part = next.value;
      if (part.type === 'text-delta' && part.delta !== '') {
        request.emit({ type: 'text-delta', text: part.delta });
      }
      collector.add(part);
      if (collector.failed) {
        reader.cancel().catch(() => undefined);
        break;
      }
    }
    if (timedOut) return { ok: false, error: new ModelTimeoutError(idle ?? 0) };
    if (controller.signal.aborted) return { ok: false, error: controller.signal.reason };
    for (const warning of collector.warnings)
      request.emit({ type: 'model-warning', message: warning });
    const turn = collector.finish();
    if (!turn.ok) return turn;
    return {
      ok: true,
      message: assistantMessageFromOutput(turn.content),
      finishReason: turn.finishReason,
      usage: turn.usage,
    };
  } catch (error) {
    if (timedOut) return { ok: false, error: new ModelTimeoutError(idle ?? 0) };
    return { ok: false, error };
  } finally {
    clearTimeout(quiet);
    request.signal.removeEventListener('abort', stopWithRun);
  }
}

/**
 * A backend that sent nothing for `idleTimeout` milliseconds: treated as a transport failure,
 * so the next backend is tried.
 *
 * @example
 * new ModelTimeoutError(30_000).message; // 'the backend sent nothing for 30000 ms'
 */
export class ModelTimeoutError extends Error {
  constructor(milliseconds: number) {
    super(`the backend sent nothing for ${milliseconds} ms`);
    this.name = 'ModelTimeoutError';
  }
}

function isRetryableStatus(status: number): boolean {
  return status >= 500 || status === 429 || status === 408;
}

function unwrapRetryError(error: unknown): unknown {
  if (
    error instanceof Error &&
    error.name === 'AI_RetryError' &&
    'lastError' in error &&
    (error as { lastError: unknown }).lastError !== undefined
  ) {
    return (error as { lastError: unknown }).lastError;
  }
  return error;
}

/**
 * One line describing a model error, with the HTTP status when there is one.
 *
 * @example
 * describeModelError(httpError); // 'HTTP 503: Service Unavailable'
 */
export function describeModelError(error: unknown): string {
  const inner = unwrapRetryError(error);
  if (APICallError.isInstance(inner)) {
    const status = inner.statusCode === undefined ? 'no response' : `HTTP ${inner.statusCode}`;
    return `${status}: ${oneLine(inner.message)}`;
  }
  if (inner instanceof Error) {
    const cause = inner.cause instanceof Error ? ` (${oneLine(inner.cause.message)})` : '';
    return `${inner.name}: ${oneLine(inner.message)}${cause}`;
  }
  return oneLine(String(inner));
}

function oneLine(text: string): string {
  const line = text.replace(/\s+/g, ' ').trim();
  return line.length > 500 ? `${line.slice(0, 497)}...` : line;
}
