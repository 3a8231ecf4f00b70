import type { Model, ModelRequest, ModelResponse, StreamEvent } from '@openai/agents';
import { currentRecorder } from '../ai-sdk/run-recorder.ts';
import { assistantTurnOf } from './items.ts';

/**
 * An OpenAI Agents `Model` whose every response is recorded in the current run's transcript
 * as one assistant turn before the runner sees it — so before any of its tools starts. A
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
      const response = await model.getResponse(request);
      await recorder.recordAssistant(assistantTurnOf(response.output));
      return response;
    },
    async *getStreamedResponse(request: ModelRequest): AsyncIterable<StreamEvent> {
      const recorder = currentRecorder('revivableAgentsModel');
      for await (const event of model.getStreamedResponse(request)) {
        if (event.type === 'response_done') {
          await recorder.recordAssistant(assistantTurnOf(event.response.output as never));
        }
        yield event;
      }
    },
  };
}
