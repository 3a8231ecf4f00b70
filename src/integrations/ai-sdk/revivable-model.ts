import type {
  LanguageModelV4,
  LanguageModelV4Content,
  LanguageModelV4GenerateResult,
  LanguageModelV4StreamPart,
} from '@ai-sdk/provider';
import { type LanguageModel, wrapLanguageModel } from 'ai';
import { resolveBackend } from '../../loop/resolve-backend.ts';
import { TurnCollector } from '../../loop/turn-collector.ts';
import { currentRecorder, type RunRecorder } from './run-recorder.ts';

/**
 * An AI SDK model whose every call is recorded in the current revivable run's transcript,
 * through a `wrapLanguageModel` middleware: before the call, what the program added to the
 * conversation (a user turn, the SDK's answer to a call it refused); after it, the model's
 * turn — written before any of its tools may start (a streamed turn's tool calls are held back
 * until the turn is recorded). `generateText`, `streamText` and `ToolLoopAgent` take it as they
 * take any model. Calling it outside `run.within(…)` throws a TypeError.
 *
 * @example
 * import { openai } from '@ai-sdk/openai';
 * import { ToolLoopAgent } from 'ai';
 * import { revivableModel } from 'llm-agent-revival/ai-sdk';
 * const agent = new ToolLoopAgent({ model: revivableModel(openai('gpt-5-mini')) });
 */
export function revivableModel(model: LanguageModel): LanguageModelV4 {
  return wrapLanguageModel({
    model: resolveBackend(model),
    middleware: {
      specificationVersion: 'v4',
      wrapGenerate: async ({ doGenerate, params }) => {
        const recorder = currentRecorder('revivableModel');
        await recorder.recordPrompt(params.prompt);
        const result = await doGenerate();
        await recorder.recordTurn(collectGenerated(result));
        return result;
      },
      wrapStream: async ({ doStream, params }) => {
        const recorder = currentRecorder('revivableModel');
        await recorder.recordPrompt(params.prompt);
        const result = await doStream();
        return { ...result, stream: result.stream.pipeThrough(recordingStream(recorder)) };
      },
    },
  });
}

/**
 * Passes the stream through, except that tool calls and the finish wait until the whole turn
 * is recorded: `streamText` starts a tool as soon as its call arrives, and a dispatch must
 * never precede the turn that asked for it. A stream that fails or ends early records nothing.
 */
function recordingStream(
  recorder: RunRecorder,
): TransformStream<LanguageModelV4StreamPart, LanguageModelV4StreamPart> {
  const collector = new TurnCollector();
  const held: LanguageModelV4StreamPart[] = [];
  return new TransformStream({
    async transform(part, controller) {
      collector.add(part);
      if (part.type === 'tool-call' || part.type === 'finish') {
        held.push(part);
        return;
      }
      controller.enqueue(part);
    },
    async flush(controller) {
      const turn = collector.finish();
      if (turn.ok) await recorder.recordTurn(turn.content);
      for (const part of held) controller.enqueue(part);
    },
  });
}

/**
 * A generated result's content as the turn collector reads a stream of it (for the other
 * integrations of this package; not exported by it).
 *
 * @example
 * await recorder.recordTurn(collectGenerated(result));
 */
export function collectGenerated(result: LanguageModelV4GenerateResult) {
  const collector = new TurnCollector();
  result.content.forEach((part: LanguageModelV4Content, index) => {
    const id = String(index);
    if (part.type === 'text' || part.type === 'reasoning') {
      const metadata =
        part.providerMetadata === undefined ? {} : { providerMetadata: part.providerMetadata };
      collector.add({ type: `${part.type}-start`, id });
      collector.add({ type: `${part.type}-delta`, id, delta: part.text });
      collector.add({ type: `${part.type}-end`, id, ...metadata });
    } else if (part.type === 'tool-call') {
      collector.add(part);
    }
  });
  collector.add({ type: 'finish', finishReason: result.finishReason, usage: result.usage });
  const turn = collector.finish();
  return turn.ok ? turn.content : [];
}
