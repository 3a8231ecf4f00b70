import { runAiSdkProgram } from './ai-sdk-program.ts';
import { runOpenAiAgentsProgram } from './openai-agents-program.ts';

/**
 * The wrapped programs the wrapper parts kill, by part name: an AI SDK ToolLoopAgent and an
 * OpenAI Agents JS run, the same steps and tools in each. Each runs (or revives and carries on)
 * its program on a transcript, logging tool starts and the pairing problems of what its model
 * was sent.
 *
 * @example
 * const text = await WRAPPER_PROGRAMS['openai-agents']('runs/main.jsonl', 'runs/executions.log', []);
 */
export const WRAPPER_PROGRAMS = {
  'ai-sdk': runAiSdkProgram,
  'openai-agents': runOpenAiAgentsProgram,
} as const;

/**
 * A part's name.
 *
 * @example
 * const program: WrapperProgram = 'ai-sdk';
 */
export type WrapperProgram = keyof typeof WRAPPER_PROGRAMS;
