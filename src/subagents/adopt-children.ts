import type { Message } from '../transcript/records.ts';
import type { AgentIdFactory } from './agent-id.ts';
import type { ChildOutcome } from './child-outcome.ts';
import type { Family } from './family.ts';
import { backgroundDelivery, runningAgainNotice } from './join-output.ts';
import { unheardChildren } from './spawned-children.ts';

/**
 * Before a revived parent runs again, make sure it hears about every child it started and has
 * not heard the end of — the crash may have lost a `spawn_agent` result (the call is answered
 * as interrupted, so the parent does not know the child's id) or a background delivery that
 * was queued but never written. For each `spawn_agent` call in the conversation whose child
 * exists, is not named by a pending join (the join answers it) and whose outcome the
 * conversation does not already hold:
 * - running again (taken back before the parent): a notice naming it, when its id was lost;
 *   its end is delivered like any child's;
 * - ended: its answer or failure, delivered at the parent's first safe point.
 * A call whose child was never created (its transcript is missing) needs nothing.
 *
 * @example
 * const family = new Family(path);
 * const outcomeOf = (agentId: string) => outcomeFromTranscript(filePlaces({}), agentId, childTranscriptPath(path, agentId));
 * const childOf = (agentId: string) => childTranscriptPath(path, agentId);
 * await adoptChildren({ family, parentAgentId: 'main', messages, pendingJoins: [], ids: agentIdForSpawn, childOf, outcomeOf });
 */
export async function adoptChildren(options: {
  family: Family;
  parentAgentId: string;
  messages: readonly Message[];
  /** Agent ids named by the parent's open joins. */
  pendingJoins: readonly string[];
  ids: AgentIdFactory;
  /** Where child `agentId` of this parent lives (its transcript's path, or its run name). */
  childOf: (agentId: string) => string;
  /** The outcome of a child this process does not run, from its transcript. */
  outcomeOf: (agentId: string) => Promise<ChildOutcome>;
}): Promise<void> {
  const { family } = options;
  for (const { child: spawned, idKnown } of unheardChildren(options)) {
    const agentId = spawned.agentId;
    const child = { ...spawned, sessionPath: options.childOf(agentId) };
    const tracked = family.child(agentId);
    if (tracked !== undefined) {
      // A child taken back before its parent: its end is delivered when it comes (or was
      // queued already); the parent only needs its id if the crash lost it.
      if (tracked.outcome === null && !idKnown)
        family.deliver(agentId, 'notice', runningAgainNotice(child));
      continue;
    }
    const outcome = await options.outcomeOf(agentId);
    if (outcome.status === 'failed' && outcome.reason === 'missing') continue;
    family.deliver(agentId, 'outcome', backgroundDelivery(child, outcome));
  }
}
