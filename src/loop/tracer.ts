/**
 * The part of an OpenTelemetry `Tracer` the loop uses, so that any tracer — `trace.getTracer(…)`
 * from `@opentelemetry/api`, or a test's — can be passed in without this package depending on
 * OpenTelemetry.
 *
 * @example
 * import { trace } from '@opentelemetry/api';
 * new Loop({ backends, writer: session, tracer: trace.getTracer('my-agents') });
 */
export interface LoopTracer {
  startSpan(
    name: string,
    options?: { attributes?: Record<string, string | number | boolean> },
  ): LoopSpan;
}

/**
 * The part of an OpenTelemetry `Span` the loop uses.
 *
 * @example
 * span.setAttribute('ai.response.finishReason', 'stop');
 * span.end();
 */
export interface LoopSpan {
  setAttribute(key: string, value: string | number | boolean): unknown;
  /** `code` as OpenTelemetry's `SpanStatusCode`: 1 ok, 2 error. */
  setStatus(status: { code: number; message?: string }): unknown;
  end(): void;
}

/**
 * OpenTelemetry's `SpanStatusCode.ERROR`.
 *
 * @example
 * span.setStatus({ code: SPAN_ERROR, message: 'HTTP 503' });
 */
export const SPAN_ERROR = 2;
