import {
  APICallError,
  AISDKError,
  type LanguageModel,
  type ModelMessage,
  streamText,
  type ToolSet,
} from 'ai';
import type { Message } from '../transcript/records.ts';
import { assistantMessageFromOutput, type ModelOutputPart } from './model-messages.ts';
import type { LoopEvent } from './types.ts';

/**
 * What one model turn needs. Sleep, backoff and events come in from the run, so a test drives
 * the failover without waiting and a display sees every attempt.
 *
 * @example
 * const request: ModelTurnRequest = { backends: [primary, fallback], messages, tools: {}, signal,
 *   rounds: 2, sleep, backoff: defaultBackoff, emit: (event) => channel.emit(event) };
 */
export interface ModelTurnRequest {
  backends: readonly LanguageModel[];
  messages: ModelMessage[];
  system?: string;
  /** Declared without `execute`: the loop runs tools itself, to keep the write order. */
  tools: ToolSet;
  signal: AbortSignal;
  /** Rounds over the whole backend list before giving up (default 2). */
  rounds: number;
  sleep: (milliseconds: number, signal?: AbortSignal) => Promise<void>;
  backoff: (attempt: number) => number;
  /** Milliseconds a backend may stay silent (before its first part, or between two). */
  idleTimeout?: number;
  emit: (event: LoopEvent) => void;
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
  | { ok: false; reason: 'aborted' | 'failed'; detail: string; attempts: number };

/**
 * How a failed attempt is treated: try the next backend, give up now, or stop (aborted).
 *
 * @example
 * const kind: ErrorClass = classifyModelError(error, signal);
 * if (kind === 'retry') continue; // the next backend, at once
 */
export type ErrorClass = 'retry' | 'fatal' | 'aborted';

/**
 * Decide whether a model error is worth another backend: transport failures (no HTTP status),
 * 5xx, 408 and 429 are; any other status (a request the provider refuses, bad credentials) and
 * the AI SDK's own errors about the prompt are not, since another attempt would only repeat them.
 *
 * @example
 * classifyModelError(new APICallError({ message: 'busy', url, requestBodyValues: {}, statusCode: 429 }));
 * // 'retry'
 */
export function classifyModelError(error: unknown, signal?: AbortSignal): ErrorClass {
  if (signal?.aborted) return 'aborted';
  const inner = unwrapRetryError(error);
  if (APICallError.isInstance(inner)) {
    const status = inner.statusCode;
    if (status === undefined) return 'retry';
    return status >= 500 || status === 429 || status === 408 ? 'retry' : 'fatal';
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
 * `backoff(round)` and starts over, `rounds` times in all. Never throws.
 *
 * @example
 * const turn = await callModel({ backends: [model], messages, tools: {}, signal, rounds: 2,
 *   sleep, backoff: () => 0, emit: () => {} });
 * if (turn.ok) console.log(turn.message);
 */
export async function callModel(request: ModelTurnRequest): Promise<ModelTurnResult> {
  const count = request.backends.length;
  let attempts = 0;
  let lastDetail = 'no backend was configured';
  for (let round = 0; round < request.rounds; round += 1) {
    if (round > 0) {
      try {
        await request.sleep(request.backoff(round), request.signal);
      } catch {
        // The only reason a sleep rejects is the run's abort.
      }
    }
    for (let backend = 0; backend < count; backend += 1) {
      if (request.signal.aborted) {
        return { ok: false, reason: 'aborted', detail: 'the run was aborted', attempts };
      }
      attempts += 1;
      const model = request.backends[backend] as LanguageModel;
      const outcome = await attempt(model, request);
      if (outcome.ok) return { ...outcome, backend };
      const kind = classifyModelError(outcome.error, request.signal);
      if (kind === 'aborted') {
        return { ok: false, reason: 'aborted', detail: 'the run was aborted', attempts };
      }
      lastDetail = `backend ${backend + 1} of ${count}: ${describeError(outcome.error)}`;
      const more = kind === 'retry' && (backend + 1 < count || round + 1 < request.rounds);
      request.emit({
        type: 'model-error',
        backend,
        attempt: attempts,
        message: describeError(outcome.error),
        willRetry: more,
      });
      if (kind === 'fatal') {
        return { ok: false, reason: 'failed', detail: lastDetail, attempts };
      }
    }
  }
  return {
    ok: false,
    reason: 'failed',
    detail:
      count === 0
        ? lastDetail
        : `every backend failed after ${attempts} attempts; last: ${lastDetail}`,
    attempts,
  };
}

type AttemptOutcome =
  | {
      ok: true;
      message: Message;
      finishReason: string;
      usage: { inputTokens: number; outputTokens: number };
    }
  | { ok: false; error: unknown };

async function attempt(model: LanguageModel, request: ModelTurnRequest): Promise<AttemptOutcome> {
  let streamError: unknown;
  let failed = false;
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
  try {
    rearm();
    const result = streamText({
      model,
      messages: request.messages,
      ...(request.system === undefined ? {} : { instructions: request.system }),
      tools: request.tools,
      maxRetries: 0,
      abortSignal: controller.signal,
      onError: () => undefined,
    });
    for await (const part of result.fullStream) {
      rearm();
      if (part.type === 'text-delta') {
        request.emit({ type: 'text-delta', text: part.text });
      } else if (part.type === 'error') {
        failed = true;
        streamError = part.error;
      } else if (part.type === 'abort') {
        failed = true;
        streamError = controller.signal.reason ?? new Error('aborted');
      }
    }
    if (timedOut) return { ok: false, error: new ModelTimeoutError(idle ?? 0) };
    if (failed) return { ok: false, error: streamError };
    const [content, finishReason, usage] = await Promise.all([
      result.content,
      result.finishReason,
      result.totalUsage,
    ]);
    const message = assistantMessageFromOutput(content as unknown as ModelOutputPart[]);
    return {
      ok: true,
      message,
      finishReason,
      usage: { inputTokens: usage.inputTokens ?? 0, outputTokens: usage.outputTokens ?? 0 },
    };
  } catch (error) {
    if (timedOut) return { ok: false, error: new ModelTimeoutError(idle ?? 0) };
    return { ok: false, error: failed ? streamError : error };
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
 * classifyModelError(new ModelTimeoutError(30_000)); // 'retry'
 */
export class ModelTimeoutError extends Error {
  constructor(milliseconds: number) {
    super(`the backend sent nothing for ${milliseconds} ms`);
    this.name = 'ModelTimeoutError';
  }
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
 * describeError(httpError); // 'HTTP 503: Service Unavailable'
 */
export function describeError(error: unknown): string {
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
