import type { LanguageModel } from 'ai';
import type { LoopTools, ToolIdempotency } from '../loop/tool-set.ts';
import type { CompactionOptions, LoopMessage, LoopOptions, RunHandle } from '../loop/types.ts';

/**
 * Builds a loop from its options; the default is the `Loop` of `llm-agent-revival/loop`.
 *
 * @example
 * const createLoop: LoopFactory = (options) => new Loop({ ...options, maxTurns: 10 });
 */
export type LoopFactory = (options: LoopOptions) => { run(messages: LoopMessage[]): RunHandle };

/**
 * One agent type: what a run of it is made of. A registry of them
 * (`Record<string, AgentDefinition>`) is what a composer spawns from, and what an
 * `--agents MODULE` file exports as its default export.
 *
 * `model` is a model spec (`openai:gpt-5`, `anthropic:claude-sonnet-4-5`,
 * `openai-compatible:http://127.0.0.1:8080/v1#qwen3`), a ready AI SDK model, or an ordered list
 * of models tried in turn on transport failures (strings in the list are specs too).
 *
 * @example
 * const registry: AgentRegistry = {
 *   main: { description: 'Plans and delegates', model: 'anthropic:claude-sonnet-4-5',
 *           system: 'You plan, delegate to researchers and report.' },
 *   researcher: { description: 'Reads and summarises', model: 'openai:gpt-5-mini',
 *                 system: 'You research one question.', tools, canSpawn: false },
 * };
 */
export interface AgentDefinition {
  /** Shown to a parent model in `spawn_agent`'s description: when to use this type. */
  description: string;
  model: string | LanguageModel | LanguageModel[];
  system: string;
  /**
   * Typed tools go in as they are: `ToolDefinition<{ path: string }>` is a `ToolDefinition<unknown>`.
   * An AI SDK `ToolSet` (`{ weather: tool({ … }) }`) is taken too, with `idempotency` beside it.
   */
  tools?: LoopTools;
  /** For a `ToolSet`: each tool's idempotency by name (`side-effect` when not named). */
  idempotency?: ToolIdempotency;
  /** Stop after this many model turns (the loop's default when absent). */
  maxTurns?: number;
  compaction?: CompactionOptions;
  /** Whether runs of this type get `spawn_agent` and `task_wait` (default true, within the depth limit). */
  canSpawn?: boolean;
  /**
   * Builds this type's runs instead of a `Loop` (given the options a Loop would get): how an
   * AI SDK agent is made an agent type (`aiSdkAgentDefinition` of `llm-agent-revival/ai-sdk`).
   */
  createLoop?: LoopFactory;
}

/**
 * Agent types by name.
 *
 * @example
 * const registry: AgentRegistry = { main: { description: 'plans', model: 'openai:gpt-5', system: '…' } };
 */
export type AgentRegistry = Record<string, AgentDefinition>;

/**
 * Turns a model spec into a model; the default is `resolveModelSpec`.
 *
 * @example
 * const scripted = new ScriptedModel([{ text: 'Hi.' }]);
 * const resolveModel: ModelResolver = (spec) => (spec === 'scripted' ? scripted.model : resolveModelSpec(spec));
 */
export type ModelResolver = (spec: string) => LanguageModel;

/**
 * The backends of a definition, in the order a loop tries them. Throws what `resolve` throws
 * (a `ModelSpecError` from the default resolver).
 *
 * @example
 * const researcher: AgentDefinition = { description: 'Reads', model: ['openai:gpt-5', 'anthropic:claude-sonnet-4-5'], system: '…' };
 * const backends = backendsOf(researcher, (spec) => resolveModelSpec(spec)); // tried in this order
 */
export function backendsOf(definition: AgentDefinition, resolve: ModelResolver): LanguageModel[] {
  const models = Array.isArray(definition.model) ? definition.model : [definition.model];
  if (models.length === 0) throw new TypeError('an agent definition needs at least one model');
  return models.map((model) => (typeof model === 'string' ? resolve(model) : model));
}

/**
 * The model spec a transcript's `session-meta` records for a definition (informational): the
 * spec itself, or `provider:modelId` of a ready model.
 *
 * @example
 * modelSpecOf({ description: '', system: '', model: 'openai:gpt-5' }); // 'openai:gpt-5'
 */
export function modelSpecOf(definition: AgentDefinition): string {
  const models = Array.isArray(definition.model) ? definition.model : [definition.model];
  return models
    .map((model) => (typeof model === 'string' ? model : `${model.provider}:${model.modelId}`))
    .join(',');
}
