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
