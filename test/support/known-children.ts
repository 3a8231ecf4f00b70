import { BACKGROUND_FRAME } from '../../src/subagents/background-frame.ts';

/*
 * What a scripted parent model reads off its prompt to know its children, shared by the
 * crash harness's agents (crashtest/agents.ts) and the subagents' crash test tree.
 */

/**
 * The ids of the children a parent knows of, first seen first: spawn results naming an id,
 * and the running-again notices a revival adds for children started before the interruption.
 *
 * @example
 * const waiting = knownChildIds(spawnResults, turns).filter((id) => !heard.has(id));
 */
export function knownChildIds(
  spawnResults: readonly { output: unknown; isError: boolean }[],
  turns: readonly { role: string; text: string }[],
): string[] {
  const ids = spawnResults.flatMap((result) => {
    const output = result.output as { agentId?: unknown } | null;
    return !result.isError && typeof output?.agentId === 'string' ? [output.agentId] : [];
  });
  for (const turn of turns) {
    if (turn.role !== 'user' || !turn.text.startsWith(BACKGROUND_FRAME)) continue;
    const notice = /did start a child before the interruption: agent ([A-Za-z0-9._-]+) /.exec(
      turn.text,
    );
    if (notice?.[1] !== undefined) ids.push(notice[1]);
  }
  return [...new Set(ids)];
}
