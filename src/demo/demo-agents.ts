/**
 * The demo's agent types: a lead that delegates two sections to writers and assembles a
 * report, and the writers. Both are driven by the scripted model ({@link demoScript}), work on
 * real files, and need no key and no network.
 *
 * This module is also a valid `--agents` module: its default export builds the registry for
 * a transcript, with the workspace in a `workspace/` folder beside the root transcript, so
 * `llm-agent revive DIR/lead.jsonl --agents src/demo/demo-agents.ts` carries on a demo run.
 *
 * @module
 */
import { dirname, join } from 'node:path';
import type { AgentRegistry } from '../subagents/agent-definition.ts';
import { DEMO_REPORT, LEAD_MARKER, WRITER_MARKER, demoScript } from './demo-script.ts';
import { createDemoTools, type HalfWriteHook } from './demo-tools.ts';
import { createPromptModel } from './prompt-model.ts';

/**
 * Options of {@link createDemoRegistry}.
 *
 * @example
 * const options: DemoRegistryOptions = {
 *   workspace: '/tmp/demo/workspace',
 *   haltWriting: 'section-2.md',
 * };
 */
export interface DemoRegistryOptions {
  /** The folder the tools read and write. */
  workspace: string;
  /** A workspace file whose first write stops half-way (see {@link createDemoTools}). */
  haltWriting?: string;
  onHalfWrite?: HalfWriteHook;
}

/**
 * The demo's model id, recorded in each transcript's `session-meta`.
 *
 * @example
 * const model = createPromptModel({ script: demoScript, modelId: DEMO_MODEL_ID });
 */
export const DEMO_MODEL_ID = 'demo-script';

/**
 * The registry `lead` + `writer`.
 *
 * @example
 * const registry = createDemoRegistry({ workspace: '/tmp/demo/workspace' });
 */
export function createDemoRegistry(options: DemoRegistryOptions): AgentRegistry {
  const model = createPromptModel({ script: demoScript, modelId: DEMO_MODEL_ID });
  const tools = createDemoTools(options);
  return {
    lead: {
      description: 'Plans a short report, delegates its sections to writers and assembles it.',
      model,
      system: `${LEAD_MARKER} Split the report into sections, give each section to a writer with spawn_agent, wait for them with task_wait, then read their files and assemble ${DEMO_REPORT}.`,
      tools,
    },
    writer: {
      description: 'Writes one section of a report into one file.',
      model,
      system: `${WRITER_MARKER} Write exactly the file you are asked for. If you are told a call was interrupted, check the file before doing the work again.`,
      tools,
      canSpawn: false,
    },
  };
}

/**
 * What an `--agents` module's default export may be given when it is a function.
 *
 * @example
 * const registry = demoAgents({ transcript: '/tmp/demo/lead.jsonl', cwd: '/tmp/demo', env: {} });
 */
export interface AgentsContext {
  /** The root transcript the command works on. */
  transcript: string;
  cwd: string;
  env: Record<string, string | undefined>;
}

/**
 * The `--agents` entry point: the demo registry, working in `workspace/` beside the root
 * transcript.
 *
 * @example
 * // llm-agent revive /tmp/demo/lead.jsonl --agents src/demo/demo-agents.ts --yes
 */
export default function demoAgents(context: AgentsContext): AgentRegistry {
  return createDemoRegistry({ workspace: join(dirname(context.transcript), 'workspace') });
}
