/**
 * `llm-agent-revival/openai-agents`: an OpenAI Agents JS run recorded in one of our
 * transcripts and revivable — a `Session` over the transcript, the model and the function
 * tools wrapped with the write-ahead rule.
 *
 * @example
 * import { Agent, OpenAIProvider, run } from '@openai/agents';
 * import { TranscriptSession, revivableAgentsModel, revivableFunctionTools } from 'llm-agent-revival/openai-agents';
 * const agent = new Agent({ name: 'mailer', model: revivableAgentsModel(await new OpenAIProvider().getModel('gpt-5-mini')), tools: revivableFunctionTools([]) });
 * const opened = await TranscriptSession.open({ path: 'runs/mailer.jsonl' });
 * if (opened.ok) {
 *   const { session } = opened;
 *   await session.within(() => run(agent, session.revived ? [] : 'Hello', { session }));
 *   await session.close();
 * }
 *
 * @module
 */
export { revivableAgentsModel } from './revivable-agents-model.ts';
export { revivableFunctionTools } from './revivable-function-tools.ts';
export { functionToolIdempotencyKey } from './function-tool-idempotency-key.ts';
export { TranscriptSession } from './transcript-session.ts';
export { openaiAgentsDefinition } from './openai-agents-definition.ts';
