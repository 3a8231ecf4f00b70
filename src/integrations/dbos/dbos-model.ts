import type {
  LanguageModelV4,
  LanguageModelV4GenerateResult,
  LanguageModelV4StreamPart,
} from '@ai-sdk/provider';
import { type LanguageModel, wrapLanguageModel } from 'ai';
import { resolveBackend } from '../../loop/resolve-backend.ts';
import { TurnCollector } from '../../loop/turn-collector.ts';
import { collectGenerated } from '../ai-sdk/revivable-model.ts';
import { currentExecution } from './dbos-execution.ts';

/** What a model step checkpoints: the turn, as plain JSON. */
type CheckpointedTurn = Pick<
  LanguageModelV4GenerateResult,
  'content' | 'finishReason' | 'usage' | 'warnings'
>;

/**
 * An AI SDK model whose every call is a DBOS step (the pattern of DBOS's own AI SDK
 * middleware: on recovery a checkpointed call returns its stored turn, and the model is not
 * called again) that also records the call in our transcript: what the program added to the
 * conversation, then the model's turn — durable before the step's output is checkpointed, so
 * every checkpointed turn is in the transcript. `generateText`, `streamText` and
 * `ToolLoopAgent` take it as any model; a streamed call is run to its end inside the step
 * (a step checkpoints a whole output), so `streamText` receives the turn in one piece. Call it
 * inside `run.within(…)` of {@link DbosRun.open}.
 *
 * @example
 * import { openai } from '@ai-sdk/openai';
 * import { generateText } from 'ai';
 * import { dbosModel } from 'llm-agent-revival/dbos';
 * const model = dbosModel(openai('gpt-5-mini'));
 */
export function dbosModel(model: LanguageModel): LanguageModelV4 {
  return wrapLanguageModel({
    model: resolveBackend(model),
    middleware: {
      specificationVersion: 'v4',
      wrapGenerate: async ({ doGenerate, params }) => {
        const run = currentExecution('dbosModel');
        const turn = await run.step(async (): Promise<CheckpointedTurn> => {
          await run.recorder.recordPrompt(params.prompt);
          const result = await doGenerate();
          await run.recorder.recordTurn(collectGenerated(result));
          await run.recorder.session.barrier();
          return {
            content: result.content,
            finishReason: result.finishReason,
            usage: result.usage,
            warnings: result.warnings,
          };
        }, 'model');
        return turn;
      },
      wrapStream: async ({ doStream, params }) => {
        const run = currentExecution('dbosModel');
        const parts = await run.step(async (): Promise<LanguageModelV4StreamPart[]> => {
          await run.recorder.recordPrompt(params.prompt);
          const result = await doStream();
          const collector = new TurnCollector();
          const kept: LanguageModelV4StreamPart[] = [];
          for await (const part of result.stream) {
            collector.add(part);
            // Response metadata holds a Date and raw chunks the provider's own: not kept.
            if (part.type !== 'response-metadata' && part.type !== 'raw') kept.push(part);
          }
          const turn = collector.finish();
          if (!turn.ok) throw turn.error;
          await run.recorder.recordTurn(turn.content);
          await run.recorder.session.barrier();
          return kept;
        }, 'model');
        return {
          stream: new ReadableStream<LanguageModelV4StreamPart>({
            start(controller) {
              for (const part of parts) controller.enqueue(part);
              controller.close();
            },
          }),
        };
      },
    },
  });
}
