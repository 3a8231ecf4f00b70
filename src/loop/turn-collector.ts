/**
 * Folding a provider's stream into one assistant turn, without I/O: what `streamText` did for
 * the loop before the loop called `LanguageModelV4.doStream` itself (see call-model.ts).
 *
 * @module
 */
import { secureJsonParse } from '@ai-sdk/provider-utils';
import type { LanguageModelV4StreamPart, SharedV4Warning } from '@ai-sdk/provider';
import type { ModelOutputPart } from './model-messages.ts';
import { streamError } from './stream-error.ts';

/**
 * What a whole stream came to: the parts of the turn, or the first error it carried.
 *
 * @example
 * const outcome: CollectedTurn = collector.finish();
 * if (outcome.ok) assistantMessageFromOutput(outcome.content);
 */
export type CollectedTurn =
  | {
      ok: true;
      content: ModelOutputPart[];
      finishReason: string;
      usage: { inputTokens: number; outputTokens: number };
    }
  | { ok: false; error: unknown };

/**
 * A stream that ended without its `finish` part (a connection cut mid-answer): the turn is not
 * whole, so it is not kept; another attempt is worth making.
 *
 * @example
 * classifyModelError(new IncompleteStreamError()); // 'retry'
 */
export class IncompleteStreamError extends Error {
  constructor() {
    super('the stream ended before its finish part');
    this.name = 'IncompleteStreamError';
  }
}

/**
 * Collects one model call's stream parts into the content of its turn, as the AI SDK collects
 * them: text and reasoning accumulate per part id, in the order they opened, and carry the
 * provider metadata of their latest part that had any (a reasoning signature arrives on its
 * last delta or on its end); a tool call's JSON input is parsed (empty means `{}`; input that is
 * not JSON is kept as the string the model sent, for the loop to answer as an error). Provider-
 * executed calls and their results, files, sources and raw chunks are not stored, so they are
 * not kept. An `error` part makes the turn a failure, reported with the provider's words.
 *
 * @example
 * const collector = new TurnCollector();
 * for (const part of parts) collector.add(part);
 * const turn = collector.finish(); // { ok: true, content, finishReason: 'stop', usage }
 */
export class TurnCollector {
  readonly #content: ModelOutputPart[] = [];
  readonly #open = new Map<string, { type: string; text: string; providerMetadata?: unknown }>();
  #finish: { reason: string; inputTokens: number; outputTokens: number } | null = null;
  #error: { value: unknown } | null = null;
  /** Warnings the provider gave at the stream's start, as one line each. */
  readonly warnings: string[] = [];

  /** True once an `error` part arrived: the rest of the stream no longer matters. */
  get failed(): boolean {
    return this.#error !== null;
  }

  /**
   * Take the next part of the stream.
   *
   * @example
   * collector.add({ type: 'text-delta', id: 't', delta: 'Hel' });
   */
  add(part: LanguageModelV4StreamPart): void {
    switch (part.type) {
      case 'text-start':
      case 'text-delta':
      case 'text-end':
        this.#upsert('text', part);
        break;
      case 'reasoning-start':
      case 'reasoning-delta':
      case 'reasoning-end':
        this.#upsert('reasoning', part);
        break;
      case 'tool-call':
        this.#content.push({
          type: 'tool-call',
          toolCallId: part.toolCallId,
          toolName: part.toolName,
          input: parseInput(part.input),
          ...(part.providerExecuted === undefined
            ? {}
            : { providerExecuted: part.providerExecuted }),
          ...(part.providerMetadata == null ? {} : { providerMetadata: part.providerMetadata }),
        });
        break;
      case 'stream-start':
        for (const warning of part.warnings) {
          // One line each, as the doc says: a provider's message may span several.
          this.warnings.push(describeWarning(warning).replace(/\s*[\r\n]+\s*/g, ' '));
        }
        break;
      case 'finish':
        this.#finish = {
          reason: part.finishReason.unified,
          inputTokens: part.usage.inputTokens.total ?? 0,
          outputTokens: part.usage.outputTokens.total ?? 0,
        };
        break;
      case 'error':
        this.#error ??= { value: streamError(part.error) };
        break;
      default:
        break;
    }
  }

  /**
   * The turn, once the stream has ended: a failure if it carried an error or never finished.
   *
   * @example
   * const turn = collector.finish();
   * if (!turn.ok) classifyModelError(turn.error);
   */
  finish(): CollectedTurn {
    if (this.#error !== null) return { ok: false, error: this.#error.value };
    if (this.#finish === null) return { ok: false, error: new IncompleteStreamError() };
    return {
      ok: true,
      content: this.#content,
      finishReason: this.#finish.reason,
      usage: { inputTokens: this.#finish.inputTokens, outputTokens: this.#finish.outputTokens },
    };
  }

  #upsert(
    type: 'text' | 'reasoning',
    part: { type: string; id: string; delta?: string; providerMetadata?: unknown },
  ): void {
    const key = `${type}:${part.id}`;
    let entry = this.#open.get(key);
    if (entry === undefined) {
      entry = { type, text: '' };
      this.#content.push(entry);
      this.#open.set(key, entry);
    }
    if (part.delta !== undefined) entry.text += part.delta;
    if (part.providerMetadata != null) entry.providerMetadata = part.providerMetadata;
    // A later part may reuse the id for a new block, as the SDK allows.
    if (part.type.endsWith('-end')) this.#open.delete(key);
  }
}

/**
 * Tool input as the AI SDK parses it: `secureJsonParse`, which refuses `__proto__` and
 * `constructor.prototype` keys (a tool that merges its input would change prototypes). Input
 * that does not parse, or is refused, is kept as the string the model sent, as the SDK keeps it.
 */
function parseInput(input: string): unknown {
  if (input.trim() === '') return {};
  try {
    return secureJsonParse(input) as unknown;
  } catch {
    return input;
  }
}

function describeWarning(warning: SharedV4Warning): string {
  switch (warning.type) {
    case 'unsupported':
    case 'compatibility':
      return `${warning.type}: ${warning.feature}${warning.details === undefined ? '' : ` (${warning.details})`}`;
    case 'deprecated':
      return `deprecated: ${warning.setting}: ${warning.message}`;
    default:
      return `${warning.type}: ${'message' in warning ? String(warning.message) : JSON.stringify(warning)}`;
  }
}
