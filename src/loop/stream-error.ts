/**
 * What an `error` part of a provider's stream means, as the AI SDK reads it.
 *
 * @module
 */
import { AISDKError, StreamProviderError } from 'ai';

/**
 * An `error` part's value as an error the loop can classify, as the AI SDK normalizes it (ai 7,
 * `normalizeStreamProviderError`): providers put their API's error object there
 * (`{ type: 'overloaded_error', message: 'Overloaded' }`, or one marked by
 * `createProviderStreamError`), which becomes a `StreamProviderError` with the status it gives
 * or implies. Errors, and values without a message (a bare string), are passed on as they are:
 * the loop classifies those as transport failures, as it did when streamText reported them.
 *
 * @example
 * streamError({ type: 'overloaded_error', message: 'Overloaded' }); // StreamProviderError, 503, retryable
 */
export function streamError(value: unknown): unknown {
  if (
    value instanceof Error ||
    Object.prototype.toString.call(value) === '[object Error]' ||
    AISDKError.isInstance(value)
  ) {
    return value;
  }
  const outer = asRecord(value);
  if (outer === undefined) return value;
  const marked = (outer as { [providerStreamError]?: unknown })[providerStreamError] === true;
  const details = marked
    ? outer
    : (asRecord(asRecord(outer.response)?.error) ?? asRecord(outer.error) ?? outer);
  if (typeof details.message !== 'string') return value;
  const type = stringOf(details.type) ?? stringOf(outer.type);
  const code = codeOf(details.code) ?? codeOf(outer.code);
  const explicitStatus =
    statusOf(details.statusCode) ??
    statusOf(outer.statusCode) ??
    statusOf(details.status_code) ??
    statusOf(outer.status_code) ??
    statusOf(details.status) ??
    statusOf(outer.status) ??
    statusOf(details.code) ??
    statusOf(outer.code);
  const implied = impliedStatus(details.message);
  const statusCode = explicitStatus ?? implied;
  const explicitRetry =
    booleanOf(details.isRetryable) ??
    booleanOf(outer.isRetryable) ??
    booleanOf(details.is_retryable) ??
    booleanOf(outer.is_retryable);
  return new StreamProviderError({
    message: details.message,
    ...(type === undefined ? {} : { type }),
    ...(code === undefined ? {} : { code }),
    ...(statusCode === undefined ? {} : { statusCode }),
    isRetryable:
      explicitRetry ??
      (implied !== undefined || (statusCode !== undefined && sdkRetryableStatus(statusCode))),
    data: marked ? outer.data : value,
  });
}

/** The mark `createProviderStreamError` (@ai-sdk/provider-utils) puts on a provider's error. */
const providerStreamError = Symbol.for('vercel.ai.providerStreamError');

function asRecord(value: unknown): Record<string, unknown> | undefined {
  return typeof value === 'object' && value !== null
    ? (value as Record<string, unknown>)
    : undefined;
}

function stringOf(value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined;
}

function codeOf(value: unknown): string | number | undefined {
  return typeof value === 'string' || typeof value === 'number' ? value : undefined;
}

function booleanOf(value: unknown): boolean | undefined {
  return typeof value === 'boolean' ? value : undefined;
}

/** An HTTP error status, as a number or a three-digit string (the SDK reads 400 to 599). */
function statusOf(value: unknown): number | undefined {
  const status = typeof value === 'string' && /^\d{3}$/.test(value) ? Number(value) : value;
  return typeof status === 'number' && Number.isInteger(status) && status >= 400 && status <= 599
    ? status
    : undefined;
}

/** The messages whose status the AI SDK infers (ai 7, `inferExactMessageMetadata`). */
function impliedStatus(message: string): number | undefined {
  switch (message.trim().toLowerCase()) {
    case 'overloaded':
    case 'overloaded error':
    case 'model overloaded':
    case 'service unavailable':
      return 503;
    case 'internal server error':
      return 500;
    default:
      return undefined;
  }
}

/**
 * Retryable as the AI SDK judges a status for `StreamProviderError.isRetryable` (409 included),
 * so that `isRetryable` is what streamText reported; the loop's own verdict on a status is
 * `classifyModelError`'s.
 */
function sdkRetryableStatus(status: number): boolean {
  return status === 408 || status === 409 || status === 429 || status >= 500;
}
