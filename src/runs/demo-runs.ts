/**
 * Which runs are the demo's: their agents are built in, so they are revived without
 * `--agents`. Apart from the revive code (execute-plan.ts) so that `status`, which says so in
 * its hint, does not load the loop and the AI SDK to find out.
 *
 * @module
 */
import { readSessionMeta } from '../subagents/child-transcript.ts';
import type { PlannedRevival } from './tree-revival-plan.ts';

/**
 * The model spec the demo's transcripts record: such runs can be revived without `--agents`.
 *
 * @example
 * const isDemoRun = (await readSessionMeta(path))?.model === DEMO_MODEL_SPEC;
 */
export const DEMO_MODEL_SPEC = 'llm-agent-scripted:demo-script';

/**
 * True when every planned revival is a run of the demo, whose agents are built in: such runs
 * are revived without `--agents`.
 *
 * @example
 * const needsModule = !(await allDemoRuns(planTreeRevival(roots).revivals));
 */
export async function allDemoRuns(revivals: PlannedRevival[]): Promise<boolean> {
  for (const revival of revivals) {
    const meta = await readSessionMeta(revival.node.path);
    if (meta?.model !== DEMO_MODEL_SPEC) return false;
  }
  return true;
}
