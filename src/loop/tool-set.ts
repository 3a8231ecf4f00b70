import type { ToolSet } from 'ai';
import { IDEMPOTENCIES, type Idempotency, type JsonValue } from '../transcript/records.ts';
import type { LoopTools, ToolDefinition, ToolIdempotency } from './types.ts';

// The tool types live with the loop's other types (types.ts), which name them in LoopOptions.
export type { LoopTools, ToolIdempotency, ToolSetByName } from './types.ts';

/**
 * The tools as {@link ToolDefinition}s: a list is returned as it is; each entry of an AI SDK
 * `ToolSet` becomes one named by its key, with the idempotency `idempotency` declares for it
 * (`side-effect` when it declares none, recorded as undeclared). What the loop cannot honour is refused with a
 * TypeError naming the tool, before anything is written: a provider-executed tool (its result
 * would never pass through the transcript), a tool with no `execute`, `needsApproval`,
 * `toModelOutput`, `contextSchema`, a description computed from a context. `execute` is called
 * with the call's id and the run's abort signal; reading `messages` from its options throws,
 * since the loop does not hand them to tools.
 *
 * @example
 * import { tool } from 'ai';
 * import { toolDefinitionsOf } from 'llm-agent-revival/loop';
 * import { z } from 'zod';
 * const [weather] = toolDefinitionsOf(
 *   { weather: tool({ inputSchema: z.object({ city: z.string() }), execute: async ({ city }) => city }) },
 *   { weather: 'read-only' },
 * );
 * // weather.name === 'weather', weather.idempotency === 'read-only'
 */
export function toolDefinitionsOf(
  tools: LoopTools,
  idempotency: ToolIdempotency = {},
): ToolDefinition<unknown>[] {
  if (Array.isArray(tools)) {
    if (Object.keys(idempotency).length > 0) {
      throw new TypeError(
        'Loop: `idempotency` is for a ToolSet; a ToolDefinition declares its own idempotency',
      );
    }
    return [...(tools as readonly ToolDefinition<unknown>[])];
  }
  if (typeof tools !== 'object' || tools === null) {
    throw new TypeError(
      'Loop: `tools` must be a ToolSet ({ name: tool(…) }) or a ToolDefinition[]',
    );
  }
  const set = tools as ToolSet;
  for (const name of Object.keys(idempotency)) {
    if (!(name in set))
      throw new TypeError(`Loop: \`idempotency\` names "${name}", which is not a tool`);
  }
  return Object.entries(set).map(([name, tool]) => {
    const definition = definitionOf(name, tool, idempotency[name] ?? 'side-effect');
    if (idempotency[name] === undefined) undeclared.add(definition);
    return definition;
  });
}

/** The definitions made of a `ToolSet` entry whose idempotency no one declared. */
const undeclared = new WeakSet<ToolDefinition<unknown>>();

/**
 * Whether `tool` was made by {@link toolDefinitionsOf} from a `ToolSet` entry whose idempotency
 * was not declared: its `side-effect` is assumed, and its dispatches say so
 * (`idempotencyDeclared: false`) for the plans people read.
 *
 * @example
 * import { tool } from 'ai';
 * import { z } from 'zod';
 * const [weather] = toolDefinitionsOf({
 *   weather: tool({ inputSchema: z.object({ city: z.string() }), execute: async ({ city }) => city }),
 * });
 * idempotencyUndeclared(weather); // true
 */
export function idempotencyUndeclared(tool: ToolDefinition<unknown>): boolean {
  return undeclared.has(tool);
}

function definitionOf(
  name: string,
  tool: ToolSet[string],
  idempotency: Idempotency,
): ToolDefinition<unknown> {
  const refuse = (what: string): never => {
    throw new TypeError(`Loop: tool "${name}" ${what}`);
  };
  if (typeof tool !== 'object' || tool === null) refuse('is not a tool() object');
  const candidate = tool as Record<string, unknown>;
  if (candidate.type === 'provider') {
    refuse('is executed by the provider: its result would never pass through the transcript');
  }
  if (typeof candidate.execute !== 'function') {
    refuse('has no execute: the Loop runs every tool itself, after recording the dispatch');
  }
  if (candidate.needsApproval !== undefined) {
    refuse('has needsApproval, which the Loop does not support: ask before calling run()');
  }
  if (candidate.toModelOutput !== undefined) {
    refuse('has toModelOutput, which the Loop does not support: return what the model reads');
  }
  if (candidate.contextSchema !== undefined) {
    refuse('has a contextSchema, which the Loop does not support: close over what it needs');
  }
  if (candidate.description !== undefined && typeof candidate.description !== 'string') {
    refuse('has a description computed from a context, which the Loop does not support');
  }
  if (!IDEMPOTENCIES.includes(idempotency)) {
    refuse(
      `has idempotency ${JSON.stringify(idempotency)}; it must be one of ${IDEMPOTENCIES.join(', ')}`,
    );
  }
  const execute = candidate.execute as (input: unknown, options: unknown) => unknown;
  return {
    name,
    description: (candidate.description as string | undefined) ?? '',
    inputSchema: tool.inputSchema as ToolDefinition<unknown>['inputSchema'],
    idempotency,
    async execute(input, context) {
      const options = {
        toolCallId: context.callId,
        abortSignal: context.signal,
        // The call's key, as the wrapped tools carry it: `toolIdempotencyKey(options)` reads it.
        idempotencyKey: context.idempotencyKey,
        context: undefined,
        get messages(): never {
          throw new TypeError(
            `tool "${name}": the Loop does not pass the conversation's messages to execute`,
          );
        },
      };
      return lastValue(await execute(input, options)) as Promise<JsonValue>;
    },
  };
}

/** A streaming tool's answer is the last value it yields, as the AI SDK's final result. */
async function lastValue(value: unknown): Promise<unknown> {
  if (typeof value !== 'object' || value === null || !(Symbol.asyncIterator in value)) return value;
  let last: unknown;
  for await (const item of value as AsyncIterable<unknown>) last = item;
  return last;
}
