/**
 * The demo's agents, rigged to stop in the middle of one tool call: the first write of the
 * file named by `LLM_AGENT_DEMO_HALT_AT` (default `section-2.md`) puts half the file on disk,
 * tells the parent process (over IPC when there is a channel, on stderr otherwise) and then
 * waits, for ever, for a kill that the parent sends. It exists so that the demo can SIGKILL a
 * run while a call is truly in flight; nothing else should use it.
 *
 * @module
 */
import { dirname, join } from 'node:path';
import type { AgentRegistry } from '../subagents/agent-definition.ts';
import { type AgentsContext, createDemoRegistry } from './demo-agents.ts';

/**
 * What the halted process tells its parent.
 *
 * @example
 * child.on('message', (message: HalfWrittenMessage) => {
 *   if (message.type === 'half-written') child.kill('SIGKILL'); // the write is truly in flight
 * });
 */
export interface HalfWrittenMessage {
  type: 'half-written';
  path: string;
  bytesWritten: number;
  bytesTotal: number;
  pid: number;
}

/**
 * The `--agents` entry point of the process the demo kills.
 *
 * @example
 * // LLM_AGENT_DEMO_HALT_AT=section-2.md llm-agent run --agents src/demo/halting-demo-agents.ts …
 */
export default function haltingDemoAgents(context: AgentsContext): AgentRegistry {
  return createDemoRegistry({
    workspace: join(dirname(context.transcript), 'workspace'),
    haltWriting: context.env.LLM_AGENT_DEMO_HALT_AT || 'section-2.md',
    onHalfWrite: async (write) => {
      const message: HalfWrittenMessage = { type: 'half-written', ...write, pid: process.pid };
      if (process.send !== undefined) process.send(message);
      else process.stderr.write(`${JSON.stringify(message)}\n`);
      // Keep the process alive until the kill arrives; the call never finishes here.
      setInterval(() => undefined, 60_000);
      await new Promise<never>(() => undefined);
    },
  });
}
