/**
 * `llm-agent-revival/ai-sdk`: an AI SDK program — `ToolLoopAgent`, `generateText`,
 * `streamText` — made revivable by wrapping its model and tools, not rewriting it.
 *
 * @example
 * import { openai } from '@ai-sdk/openai';
 * import { ToolLoopAgent } from 'ai';
 * import { RevivableRun, revivableModel, revivableTools } from 'llm-agent-revival/ai-sdk';
 * const agent = new ToolLoopAgent({ model: revivableModel(openai('gpt-5-mini')), tools: revivableTools({}) });
 * const opened = await RevivableRun.open({ path: 'runs/main.jsonl' });
 * if (opened.ok) {
 *   await opened.run.within(() => agent.generate({ prompt: 'Hello' }));
 *   await opened.run.close();
 * }
 *
 * @module
 */
export { NOT_STARTED_MESSAGE } from './run-recorder.ts';
export { RevivableRun, type RevivableRunOptions, type RunNotOpened } from './revivable-run.ts';
export { revivableModel } from './revivable-model.ts';
export { revivableTools } from './revivable-tools.ts';
export { toolIdempotencyKey } from './call-idempotency-key.ts';
export {
  type AiSdkProgram,
  aiSdkAgentDefinition,
  type GeneratingAgent,
} from './agent-definition.ts';
export { answerInterruptedToolParts } from './answer-interrupted-tool-parts.ts';
export { RevivableAgent } from './revivable-agent.ts';
export { revivableSubagent } from './revivable-subagent.ts';
