/**
 * The demo's agents, rigged to stop in the middle of one tool call: the first write of the
 * file named by `LLM_AGENT_DEMO_HALT_AT` (default `section-2.md`) puts half the file on disk,
 * tells the parent process (over IPC when there is a channel) and then waits, for ever, for a
 * kill that the parent sends. It exists so that the demo can SIGKILL a run while a call is
 * truly in flight; nothing else should use it.
 *
 * A person who pastes the demo's Step 1 command runs it with no parent: the halt is said on
 * stderr in words, with the kill that plays the crash. Only a fresh run halts: the tree it
 * leaves, revived with this same module (as the hint after Ctrl-C says), runs to its end.
 *
 * @module
 */
import { access } from 'node:fs/promises';
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
export default async function haltingDemoAgents(context: AgentsContext): Promise<AgentRegistry> {
  const workspace = join(dirname(context.transcript), 'workspace');
  // `run` loads the module before it creates the transcript; `revive` after it exists.
  const fresh = await access(context.transcript).then(
    () => false,
    () => true,
  );
  if (!fresh) return createDemoRegistry({ workspace });
  return createDemoRegistry({
    workspace,
    haltWriting: context.env.LLM_AGENT_DEMO_HALT_AT || 'section-2.md',
    onHalfWrite: async (write) => {
      const message: HalfWrittenMessage = { type: 'half-written', ...write, pid: process.pid };
      if (process.send !== undefined) process.send(message);
      else process.stderr.write(haltedText(message));
      // Keep the process alive until the kill arrives; the call never finishes here.
      setInterval(() => undefined, 60_000);
      await new Promise<never>(() => undefined);
    },
  });
}

/** The halt in words, for a person running this module by hand: what the demo does next. */
function haltedText(message: HalfWrittenMessage): string {
  return `halted on purpose: write_file ${message.path} has ${message.bytesWritten} of ${message.bytesTotal} bytes on disk, and this process waits here for the kill the demo sends. Play the crash from another terminal: kill -KILL ${message.pid} (or press Ctrl-C twice)\n`;
}
