import { appendFileSync } from 'node:fs';
import { z } from 'zod';
import { crashRegistry, newWorld } from '../crashtest/agents.ts';
import { createPromptModel } from '../src/demo/prompt-model.ts';
import { toolDefinitionsOf } from '../src/loop/tool-set.ts';
import type { ToolDefinition } from '../src/loop/types.ts';
import type { AgentRegistry } from '../src/subagents/agent-definition.ts';

/*
 * The `--agents` module the attacks give the CLI: the crash tests' agents (`main`, `lead`,
 * `worker`; the side-effect tool `effect`), each execution of `effect` appended as one JSON
 * line to the ledger file named by ATTACK_LEDGER (the world outside, which survives every
 * process), and — when ATTACK_HANG names a step — that step's `effect` never returns once it
 * has been logged (a tool still running when its process is killed). `hostile` is a model
 * whose every string is an attack on the terminal (ATTACK_HOSTILE_JSON holds the payload as a JSON string: an environment cannot hold NUL).
 */

const NEVER = new Promise<never>(() => {
  setInterval(() => undefined, 60_000);
});

export default (context: { env: Record<string, string | undefined> }): AgentRegistry => {
  const ledger = context.env.ATTACK_LEDGER;
  const hang = context.env.ATTACK_HANG;
  const world = newWorld();
  world.log = (execution) => {
    if (ledger !== undefined)
      appendFileSync(ledger, `${JSON.stringify({ ...execution, pid: process.pid })}\n`);
  };
  const registry = crashRegistry(world);
  for (const definition of Object.values(registry)) {
    definition.tools = toolDefinitionsOf(definition.tools ?? []).map((tool) => {
      if (tool.name !== 'effect') return tool;
      const execute = tool.execute;
      return {
        ...tool,
        execute: async (input: never, toolContext: never) => {
          const output = await execute(input, toolContext);
          if (hang !== undefined && (input as { what?: string }).what === hang) await NEVER;
          return output;
        },
      } as ToolDefinition<never>;
    });
  }
  const hostile = context.env.ATTACK_HOSTILE_JSON;
  const payload = hostile === undefined ? '\u001b[31mred' : (JSON.parse(hostile) as string);
  const echo: ToolDefinition<{ text: string }> = {
    name: 'echo',
    description: 'Echoes its input',
    inputSchema: z.object({ text: z.string() }),
    idempotency: 'read-only',
    execute: async ({ text }) => `echo ${text}`,
  };
  registry.hostile = {
    description: `hostile ${payload}`,
    system: 'hostile',
    canSpawn: false,
    tools: [echo as unknown as ToolDefinition<never>],
    model: createPromptModel({
      script: (prompt) => {
        const results = prompt.turns.flatMap((turn) => turn.toolResults);
        if (results.length === 0) {
          return {
            text: `thinking ${payload}`,
            toolCalls: [
              { toolName: 'echo', input: { text: payload } },
              { toolName: `no_such_tool${payload}`, input: { text: payload } },
            ],
          };
        }
        return { text: `final ${payload}` };
      },
    }),
  };
  return registry;
};
