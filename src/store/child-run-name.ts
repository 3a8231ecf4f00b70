import { isAgentId } from '../transcript/records.ts';

/**
 * The run name of child `agentId` of run `parent` in a store: `<parent>.agents/<agentId>`, the
 * file layout's path without `.jsonl`, so an exported tree lays out as a folder tree would.
 *
 * @example
 * childRunName('main', 'researcher-call_1'); // 'main.agents/researcher-call_1'
 */
export function childRunName(parent: string, agentId: string): string {
  if (!isAgentId(agentId)) throw new TypeError(`unsafe agent id ${JSON.stringify(agentId)}`);
  return `${parent}.agents/${agentId}`;
}

/**
 * Whether `run` names a run as {@link childRunName} builds them: an agent id, or a run name
 * followed by `.agents/` and an agent id — so that every segment is safe as a file name and the
 * name lays out as a folder tree without leaving it.
 *
 * @example
 * isRunName('main.agents/researcher-call_1'); // true
 * isRunName('../main'); // false
 */
export function isRunName(run: string): boolean {
  return run
    .split('.agents/')
    .every((segment) => isAgentId(segment) && !segment.endsWith('.agents'));
}

/**
 * The parent run of a child run named by {@link childRunName}, or null for a root.
 *
 * @example
 * parentRunName('main.agents/researcher-call_1'); // 'main'
 */
export function parentRunName(run: string): string | null {
  const at = run.lastIndexOf('.agents/');
  return at < 0 ? null : run.slice(0, at);
}
