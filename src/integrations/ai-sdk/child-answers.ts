import { readSessionMeta } from '../../subagents/child-transcript.ts';
import { outcomeFromTranscript } from '../../subagents/outcome-from-transcript.ts';
import { filePlaces } from '../../subagents/run-places.ts';
import type { TreeClaim } from '../../transcript/tree-claim.ts';
import type { GeneratingAgent } from './agent-definition.ts';

/**
 * A child run's answer to its parent's call: its final text, or why it has none.
 *
 * @example
 * const answer: ChildAnswer = { text: 'Paris is sunny.', isError: false };
 */
export interface ChildAnswer {
  text: string;
  isError: boolean;
}

/**
 * Runs `agent` as the child run at `child.path` to its end (creating or reviving it).
 *
 * @example
 * const run: ChildRunner = async () => ({ text: 'done', isError: false });
 */
export type ChildRunner = (
  agent: GeneratingAgent,
  child: { path: string; agentId: string; agentType: string; treeClaim?: TreeClaim },
) => Promise<ChildAnswer>;

/** The agents subagent tools run, by agent type, and how they run one: a revival runs them on. */
const subagents = new Map<string, { agent: GeneratingAgent; run: ChildRunner }>();

/**
 * Note that children of `agentType` are runs of `agent`, so that a revival can carry one on.
 * The same type for another agent is refused: a revival must know which agent runs it.
 *
 * @example
 * registerSubagent('researcher', researcher, runChild);
 */
export function registerSubagent(
  agentType: string,
  agent: GeneratingAgent,
  run: ChildRunner,
): void {
  const known = subagents.get(agentType);
  if (known !== undefined && known.agent !== agent) {
    throw new TypeError(
      `revivableSubagent: agent type "${agentType}" is already another agent's: a revival must know which agent runs it`,
    );
  }
  subagents.set(agentType, { agent, run });
}

/**
 * The answer to a parent's join a crash left open, from its child at `path`: a finished
 * child's answer; a child that did not finish, revived under its own id and run to its end by
 * the agent its subagent tool named; else a failure saying why. Never throws.
 *
 * @example
 * const answer = await answerFromChild('runs/main.agents/researcher-call_1.jsonl', 'researcher-call_1');
 */
export async function answerFromChild(
  path: string,
  agentId: string,
  treeClaim?: TreeClaim,
): Promise<ChildAnswer> {
  const before = await outcomeFromTranscript(filePlaces({}), agentId, path);
  if (before.status === 'finished') return { text: before.answer, isError: false };
  const meta = await readSessionMeta(path);
  const known = meta === null ? undefined : subagents.get(meta.agentType);
  if (meta === null || known === undefined) {
    const why =
      meta === null
        ? before.detail
        : `no subagent tool of type "${meta.agentType}" in this process`;
    return { text: `child ${agentId} was not carried on: ${why}`, isError: true };
  }
  return known.run(known.agent, {
    path,
    agentId,
    agentType: meta.agentType,
    ...(treeClaim === undefined ? {} : { treeClaim }),
  });
}
