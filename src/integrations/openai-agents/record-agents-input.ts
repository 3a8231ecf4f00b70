import type { AgentInputItem } from '@openai/agents';
import type { RunRecorder } from '../ai-sdk/run-recorder.ts';
import { kindOf, resultText, textOfInput } from './items.ts';

/**
 * Record what a model is about to read that the transcript does not hold yet, in the Loop's
 * order (before the model call): the results of the last turn's calls that the runner gave
 * itself, and the user and system turns after the last model output beyond those recorded.
 * OpenAI Agents saves a run's input to its session only when the run ends: without this, a run
 * killed in its first turn would be revived without the task it was given.
 *
 * @example
 * await recordAgentsInput(recorder, request.input);
 */
export async function recordAgentsInput(
  recorder: RunRecorder,
  input: string | readonly AgentInputItem[],
): Promise<void> {
  const items: readonly AgentInputItem[] =
    typeof input === 'string' ? [{ type: 'message', role: 'user', content: input }] : input;
  const tail = items.slice(items.findLastIndex((item) => kindOf(item) === 'output') + 1);
  for (const item of tail) {
    if (kindOf(item) !== 'result') continue;
    const callId = (item as { callId: string }).callId;
    await recorder.recordUnrunAnswer(callId, resultText(item), false);
  }
  const turns = tail.filter((item) => kindOf(item) === 'user' || kindOf(item) === 'system');
  const recorded = recorder.messages;
  const recordedTurns = recorded
    .slice(recorded.findLastIndex((message) => message.role === 'assistant') + 1)
    .filter((message) => message.role === 'user' || message.role === 'system').length;
  for (const item of turns.slice(recordedTurns)) {
    await recorder.recordUserAhead({
      role: kindOf(item) === 'system' ? 'system' : 'user',
      content: [{ type: 'text', text: textOfInput(item) }],
    });
  }
}
