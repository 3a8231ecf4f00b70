import { type Tool, tool } from 'ai';
import { z } from 'zod';
import { agentIdForSpawn } from '../../subagents/agent-id.ts';
import { childTranscriptPath, parentLinkPath } from '../../subagents/child-layout.ts';
import type { TreeClaim } from '../../transcript/tree-claim.ts';
import type { GeneratingAgent } from './agent-definition.ts';
import { type ChildAnswer, registerSubagent } from './child-answers.ts';
import { RevivableRun } from './revivable-run.ts';
import { currentRecorder } from './run-recorder.ts';

/**
 * An AI SDK tool that hands a task to another AI SDK agent (a `ToolLoopAgent` built with
 * {@link revivableModel} and {@link revivableTools}) as a child run, with the child semantics
 * of our own subagents: the child has its own transcript under the parent's
 * (`X.agents/<agentType>-<callId>.jsonl`, its `session-meta` naming the parent and the call),
 * the parent's dispatch is a join on it (`joins: [childId]`), and the call is answered with the
 * child's final text. After a crash, opening the parent's {@link RevivableRun} again answers
 * the pending call from the child: a finished child's answer; a child that died is revived under
 * its own id (its calls in flight answered as interrupted) and run on to its end with the agent
 * given here; a child whose agent type this process has no subagent tool for is answered as
 * failed. Put it in the parent's tools beside (not inside) `revivableTools`.
 *
 * @example
 * import { openai } from '@ai-sdk/openai';
 * import { ToolLoopAgent } from 'ai';
 * import { revivableModel, revivableSubagent, revivableTools } from 'llm-agent-revival/ai-sdk';
 * const researcher = new ToolLoopAgent({ model: revivableModel(openai('gpt-5-mini')), tools: revivableTools({}) });
 * const main = new ToolLoopAgent({
 *   model: revivableModel(openai('gpt-5-mini')),
 *   tools: { research: revivableSubagent(researcher, { agentType: 'researcher', description: 'Research a question' }) },
 * });
 */
export function revivableSubagent(
  agent: GeneratingAgent,
  options: { agentType: string; description: string },
): Tool<{ task: string }, string> {
  const { agentType } = options;
  registerSubagent(agentType, agent, runChild);
  return tool({
    description: options.description,
    inputSchema: z.object({ task: z.string().describe('What the child agent is to do') }),
    execute: async ({ task }, { toolCallId }) => {
      const recorder = currentRecorder(`subagent "${agentType}"`);
      const parent = recorder.session;
      const childId = agentIdForSpawn({ agentType, callId: toolCallId, parentAgentId: '' });
      const call = await recorder.dispatchJoin(toolCallId, [childId]);
      const path = childTranscriptPath(parent.path, childId);
      const outcome = await runChild(agent, {
        path,
        agentId: childId,
        agentType,
        parent: { transcript: parentLinkPath(path, parent.path), callId: toolCallId },
        task,
      });
      await recorder.settle(call, outcome.text, outcome.isError);
      if (outcome.isError) throw new Error(outcome.text);
      return outcome.text;
    },
  });
}

/**
 * Open the child's run (create it, or revive it) and run `agent` in it to its end. Never
 * throws: a child that cannot be opened or fails is an answer saying so.
 */
async function runChild(
  agent: GeneratingAgent,
  child: {
    path: string;
    agentId: string;
    agentType: string;
    parent?: { transcript: string; callId: string };
    task?: string;
    treeClaim?: TreeClaim;
  },
): Promise<ChildAnswer> {
  const opened = await RevivableRun.open({
    path: child.path,
    agentId: child.agentId,
    agentType: child.agentType,
    ...(child.parent === undefined ? {} : { parent: child.parent }),
    ...(child.treeClaim === undefined ? {} : { treeClaim: child.treeClaim }),
  });
  if (!opened.ok) {
    return { text: `child ${child.agentId} could not be run: ${opened.detail}`, isError: true };
  }
  const { run } = opened;
  try {
    const messages =
      run.messages.length > 0 || child.task === undefined
        ? run.messages
        : [{ role: 'user' as const, content: child.task }];
    const result = await run.within(() => agent.generate({ messages }));
    return { text: result.text, isError: false };
  } catch (error) {
    return {
      text: `child ${child.agentId} failed: ${error instanceof Error ? error.message : String(error)}`,
      isError: true,
    };
  } finally {
    await run.close();
  }
}
