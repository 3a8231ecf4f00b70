import type { Model, ModelRequest, ModelResponse, StreamEvent } from '@openai/agents';
import { currentRecorder } from '../ai-sdk/run-recorder.ts';
import { assistantTurnOf } from './items.ts';
import { recordAgentsInput } from './record-agents-input.ts';

/**
 * An OpenAI Agents `Model` whose every response is recorded in the current run's transcript
 * as one assistant turn before the runner sees it — so before any of its tools starts — and
 * what it is sent that the transcript does not hold yet (the run's input: the runner saves it
 * to the session only when the run ends) recorded before it is called. A
 * streamed response is recorded when its `response_done` event arrives, before that event is
 * passed on. Call the run inside `TranscriptSession.within`.
 *
 * @example
 * import { Agent, OpenAIProvider } from '@openai/agents';
 * import { revivableAgentsModel } from 'llm-agent-revival/openai-agents';
 * const agent = new Agent({ name: 'mailer', model: revivableAgentsModel(await new OpenAIProvider().getModel('gpt-5-mini')) });
 */
export function revivableAgentsModel(model: Model): Model {
  return {
    async getResponse(request: ModelRequest): Promise<ModelResponse> {
      const recorder = currentRecorder('revivableAgentsModel');
      await recordAgentsInput(recorder, request.input);
      const response = await model.getResponse(request);
      await recorder.recordAssistant(assistantTurnOf(response.output));
      return response;
    },
    async *getStreamedResponse(request: ModelRequest): AsyncIterable<StreamEvent> {
      const recorder = currentRecorder('revivableAgentsModel');
      await recordAgentsInput(recorder, request.input);
      for await (const event of model.getStreamedResponse(request)) {
        if (event.type === 'response_done') {
          await recorder.recordAssistant(assistantTurnOf(event.response.output as never));
        }
        yield event;
      }
    },
  };
}
