import type {
  LanguageModelV4CallOptions,
  LanguageModelV4Content,
  LanguageModelV4GenerateResult,
  LanguageModelV4Prompt,
  LanguageModelV4StreamPart,
  LanguageModelV4StreamResult,
} from '@ai-sdk/provider';
import { APICallError } from 'ai';
import { convertArrayToReadableStream, MockLanguageModelV4 } from 'ai/test';

/**
 * One step a scripted model answers with, in order.
 *
 * @example
 * const steps: ScriptStep[] = [
 *   { calls: [{ id: 'c1', name: 'echo', input: { text: 'hi' } }] },
 *   { fail: 'http', status: 529, message: 'overloaded' },
 *   { text: 'Done.' },
 * ];
 */
export type ScriptStep =
  | {
      text?: string;
      reasoning?: { text: string; signature?: string };
      calls?: { id: string; name: string; input: unknown; rawInput?: string }[];
      usage?: { input: number; output: number };
    }
  | { fail: 'http'; status: number; message?: string }
  | { fail: 'network'; message?: string }
  | { fail: 'mid-stream'; text: string; status: number }
  | { hang: true };

/**
 * A violation of the providers' pairing rules found in a prompt the model was sent.
 *
 * @example
 * const scripted = new ScriptedModel([{ text: 'Hi.' }]);
 * for (const { call, detail } of scripted.violations) console.error(`prompt ${call}: ${detail}`);
 */
export interface PromptViolation {
  call: number;
  detail: string;
}

/**
 * A MockLanguageModelV4 that answers a script, one step per call, records every prompt, and
 * checks each prompt against the pairing rules every provider enforces (each tool call answered
 * exactly once in the very next message, no result without its call). A prompt that breaks
 * them is recorded in `violations` (tests assert it stays empty) and answered with an error.
 *
 * @example
 * const scripted = new ScriptedModel([
 *   { calls: [{ id: 'c1', name: 'echo', input: { text: 'hi' } }] },
 *   { text: 'Done.' },
 * ]);
 * const loop = new Loop({ backends: [scripted.model], writer: session, tools });
 * await loop.start('Echo hi.');
 * console.log(scripted.prompts.length, scripted.violations); // 2 []
 */
export class ScriptedModel {
  readonly model: MockLanguageModelV4;
  readonly prompts: LanguageModelV4Prompt[] = [];
  readonly calls: LanguageModelV4CallOptions[] = [];
  readonly violations: PromptViolation[] = [];
  /** Prompts of compaction requests (answered without using the script). */
  readonly summaryPrompts: LanguageModelV4Prompt[] = [];
  readonly #steps: ScriptStep[];

  constructor(steps: ScriptStep[], name = 'scripted') {
    this.#steps = [...steps];
    this.model = new MockLanguageModelV4({
      provider: name,
      modelId: name,
      doStream: async (options) => this.#answer(options),
      // generateText (and ToolLoopAgent.generate) call doGenerate: the same answer, collected.
      doGenerate: async (options) => collect(await this.#answer(options)),
    });
  }

  /** Steps not yet used. */
  get remaining(): number {
    return this.#steps.length;
  }

  async #answer(options: LanguageModelV4CallOptions): Promise<LanguageModelV4StreamResult> {
    const system = options.prompt.find((message) => message.role === 'system');
    if (system?.role === 'system' && system.content.startsWith('You compact the history')) {
      this.summaryPrompts.push(options.prompt);
      const text = `Summary ${this.summaryPrompts.length}: the agent echoed things.`;
      return { stream: convertArrayToReadableStream(streamParts({ text })) };
    }
    const index = this.prompts.length;
    this.prompts.push(options.prompt);
    this.calls.push(options);
    for (const detail of pairingProblems(options.prompt)) {
      this.violations.push({ call: index, detail });
    }
    const step = this.#steps.shift();
    if (step === undefined) throw new Error(`the script has no step for call ${index + 1}`);
    if ('hang' in step) {
      return new Promise((_resolve, reject) => {
        const abort = () => reject(options.abortSignal?.reason ?? new Error('aborted'));
        if (options.abortSignal?.aborted) abort();
        options.abortSignal?.addEventListener('abort', abort, { once: true });
      });
    }
    if ('fail' in step) {
      if (step.fail === 'network') {
        throw new TypeError(step.message ?? 'fetch failed', {
          cause: Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:1'), {
            code: 'ECONNREFUSED',
          }),
        });
      }
      if (step.fail === 'http') throw httpError(step.status, step.message);
      return {
        stream: convertArrayToReadableStream<LanguageModelV4StreamPart>([
          { type: 'stream-start', warnings: [] },
          { type: 'text-start', id: 't' },
          { type: 'text-delta', id: 't', delta: step.text },
          { type: 'error', error: httpError(step.status) },
        ]),
      };
    }
    return { stream: convertArrayToReadableStream(streamParts(step)) };
  }
}

/**
 * An APICallError as a provider package throws it for an HTTP status.
 *
 * @example
 * const overloaded = httpError(529, 'Overloaded'); // isRetryable: true
 */
export function httpError(status: number, message?: string): APICallError {
  return new APICallError({
    message: message ?? `scripted HTTP ${status}`,
    url: 'http://127.0.0.1/scripted',
    requestBodyValues: {},
    statusCode: status,
    isRetryable: status === 429 || status >= 500,
  });
}

/** A scripted stream as one generate result: its texts, reasonings and calls, its finish. */
async function collect(
  result: LanguageModelV4StreamResult,
): Promise<LanguageModelV4GenerateResult> {
  const content: LanguageModelV4Content[] = [];
  let finish: Extract<LanguageModelV4StreamPart, { type: 'finish' }> | undefined;
  const reader = result.stream.getReader();
  while (true) {
    const { done, value } = await reader.read();
    if (done) break;
    const last = content.at(-1);
    switch (value.type) {
      case 'text-start':
      case 'reasoning-start':
        content.push({ type: value.type === 'text-start' ? 'text' : 'reasoning', text: '' });
        break;
      case 'text-delta':
      case 'reasoning-delta':
        if (last?.type === 'text' || last?.type === 'reasoning') last.text += value.delta;
        break;
      case 'reasoning-end':
        if (last?.type === 'reasoning' && value.providerMetadata !== undefined) {
          last.providerMetadata = value.providerMetadata;
        }
        break;
      case 'tool-call':
        content.push(value);
        break;
      case 'finish':
        finish = value;
        break;
      case 'error':
        throw value.error;
      default:
        break;
    }
  }
  if (finish === undefined) throw new Error('the scripted stream ended without its finish');
  return { content, finishReason: finish.finishReason, usage: finish.usage, warnings: [] };
}

function streamParts(step: Exclude<ScriptStep, { fail: string } | { hang: true }>) {
  const parts: LanguageModelV4StreamPart[] = [{ type: 'stream-start', warnings: [] }];
  if (step.reasoning !== undefined) {
    const metadata =
      step.reasoning.signature === undefined
        ? undefined
        : { scripted: { signature: step.reasoning.signature } };
    parts.push({ type: 'reasoning-start', id: 'r' });
    parts.push({ type: 'reasoning-delta', id: 'r', delta: step.reasoning.text });
    parts.push(
      metadata === undefined
        ? { type: 'reasoning-end', id: 'r' }
        : { type: 'reasoning-end', id: 'r', providerMetadata: metadata },
    );
  }
  if (step.text !== undefined) {
    parts.push({ type: 'text-start', id: 't' });
    for (const piece of step.text.match(/.{1,8}/gs) ?? []) {
      parts.push({ type: 'text-delta', id: 't', delta: piece });
    }
    parts.push({ type: 'text-end', id: 't' });
  }
  for (const call of step.calls ?? []) {
    parts.push({
      type: 'tool-call',
      toolCallId: call.id,
      toolName: call.name,
      input: call.rawInput ?? JSON.stringify(call.input),
    });
  }
  const calls = (step.calls ?? []).length > 0;
  parts.push({
    type: 'finish',
    finishReason: { unified: calls ? 'tool-calls' : 'stop', raw: calls ? 'tool_calls' : 'stop' },
    usage: {
      inputTokens: {
        total: step.usage?.input ?? 10,
        noCache: undefined,
        cacheRead: undefined,
        cacheWrite: undefined,
      },
      outputTokens: { total: step.usage?.output ?? 5, text: undefined, reasoning: undefined },
    },
  });
  return parts;
}

/**
 * The pairing rules of Anthropic, OpenAI Chat Completions and Responses, on an AI SDK prompt:
 * an assistant message's calls are all answered by the tool message right after it, each
 * exactly once; a tool message answers only calls of the assistant message right before it.
 *
 * @example
 * const scripted = new ScriptedModel([{ text: 'Hi.' }]);
 * const problems = pairingProblems(scripted.prompts[0] ?? []); // [] when every call is answered
 */
export function pairingProblems(prompt: LanguageModelV4Prompt): string[] {
  const problems: string[] = [];
  prompt.forEach((message, index) => {
    if (message.role === 'assistant') {
      const calls = message.content.flatMap((part) =>
        part.type === 'tool-call' ? [part.toolCallId] : [],
      );
      if (calls.length === 0) return;
      const next = prompt[index + 1];
      const answered =
        next?.role === 'tool'
          ? next.content.flatMap((part) => (part.type === 'tool-result' ? [part.toolCallId] : []))
          : [];
      for (const call of calls) {
        const count = answered.filter((id) => id === call).length;
        if (count !== 1) problems.push(`message ${index}: call ${call} answered ${count} times`);
      }
    }
    if (message.role === 'tool') {
      const previous = prompt[index - 1];
      const calls =
        previous?.role === 'assistant'
          ? previous.content.flatMap((part) => (part.type === 'tool-call' ? [part.toolCallId] : []))
          : [];
      for (const part of message.content) {
        if (part.type === 'tool-result' && !calls.includes(part.toolCallId)) {
          problems.push(`message ${index}: result ${part.toolCallId} has no call before it`);
        }
      }
    }
  });
  return problems;
}
